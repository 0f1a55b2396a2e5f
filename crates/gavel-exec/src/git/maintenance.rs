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

use std::path::{Path, PathBuf};

/// git's default `gc.auto`: loose objects before an automatic gc.
const GC_AUTO: i64 = 6700;
/// git's default `gc.autoPackLimit`.
const GC_AUTO_PACK_LIMIT: i64 = 50;

/// Whether git's automatic maintenance may have work after a commit in the repository whose
/// git folder is `git_dir`, with the config `files` git reads. `true` when unsure.
pub(crate) fn may_be_due(git_dir: &Path, files: &[PathBuf]) -> bool {
    if ["GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT"]
        .iter()
        .any(|v| std::env::var_os(v).is_some())
    {
        return true;
    }
    let Some((auto, pack_limit)) = gc_settings(files) else {
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

/// `gc.auto` and `gc.autoPackLimit` from the config `files` (later files win), or `None` when
/// a file says anything about maintenance, includes another, or sets them in a form this does
/// not read.
fn gc_settings(files: &[PathBuf]) -> Option<(i64, i64)> {
    let (mut auto, mut pack_limit) = (GC_AUTO, GC_AUTO_PACK_LIMIT);
    for file in files {
        let text = match std::fs::read_to_string(file) {
            Ok(text) => text,
            Err(_) if !file.exists() => continue,
            Err(_) => return None,
        };
        let lower = text.to_ascii_lowercase();
        if lower.contains("maintenance") || lower.contains("[include") {
            return None;
        }
        let mut in_gc = false;
        for line in lower.lines() {
            let line = line.trim();
            if line.starts_with('[') {
                in_gc = line.replace(' ', "") == "[gc]";
                if !in_gc && line.starts_with("[gc") {
                    return None; // a subsection or a key on the header line
                }
                continue;
            }
            if !in_gc || line.is_empty() || line.starts_with(['#', ';']) {
                continue;
            }
            let (key, value) = line.split_once('=').unwrap_or((line, "true"));
            let value = value.split(['#', ';']).next().unwrap_or("").trim();
            match key.trim() {
                "auto" => auto = parse_int(value)?,
                "autopacklimit" => pack_limit = parse_int(value)?,
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
            may_be_due(&git_dir, std::slice::from_ref(&config))
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
