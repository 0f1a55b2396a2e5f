//! Entries git left suspect, checked again before gavel rewrites the index, as `git
//! update-index --refresh` would: `git commit` then trusts them instead of reading every file.
//!
//! git records each file's stat data in the index so it can tell an unchanged file without
//! reading it, except for a file changed in the same second the index was written: its stat
//! data cannot prove it unchanged ("racily clean"), so an index written later must carry such
//! an entry with size 0 (git's mark), and git reads the file again the next time it looks.
//! Every gavel commit leaves its own files so (they are written moments before git writes the
//! index), and the next run's `git commit` read all of them once more, a tenth of its time. [`verify`] does that reading (on a thread
//! of its own while the caller lists the new files): for an entry with size 0 whose stat data
//! otherwise matches the file (to the nanosecond where the index keeps them), whose file was
//! last modified in an earlier second than now (so the index written next is newer, git's own
//! condition), and whose content hashes to the entry's blob, it returns the real size to write
//! in. An entry that does not pass every check is left
//! as it was, for git to read. A file changed after it was hashed here gets a new change time,
//! so git sees that its stat data no longer matches and reads it, as it would have.
//!
//! The hash is the file's raw bytes, which is git's only when nothing converts them on the
//! way in: the caller's settings check ([`super::trees::writes_plain_objects`]) rules out
//! conversions configured globally, and an attributes file in any folder above an entry rules
//! that entry out.

use std::collections::HashMap;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::index::{Entry, field, stat_data};

/// Files larger than this are left to git (reading them is git's business).
const MAX_FILE_BYTES: u64 = 1 << 20;

/// Whether `entry` of an index written at `written_at` (whole seconds) is suspect: marked
/// (size 0), or changed in the second that index was written, which a newer index must mark.
pub(super) fn suspect(entry: &Entry<'_>, written_at: i64) -> bool {
    entry.field(field::SIZE) == Some(0)
        || entry
            .field(field::MTIME)
            .is_some_and(|mtime| i64::from(mtime) >= written_at)
}

/// The suspect entries of `entries` (an index of the repository at `root`, written at
/// `written_at`) that can be written with their real size: `(position, size)`. `now` is the
/// current time; both in whole seconds.
pub(super) fn verify(
    root: &Path,
    entries: &[Entry<'_>],
    written_at: i64,
    now: i64,
) -> Vec<(usize, u32)> {
    let mut attributes: HashMap<PathBuf, bool> = HashMap::new();
    let mut verified = Vec::new();
    for (at, entry) in entries.iter().enumerate() {
        if !suspect(entry, written_at) {
            continue;
        }
        if let Some(size) = check(root, entry, now, &mut attributes) {
            verified.push((at, size));
        }
    }
    verified
}

/// Whether `entry` may be trusted at its file's real size (which it returns).
fn check(
    root: &Path,
    entry: &Entry<'_>,
    now: i64,
    attributes: &mut HashMap<PathBuf, bool>,
) -> Option<u32> {
    // Stage 0, not assumed valid, no extended flags, a regular file.
    if entry.flags()? & 0xf000 != 0 || !matches!(entry.field(field::MODE)?, 0o100644 | 0o100755) {
        return None;
    }
    let name = std::str::from_utf8(entry.name).ok()?;
    let full = root.join(name);
    let meta = fs::symlink_metadata(&full).ok()?;
    let stat = stat_data(&meta);
    // Every field as recorded, the size too unless it is the mark (0).
    let same = meta.is_file()
        && meta.size() > 0
        && meta.size() <= MAX_FILE_BYTES
        && meta.mtime() < now
        && stat.iter().enumerate().all(|(i, v)| {
            let recorded = entry.field(i);
            recorded == Some(*v) || (i == field::SIZE && recorded == Some(0))
        });
    if !same || attributes_above(root, name, attributes) {
        return None;
    }
    let content = fs::read(&full).ok()?;
    if content.len() as u64 != meta.size() {
        return None; // changed while it was read
    }
    let id = super::objects::object_id("blob", &content);
    let stored: String = entry
        .raw
        .get(40..60)?
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    (id == stored).then(|| meta.size() as u32)
}

/// Whether a folder between the top (whose own attributes the caller's settings check
/// covers) and `name`'s file has a `.gitattributes`; answers are kept per folder.
fn attributes_above(root: &Path, name: &str, seen: &mut HashMap<PathBuf, bool>) -> bool {
    let mut dir = PathBuf::new();
    let mut parts: Vec<&str> = name.split('/').collect();
    parts.pop();
    for part in parts {
        dir.push(part);
        let has = *seen
            .entry(dir.clone())
            .or_insert_with(|| root.join(&dir).join(".gitattributes").exists());
        if has {
            return true;
        }
    }
    false
}

#[cfg(test)]
#[path = "refresh_tests.rs"]
mod tests;
