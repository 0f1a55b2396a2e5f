//! Crash-safe file writes.
//!
//! Every artifact gavel writes goes through [`write_atomic`]: the bytes go to a temporary file
//! in the same directory and the file is renamed over the target, so a kill -9 leaves either
//! the old file or the new one, never half of one. Data the kernel has accepted survives a
//! killed process, so that needs no fsync; surviving an OS crash or power loss does, and costs
//! two fsyncs per artifact, so it is a setting ([`set_fsync`], `[storage] fsync` in gavel.toml)
//! that goes with the store's `synchronous=FULL`. Off, artifacts are exactly as durable as the
//! SQLite store in WAL mode with `synchronous=NORMAL` and git's loose objects.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether [`write_atomic`] syncs the file and its folder.
static FSYNC: AtomicBool = AtomicBool::new(false);

/// Makes every later [`write_atomic`] in this process sync (or not) before it returns.
pub fn set_fsync(on: bool) {
    FSYNC.store(on, Ordering::Relaxed);
}

/// Writes `bytes` to `path` atomically (temp file + rename, with fsyncs when [`set_fsync`] is
/// on), creating parent folders: only when creating the temporary file fails for want of
/// them, so the usual write into an existing folder costs no `mkdir` and `stat` (a run
/// writes a dozen lineage files).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let sync = FSYNC.load(Ordering::Relaxed);
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = parent.join(format!(".{name}.gavel-tmp-{}", std::process::id()));
    {
        let mut file = match File::create(&tmp) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                fs::create_dir_all(parent)?;
                File::create(&tmp)?
            }
            created => created?,
        };
        file.write_all(bytes)?;
        if sync {
            file.sync_all()?;
        }
    }
    fs::rename(&tmp, path)?;
    if sync && let Ok(dir) = File::open(parent) {
        // Persist the rename itself; not every filesystem supports syncing a directory.
        let _ = dir.sync_all();
    }
    Ok(())
}

/// Moves a folder or file, idempotently: if `from` is gone and `to` exists, the move already
/// happened (a replay after a crash) and this succeeds.
pub fn move_idempotent(from: &Path, to: &Path) -> io::Result<()> {
    if !from.exists() && to.exists() {
        return Ok(());
    }
    if let Some(parent) = to.parent() {
        fs::create_dir_all(parent)?;
    }
    if to.exists() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{} already exists", to.display()),
        ));
    }
    fs::rename(from, to)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_content_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a/b/file.md");
        write_atomic(&path, b"one").expect("first write");
        write_atomic(&path, b"two").expect("second write");
        assert_eq!(fs::read_to_string(&path).expect("read"), "two");
        let names: Vec<_> = fs::read_dir(dir.path().join("a/b"))
            .expect("read_dir")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn move_is_idempotent_after_it_happened() {
        let dir = tempfile::tempdir().expect("tempdir");
        let from = dir.path().join("active/x");
        let to = dir.path().join("done/1-x");
        fs::create_dir_all(&from).expect("mkdir");
        move_idempotent(&from, &to).expect("move");
        move_idempotent(&from, &to).expect("replayed move");
        assert!(to.is_dir() && !from.exists());
    }
}
