//! SQLite's write-ahead log, copied into the database while the caller waits for something
//! else (`SqliteStore::while_waiting`).
//!
//! A passive checkpoint copies the log into the database, syncing both. SQLite then starts
//! the log again from its beginning at the next write transaction and syncs the log's new
//! header there: on the caller's next commit, after its git commit returned. So the copying
//! thread also makes that write itself, one that changes nothing (the schema version, written
//! as it is, inside `BEGIN IMMEDIATE` so no migration can come in between), and the sync
//! happens while git still runs. It never waits for a lock: a busy database is left as it is.

use std::time::Duration;

use rusqlite::{Connection, TransactionBehavior};

/// Copies the log into the database and, when all of it was copied, starts it again.
/// Failures leave the log for a later checkpoint, as if nothing had been tried.
pub(super) fn copy_and_restart(conn: &mut Connection, busy_timeout: Duration) {
    let Ok((busy, logged, copied)) = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, i64>(2)?,
        ))
    }) else {
        return;
    };
    if busy != 0 || logged <= 0 || copied != logged {
        return;
    }
    if conn.busy_timeout(Duration::ZERO).is_err() {
        return;
    }
    let _ = rewrite_schema_version(conn);
    let _ = conn.busy_timeout(busy_timeout);
}

/// A write transaction that changes nothing: the schema version, read and written back.
fn rewrite_schema_version(conn: &mut Connection) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let version: i64 = tx.pragma_query_value(None, "user_version", |row| row.get(0))?;
    tx.pragma_update(None, "user_version", version)?;
    tx.commit()
}

#[cfg(test)]
mod tests {
    use gavel_core::RunStore;

    use super::super::SqliteStore;

    /// Frames in the log and how many of them the database already has.
    fn log_frames(store: &SqliteStore) -> (i64, i64) {
        store
            .conn()
            .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
                Ok((r.get(1)?, r.get(2)?))
            })
            .expect("a checkpoint")
    }

    #[test]
    fn waiting_copies_the_log_and_starts_it_again_without_changing_anything() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let store = SqliteStore::open(&dir.path().join("state.db")).expect("a store");
        let now = "2026-01-01T00:00:00Z";
        let mut runs = Vec::new();
        for i in 0..20 {
            let state = format!("{{\"n\":{i}}}");
            runs.push(
                store
                    .create_run("toy", &format!("s{i}"), state.as_bytes(), "a", now)
                    .expect("a run"),
            );
        }
        let version: i64 = store
            .conn()
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .expect("the schema version");
        let (before, _) = log_frames(&store);
        assert!(before > 40, "20 runs fill the log: {before} frames");
        let mut waited = 0;
        store.while_waiting(&mut || waited += 1);
        assert_eq!(waited, 1, "the wait runs exactly once");
        // The log was started again by the copying thread itself (its one write, the schema
        // version), not left for the caller's next commit.
        assert_eq!(
            log_frames(&store),
            (1, 1),
            "only the restarting write is in the log"
        );
        store
            .create_run("toy", "after", b"{}", "a", now)
            .expect("a run");
        let (logged, _) = log_frames(&store);
        assert!(logged > 1 && logged < 12, "{logged} frames in the log");
        let after: i64 = store
            .conn()
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .expect("the schema version");
        assert_eq!(after, version);
        drop(store);
        let store = SqliteStore::open(&dir.path().join("state.db")).expect("reopened");
        assert_eq!(store.runs().expect("runs").len(), 21);
        for (i, run) in runs.into_iter().enumerate() {
            let head = store.head(run).expect("a head").expect("exists");
            assert_eq!(head.state, format!("{{\"n\":{i}}}").into_bytes());
        }
    }
}
