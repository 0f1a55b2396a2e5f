//! Per-run lock files, so two processes never drive the same run at once.
//!
//! Each run has a lock file next to the database (`locks/run-<id>.lock`). Its holder keeps an
//! exclusive OS file lock (`flock` on Unix) for as long as it drives the run, and the file's
//! content names the holder so that anyone who fails to take the lock can say who has it. The OS
//! drops the lock when the holder's file is closed, including when the process is killed, so a
//! crashed run never stays locked. Locks belong to an open file, not to a process: a second
//! attempt from the same process fails too.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use gavel_core::{LockInfo, RunId, RunLock, StoreError};

/// The lock file of `run` under `dir`.
pub(crate) fn lock_path(dir: &Path, run: RunId) -> PathBuf {
    dir.join(format!("run-{run}.lock"))
}

/// Takes the lock of `run` in `dir` for `holder`, or names whoever holds it.
pub(crate) fn lock_run(dir: &Path, run: RunId, holder: &LockInfo) -> Result<RunLock, StoreError> {
    fs::create_dir_all(dir).map_err(|e| {
        StoreError::backend(format!("creating the lock directory {}", dir.display()), e)
    })?;
    let path = lock_path(dir, run);
    // Never truncate on open: the content names the current holder until we own the lock.
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| StoreError::backend(format!("opening the lock file {}", path.display()), e))?;
    match file.try_lock() {
        Ok(()) => {
            write_holder(&mut file, holder).map_err(|e| {
                StoreError::backend(format!("writing the lock file {}", path.display()), e)
            })?;
            Ok(RunLock::new(Box::new(file)))
        }
        Err(TryLockError::WouldBlock) => Err(StoreError::Locked {
            run,
            holder: read_holder(&mut file),
        }),
        Err(TryLockError::Error(e)) => Err(StoreError::backend(
            format!("locking {}", path.display()),
            e,
        )),
    }
}

fn write_holder(file: &mut File, holder: &LockInfo) -> std::io::Result<()> {
    let json = serde_json::to_vec(holder).map_err(std::io::Error::other)?;
    file.set_len(0)?;
    file.seek(SeekFrom::Start(0))?;
    file.write_all(&json)?;
    file.flush()
}

/// The holder named in a locked file. The holder may not have written its name yet (or may have
/// been killed while writing it), so an unreadable name is reported as unknown, not as an error.
fn read_holder(file: &mut File) -> LockInfo {
    let mut text = String::new();
    let read = file
        .seek(SeekFrom::Start(0))
        .and_then(|_| file.read_to_string(&mut text));
    match read {
        Ok(_) => serde_json::from_str(&text).unwrap_or_else(|_| unknown_holder()),
        Err(_) => unknown_holder(),
    }
}

fn unknown_holder() -> LockInfo {
    LockInfo {
        pid: 0,
        command: "unknown".into(),
        since: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holder(pid: u32) -> LockInfo {
        LockInfo {
            pid,
            command: format!("gavel resume {pid}"),
            since: "2026-01-30T14:33:20Z".into(),
        }
    }

    #[test]
    fn two_opens_in_one_process_conflict_and_the_loser_names_the_holder() {
        let dir = tempfile::tempdir().expect("tempdir");
        let first = lock_run(dir.path(), RunId(7), &holder(1)).expect("first lock");
        match lock_run(dir.path(), RunId(7), &holder(2)) {
            Err(StoreError::Locked { run, holder: h }) => {
                assert_eq!(run, RunId(7));
                assert_eq!(h, holder(1));
            }
            other => panic!("expected Locked, got {other:?}"),
        }
        drop(first);
        let again = lock_run(dir.path(), RunId(7), &holder(3));
        assert!(
            again.is_ok(),
            "lock must be free after the guard is dropped: {again:?}"
        );
    }

    #[test]
    fn an_unreadable_holder_is_reported_as_unknown() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = lock_path(dir.path(), RunId(1));
        let file = File::create(&path).expect("create");
        file.try_lock().expect("lock");
        match lock_run(dir.path(), RunId(1), &holder(2)) {
            Err(StoreError::Locked { holder: h, .. }) => {
                assert_eq!(h.pid, 0);
                assert_eq!(h.command, "unknown");
            }
            other => panic!("expected Locked, got {other:?}"),
        }
    }

    #[test]
    fn a_stale_holder_left_by_a_dead_process_does_not_block() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = lock_path(dir.path(), RunId(4));
        fs::write(&path, serde_json::to_vec(&holder(99)).expect("json")).expect("write");
        let lock = lock_run(dir.path(), RunId(4), &holder(5));
        assert!(lock.is_ok(), "{lock:?}");
        let text = fs::read_to_string(&path).expect("read");
        let written: LockInfo = serde_json::from_str(&text).expect("holder json");
        assert_eq!(written, holder(5));
    }
}
