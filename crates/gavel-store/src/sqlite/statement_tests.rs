//! The statements a checkpoint runs stay compiled: SQLite must not prepare any of them again
//! per commit (what `sqlite3_stmt_status(SQLITE_STMTSTATUS_REPREPARE)` counts).

use gavel_core::{CHECKPOINT_FORMAT, Checkpoint, Event, EventKind, RunStatus, Store};
use rusqlite::StatementStatus;

use super::{NEXT_EVENT_SEQ, SqliteStore};

#[test]
fn the_next_event_number_is_not_compiled_again_per_checkpoint() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let store = SqliteStore::open(&dir.path().join("state.db")).expect("a store");
    let now = "2026-01-01T00:00:00Z";
    let run = store
        .create_run("toy", "slug", b"{}", "a", now)
        .expect("a run");
    for seq in 1..=5u64 {
        let cp = Checkpoint {
            run,
            seq,
            parent: Some(seq - 1),
            node: Some("a".into()),
            next: Some("a".into()),
            state: format!("{{\"n\":{seq}}}").into_bytes(),
            format: CHECKPOINT_FORMAT,
            created_at: now.into(),
        };
        let event = Event {
            at: now.into(),
            kind: EventKind::Node {
                node: "a".into(),
                next: Some("a".into()),
                seq,
            },
        };
        store
            .commit(&cp, &[event], &RunStatus::Running)
            .expect("a checkpoint");
    }
    assert_eq!(store.events(run).expect("the timeline").len(), 5);
    let conn = store.conn();
    let stmt = conn
        .prepare_cached(NEXT_EVENT_SEQ)
        .expect("the cached statement");
    assert_eq!(
        stmt.get_status(StatementStatus::Run),
        5,
        "run once per checkpoint"
    );
    assert_eq!(stmt.get_status(StatementStatus::RePrepare), 0);
}
