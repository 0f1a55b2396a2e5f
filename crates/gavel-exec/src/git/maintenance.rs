//! Whether git's automatic maintenance after a commit would do anything, decided in-process.
//!
//! Every `git commit` ends by starting `git maintenance run --auto`, a second process that, with
//! git's defaults, runs `gc` only when the repository has too many loose objects or packs, and
//! otherwise exits at once: a couple of milliseconds of process start for nothing, in a run that
//! is otherwise one git process. gavel makes git's own check first, the way git makes it (the
//! loose objects of one of the 256 object folders, `objects/17`, against `gc.auto` / 256, and the
//! packs against `gc.autoPackLimit`), and passes `-c maintenance.auto=false` only when it says
//! nothing is due. Whenever the configuration says more than this module reads (any
//! `maintenance` setting, gc settings it cannot parse, includes, `-c` options of the caller),
//! git decides, as it always did. This models git's default strategy up to the git gavel is
//! tested with (2.47: `gc` only); a git whose default runs more tasks (a later geometric
//! default) still gets them from the person's own commits, and from gavel's once gc is due.

use std::path::Path;

use super::config::{Config, entries};

/// git's default `gc.auto`: loose objects before an automatic gc.
const GC_AUTO: i64 = 6700;
/// git's default `gc.autoPackLimit`.
const GC_AUTO_PACK_LIMIT: i64 = 50;

/// Whether git's automatic maintenance may have work after a commit in the repository whose
/// git folder is `git_dir`, with the `config` git reads. `true` when unsure.
pub(crate) fn may_be_due(git_dir: &Path, config: &Config) -> bool {
    let Some((auto, pack_limit)) = gc_settings(config) else {
        return true;
    };
    if auto <= 0 {
        return false; // automatic gc is off: maintenance's only default task does nothing
    }
    let loose = std::fs::read_dir(git_dir.join("objects/17")).map_or(0, |dir| {
        dir.flatten()
            .filter(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                name.len() == 38 && name.bytes().all(|b| b.is_ascii_hexdigit())
            })
            .count()
    });
    if i64::try_from(loose).unwrap_or(i64::MAX) > (auto + 255) / 256 {
        return true;
    }
    let packs = std::fs::read_dir(git_dir.join("objects/pack")).map_or(0, |dir| {
        dir.flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".pack"))
            .count()
    });
    pack_limit > 0 && i64::try_from(packs).unwrap_or(i64::MAX) > pack_limit
}

/// `gc.auto` and `gc.autoPackLimit` from `config` (later files win), or `None` when it says
/// anything about maintenance, includes another file, or sets them in a form this does not
/// read.
fn gc_settings(config: &Config) -> Option<(i64, i64)> {
    if config.mentions("maintenance") || config.mentions("[include") {
        return None;
    }
    let (mut auto, mut pack_limit) = (GC_AUTO, GC_AUTO_PACK_LIMIT);
    for text in config.texts() {
        for entry in entries(text) {
            if entry.section.starts_with("gc") && entry.section != "gc" {
                return None; // a subsection
            }
            if entry.section != "gc" {
                continue;
            }
            match entry.key {
                "auto" => auto = parse_int(entry.value)?,
                "autopacklimit" => pack_limit = parse_int(entry.value)?,
                _ => {}
            }
        }
    }
    Some((auto, pack_limit))
}

/// A git config integer: digits with an optional `k`, `m` or `g` suffix.
fn parse_int(value: &str) -> Option<i64> {
    let (digits, scale) = match value.as_bytes().last()? {
        b'k' => (&value[..value.len() - 1], 1 << 10),
        b'm' => (&value[..value.len() - 1], 1 << 20),
        b'g' => (&value[..value.len() - 1], 1 << 30),
        _ => (value, 1),
    };
    digits.trim().parse::<i64>().ok()?.checked_mul(scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maintenance_is_skipped_only_when_git_would_do_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let git_dir = dir.path().join(".git");
        std::fs::create_dir_all(git_dir.join("objects/17")).expect("mkdir");
        std::fs::create_dir_all(git_dir.join("objects/pack")).expect("mkdir");
        let config = dir.path().join("config");
        let with = |text: &str| {
            std::fs::write(&config, text).expect("write");
            let read = Config::from_files(std::slice::from_ref(&config)).expect("readable");
            may_be_due(&git_dir, &read)
        };
        assert!(
            !with("[user]\n\tname = a\n"),
            "a fresh repository has nothing to do"
        );
        assert!(!with("[gc]\n\tauto = 0\n"), "gc is off");
        assert!(
            with("[maintenance]\n\tauto = true\n"),
            "maintenance settings: git decides"
        );
        assert!(
            with("[gc \"x\"]\n\tauto = 1\n"),
            "a form this does not read"
        );
        assert!(with("[gc]\n\tauto = lots\n"), "a value this does not read");
        // 27 loose objects in objects/17 is git's default threshold (6700 / 256, rounded up).
        for i in 0..28 {
            std::fs::write(git_dir.join(format!("objects/17/{i:038x}")), "").expect("write");
        }
        assert!(
            with("[user]\n\tname = a\n"),
            "too many loose objects: gc is due"
        );
        assert!(
            !with("[gc]\n\tauto = 100k\n"),
            "102400 / 256 = 400 per folder: not yet"
        );
        assert!(!with("[gc]\n\tauto = 0\n"), "gc is off, however many");
    }
}
