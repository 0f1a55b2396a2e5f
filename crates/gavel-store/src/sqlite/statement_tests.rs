//! The statements a checkpoint runs stay compiled: SQLite must not prepare any of them again
//! per commit (what `sqlite3_stmt_status(SQLITE_STMTSTATUS_REPREPARE)` counts). And the
//! statements a run's start uses read an index, not every run.

use gavel_core::{CHECKPOINT_FORMAT, Checkpoint, Event, EventKind, RunStatus, RunStore};
use rusqlite::StatementStatus;

use super::create::SLUG_HOLDERS;
use super::{NEXT_EVENT_SEQ, RUN_COLUMNS, RUNS_WITH_SLUG, SqliteStore};

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

#[test]
fn runs_are_found_by_name_from_an_index() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let store = SqliteStore::open(&dir.path().join("state.db")).expect("a store");
    let conn = store.conn();
    for sql in [
        format!("SELECT {RUN_COLUMNS} {RUNS_WITH_SLUG}"),
        SLUG_HOLDERS.to_owned(),
    ] {
        let plan: Vec<String> = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .and_then(|mut stmt| {
                stmt.query_map(["slug", "issue"], |row| row.get::<_, String>(3))?
                    .collect()
            })
            .expect("a query plan");
        assert!(
            plan.iter()
                .any(|step| step.contains("USING INDEX runs_by_slug")),
            "{sql}: {plan:?}"
        );
        assert!(
            !plan.iter().any(|step| step.starts_with("SCAN")),
            "{sql} reads every run: {plan:?}"
        );
    }
}
