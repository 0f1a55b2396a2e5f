//! Which paths git's index holds, read from `.git/index` without a git process.
//!
//! A run's commit asks once whether the paths it names but that are gone (a moved folder, an
//! idea moved to `done/`) are tracked; a `git ls-files` for that reads the whole index in a new
//! process, a real part of a short run's time. The plain index formats (versions 2 and 3, SHA-1
//! object ids, no split or sparse index) are simple enough to read here: a header, then one
//! entry per path with a fixed-size head, the path and padding. Anything else (version 4's
//! compressed paths, SHA-256 repositories, a split or sparse index, a linked worktree, damage)
//! answers `None`, and the caller asks git.
//!
//! The same reading ([`parse`]: entries as [`Entry`], their fields by [`field`], and the
//! extensions) serves staging (`stage`), the re-check of suspect entries (`refresh`) and the
//! objects written ahead (`trees`); [`stat_data`] is what git records of a file.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The on-disk extended flag of an intent-to-add entry.
pub(super) const INTENT_TO_ADD: u16 = 0x2000;
/// The flag saying an entry has a second, extended flags field (version 3 and later).
pub(super) const EXTENDED: u16 = 0x4000;
/// 40 bytes of stat data, a 20-byte id and 16 bits of flags.
pub(super) const ENTRY_HEAD: usize = 62;

/// One index entry: its raw bytes and where its name is.
pub(super) struct Entry<'a> {
    pub(super) raw: std::borrow::Cow<'a, [u8]>,
    pub(super) name: &'a [u8],
    pub(super) stage: u16,
}

/// Where each 32-bit field of an entry's head is: its stat data (in [`stat_data`]'s order),
/// then, after the 20-byte id, its flags.
pub(super) mod field {
    pub(in crate::git) const MTIME: usize = 2;
    pub(in crate::git) const INO: usize = 5;
    pub(in crate::git) const MODE: usize = 6;
    pub(in crate::git) const SIZE: usize = 9;
}

impl Entry<'_> {
    /// The entry's `i`-th 32-bit field ([`field`]).
    pub(super) fn field(&self, i: usize) -> Option<u32> {
        Some(u32::from_be_bytes(
            self.raw.get(i * 4..i * 4 + 4)?.try_into().ok()?,
        ))
    }

    /// Its 16-bit flags (name length, stage, the extended and assume-valid bits).
    pub(super) fn flags(&self) -> Option<u16> {
        Some(u16::from_be_bytes(
            self.raw.get(60..ENTRY_HEAD)?.try_into().ok()?,
        ))
    }
}

/// The ten 32-bit stat fields git keeps in an index entry for the file `meta` describes, as it
/// writes them: change and modification times (seconds, nanoseconds), device, inode, mode
/// (a regular file, executable or not), owner, group, size; each truncated to 32 bits.
pub(super) fn stat_data(meta: &fs::Metadata) -> [u32; 10] {
    let low = |v: i64| (v as u64 & 0xffff_ffff) as u32;
    let mode = if meta.mode() & 0o111 != 0 {
        0o100755
    } else {
        0o100644
    };
    [
        low(meta.ctime()),
        low(meta.ctime_nsec()),
        low(meta.mtime()),
        low(meta.mtime_nsec()),
        meta.dev() as u32,
        meta.ino() as u32,
        mode,
        meta.uid(),
        meta.gid(),
        meta.size() as u32,
    ]
}

/// What [`parse`] returns.
pub(super) type Parsed<'a> = (u32, Vec<Entry<'a>>, Vec<([u8; 4], &'a [u8])>);

/// An index's version, entries and extensions; `None` unless it is version 2 or 3 with SHA-1
/// ids.
pub(super) fn parse(bytes: &[u8]) -> Option<Parsed<'_>> {
    if bytes.len() < 32 || &bytes[..4] != b"DIRC" {
        return None;
    }
    // Like git, which does not check an index's checksum when it reads it (only `git fsck`
    // does): it costs a hash of the whole file, and the commit that follows reads it anyway.
    let (body, _sum) = bytes.split_at(bytes.len() - 20);
    let version = u32::from_be_bytes(body[4..8].try_into().ok()?);
    if !matches!(version, 2 | 3) {
        return None;
    }
    let count = usize::try_from(u32::from_be_bytes(body[8..12].try_into().ok()?)).ok()?;
    let mut entries = Vec::with_capacity(count + 8);
    let mut at = 12;
    for _ in 0..count {
        let flags = u16::from_be_bytes(body.get(at + 60..at + ENTRY_HEAD)?.try_into().ok()?);
        let extended = flags & EXTENDED != 0;
        if extended && version < 3 {
            return None;
        }
        let name_at = at + ENTRY_HEAD + if extended { 2 } else { 0 };
        let len = body.get(name_at..)?.iter().position(|b| *b == 0)?;
        if usize::from(flags & 0x0fff) != len.min(0x0fff) {
            return None;
        }
        let size = (name_at - at + len + 8) & !7;
        entries.push(Entry {
            raw: std::borrow::Cow::Borrowed(body.get(at..at + size)?),
            name: &body[name_at..name_at + len],
            stage: (flags >> 12) & 3,
        });
        at += size;
    }
    let mut extensions = Vec::new();
    while at < body.len() {
        let sig: [u8; 4] = body.get(at..at + 4)?.try_into().ok()?;
        let len = usize::try_from(u32::from_be_bytes(
            body.get(at + 4..at + 8)?.try_into().ok()?,
        ))
        .ok()?;
        extensions.push((sig, body.get(at + 8..at + 8 + len)?));
        at += 8 + len;
    }
    Some((version, entries, extensions))
}

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
    let (_, entries, _) = parse(index)?;
    Some(entries.iter().map(|e| e.name).collect())
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
