//! Per-run lock files, so two processes never drive the same run at once.
//!
//! Each run has a lock file next to the database (`locks/run-<id>.lock`). Its holder keeps an
//! exclusive OS file lock (`flock` on Unix) for as long as it drives the run, and the file's
//! content names the holder so that anyone who fails to take the lock can say who has it. The OS
//! drops the lock when the holder's file is closed, including when the process is killed, so a
//! crashed run never stays locked. Locks belong to an open file, not to a process: a second
//! attempt from the same process fails too.
//!
//! Listings (`gavel runs`, `gavel show`) only ask whether a run is driven ([`probe`]): they take
//! a *shared* lock for an instant and never write, so they cannot be mistaken for a holder. A
//! driver that meets such a probe (or a holder that is just exiting) retries for a short while
//! ([`CONTENDED_FOR`]) before it reports the run as locked. The holder's name is written in
//! place without truncating first, and a reader that finds it half-written reads again, so a
//! lock error names the real holder rather than an unknown one.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gavel_core::{LockInfo, RunId, RunLock, StoreError};

/// The lock file of `run` under `dir`.
pub(crate) fn lock_path(dir: &Path, run: RunId) -> PathBuf {
    dir.join(format!("run-{run}.lock"))
}

/// How long a driver keeps trying a lock that someone holds before it gives up: longer than any
/// probe holds its shared lock, far shorter than a person would notice.
pub(crate) const CONTENDED_FOR: Duration = Duration::from_millis(750);

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
    let started = Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => {
                write_holder(&mut file, holder).map_err(|e| {
                    StoreError::backend(format!("writing the lock file {}", path.display()), e)
                })?;
                return Ok(RunLock::new(Box::new(file)));
            }
            Err(TryLockError::WouldBlock) if started.elapsed() < CONTENDED_FOR => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(TryLockError::WouldBlock) => {
                return Err(StoreError::Locked {
                    run,
                    holder: read_holder(&mut file),
                });
            }
            Err(TryLockError::Error(e)) => {
                return Err(StoreError::backend(
                    format!("locking {}", path.display()),
                    e,
                ));
            }
        }
    }
}

/// Whether someone drives `run`, and who, without taking its lock: a shared lock taken for an
/// instant succeeds only when nobody holds the exclusive one. Creates nothing.
pub(crate) fn probe(dir: &Path, run: RunId) -> Result<Option<LockInfo>, StoreError> {
    let path = lock_path(dir, run);
    let mut file = match File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(StoreError::backend(
                format!("opening the lock file {}", path.display()),
                e,
            ));
        }
    };
    match file.try_lock_shared() {
        Ok(()) => Ok(None),
        Err(TryLockError::WouldBlock) => Ok(Some(read_holder(&mut file))),
        Err(TryLockError::Error(e)) => Err(StoreError::backend(
            format!("probing {}", path.display()),
            e,
        )),
    }
}

/// Writes the holder's name over the old one, then cuts what is left of a longer old name. The
/// file is never empty in between, and a reader that catches it mid-write reads again.
fn write_holder(file: &mut File, holder: &LockInfo) -> std::io::Result<()> {
    let json = serde_json::to_vec(holder).map_err(std::io::Error::other)?;
    file.seek(SeekFrom::Start(0))?;
    file.write_all(&json)?;
    file.set_len(json.len() as u64)?;
    file.flush()
}

/// The holder named in a locked file. The holder may be writing its name right now, so a name
/// that does not parse is read again for a moment; one that never parses (a holder killed
/// while writing it, a file from elsewhere) is reported as an unnamed process.
fn read_holder(file: &mut File) -> LockInfo {
    let started = Instant::now();
    loop {
        let mut text = String::new();
        let read = file
            .seek(SeekFrom::Start(0))
            .and_then(|_| file.read_to_string(&mut text));
        if read.is_ok()
            && let Ok(info) = serde_json::from_str::<LockInfo>(&text)
        {
            return info;
        }
        if started.elapsed() >= Duration::from_millis(200) {
            return unknown_holder();
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn unknown_holder() -> LockInfo {
    LockInfo {
        pid: 0,
        host: String::new(),
        command: "a process that has not written its name".into(),
        since: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holder(pid: u32) -> LockInfo {
        LockInfo {
            pid,
            host: String::new(),
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
                assert!(h.to_string().contains("has not written its name"), "{h}");
            }
            other => panic!("expected Locked, got {other:?}"),
        }
    }

    #[test]
    fn a_probe_sees_the_holder_and_never_blocks_a_driver() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(probe(dir.path(), RunId(3)).expect("probe"), None);
        assert!(
            !lock_path(dir.path(), RunId(3)).exists(),
            "a probe creates nothing"
        );
        let held = lock_run(dir.path(), RunId(3), &holder(11)).expect("lock");
        assert_eq!(
            probe(dir.path(), RunId(3)).expect("probe"),
            Some(holder(11))
        );
        drop(held);
        assert_eq!(probe(dir.path(), RunId(3)).expect("probe"), None);
        // A listing holding its shared lock while a driver arrives: the driver waits it out.
        let path = lock_path(dir.path(), RunId(3));
        let lister = File::open(&path).expect("open");
        lister.try_lock_shared().expect("shared lock");
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            drop(lister);
        });
        let driver = lock_run(dir.path(), RunId(3), &holder(12));
        assert!(driver.is_ok(), "the driver must get the lock: {driver:?}");
        release.join().expect("join");
    }

    #[test]
    fn a_longer_old_name_never_leaves_a_tail() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = lock_path(dir.path(), RunId(5));
        let mut long = holder(1);
        long.command = "gavel resume 5 --feedback-file a-very-long-name.md".into();
        drop(lock_run(dir.path(), RunId(5), &long).expect("lock"));
        let short = lock_run(dir.path(), RunId(5), &holder(2)).expect("lock");
        let text = fs::read_to_string(&path).expect("read");
        let written: LockInfo = serde_json::from_str(&text).expect("one whole holder");
        assert_eq!(written, holder(2));
        drop(short);
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
