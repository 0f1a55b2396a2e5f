//! Which paths git's index holds, read from `.git/index` without a git process.
//!
//! A run's commit asks once whether the paths it names but that are gone (a moved folder, an
//! idea moved to `done/`) are tracked; a `git ls-files` for that reads the whole index in a new
//! process, a real part of a short run's time. The plain index formats (versions 2 and 3, SHA-1
//! object ids, no split or sparse index) are simple enough to read here: a header, then one
//! entry per path with a fixed-size head, the path and padding. Anything else (version 4's
//! compressed paths, SHA-256 repositories, a split or sparse index, a linked worktree, damage)
//! answers `None`, and the caller asks git.

use std::path::Path;

/// For each of `paths` (a file, or a folder ending with or without `/`), whether the index of
/// the repository whose `.git` folder is `git_dir` has it (a folder: any file beneath it).
/// `None` when the index is not one this reader trusts itself to read.
pub(crate) fn tracked(git_dir: &Path, paths: &[String]) -> Option<Vec<bool>> {
    let config = std::fs::read_to_string(git_dir.join("config")).ok()?;
    let config = config.to_ascii_lowercase();
    if ["objectformat", "splitindex", "sparse"]
        .iter()
        .any(|k| config.contains(k))
    {
        return None;
    }
    let index = match std::fs::read(git_dir.join("index")) {
        Ok(bytes) => bytes,
        // No index yet: nothing is tracked.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Some(vec![false; paths.len()]);
        }
        Err(_) => return None,
    };
    let names = entry_names(&index)?;
    Some(
        paths
            .iter()
            .map(|p| {
                let p = p.trim_end_matches('/').as_bytes();
                names.iter().any(|n| {
                    *n == p || (n.len() > p.len() && n.starts_with(p) && n[p.len()] == b'/')
                })
            })
            .collect(),
    )
}

/// The path of every entry of a version 2 or 3 index with SHA-1 ids, or `None`.
fn entry_names(index: &[u8]) -> Option<Vec<&[u8]>> {
    const HEAD: usize = 62; // 40 bytes of stat data, a 20-byte id, 2 bytes of flags
    let header = index.get(..12)?;
    if &header[..4] != b"DIRC" {
        return None;
    }
    let version = u32::from_be_bytes(header[4..8].try_into().ok()?);
    if !matches!(version, 2 | 3) {
        return None;
    }
    let count = usize::try_from(u32::from_be_bytes(header[8..12].try_into().ok()?)).ok()?;
    let mut names = Vec::with_capacity(count);
    let mut at = 12;
    for _ in 0..count {
        let flags = u16::from_be_bytes(index.get(at + 60..at + HEAD)?.try_into().ok()?);
        let extended = flags & 0x4000 != 0;
        if extended && version < 3 {
            return None;
        }
        let name_at = at + HEAD + if extended { 2 } else { 0 };
        let rest = index.get(name_at..)?;
        let len = rest.iter().position(|b| *b == 0)?;
        let name = &rest[..len];
        if usize::from(flags & 0x0fff) != len.min(0x0fff) {
            return None;
        }
        names.push(name);
        // The entry is padded with 1 to 8 NULs to a multiple of 8 bytes.
        let size = name_at - at + len;
        at += (size + 8) & !7;
    }
    Some(names)
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::process::Command;

    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .expect("git");
        assert!(out.status.success(), "{args:?}: {out:?}");
    }

    #[test]
    fn the_index_answers_like_git_ls_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        git(root, &["init", "-q"]);
        assert_eq!(
            tracked(&root.join(".git"), &["a.md".into()]),
            Some(vec![false])
        );
        for (path, text) in [
            ("a.md", "a"),
            ("docs/lineage/active/x/001-brief.md", "b"),
            (
                &format!("long/{}/{}.md", "n".repeat(200), "m".repeat(100)),
                "c",
            ),
            ("docs/lineage-other.md", "d"),
        ] {
            let path = root.join(path);
            fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            fs::write(path, text).expect("write");
        }
        git(root, &["add", "-A"]);
        // An intent-to-add entry carries the extended flags (version 3).
        fs::write(root.join("later.md"), "l").expect("write");
        git(root, &["add", "-N", "later.md"]);
        let asked: Vec<String> = [
            "a.md",
            "docs/lineage/active/x",
            "docs/lineage/active/x/",
            "docs/lineage",
            "docs/lineage/active/y",
            "docs/lin",
            "later.md",
            "b.md",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            tracked(&root.join(".git"), &asked),
            Some(vec![true, true, true, true, false, false, true, false])
        );
        let long = format!("long/{}/{}.md", "n".repeat(200), "m".repeat(100));
        assert_eq!(tracked(&root.join(".git"), &[long]), Some(vec![true]));
        // Version 4 compresses paths: git is asked instead.
        git(root, &["update-index", "--index-version", "4"]);
        assert_eq!(tracked(&root.join(".git"), &["a.md".into()]), None);
    }
}
