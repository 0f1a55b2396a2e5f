//! A database that a newer gavel wrote to: statuses and event kinds this build does not know
//! must load as unknown (listed, shown, never driven), not make the store look corrupt.
//!
//! The rows are written by hand with rusqlite, as the newer gavel would have written them.

use std::path::Path;

use gavel_core::{EngineError, EventKind, RunId, RunStatus, RunStore, StoreError};
use gavel_store::SqliteStore;

use crate::engine_toy::{Bench, NOW, START};

const NEWER_STATUS: &str = r#"{"status":"paused_for_ci","pipeline":42}"#;
const NEWER_EVENT: &str = r#"{"at":"2026-01-30T14:40:00Z","event":"tool_use","tool":"edit"}"#;

/// A store with one run started by this gavel whose status and newest event were then written
/// by a newer one.
fn store_touched_by_a_newer_gavel(path: &Path) -> (SqliteStore, RunId) {
    let store = SqliteStore::open(path).expect("open");
    let run = Bench::new(&store).start_at(START);
    let conn = rusqlite::Connection::open(path).expect("open directly");
    conn.execute(
        "UPDATE runs SET status = ?1 WHERE id = ?2",
        rusqlite::params![NEWER_STATUS, run.0],
    )
    .expect("a newer status");
    conn.execute(
        "INSERT INTO events (run_id, seq, json)
         VALUES (?1, (SELECT COALESCE(MAX(seq) + 1, 0) FROM events WHERE run_id = ?1), ?2)",
        rusqlite::params![run.0, NEWER_EVENT],
    )
    .expect("a newer event");
    (store, run)
}

#[test]
fn a_status_written_by_a_newer_gavel_is_listed_as_unknown() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (store, run) = store_touched_by_a_newer_gavel(&dir.path().join("state.db"));

    let runs = store.runs().expect("listing runs is not a corrupt store");
    assert_eq!(runs.len(), 1);
    let status = &runs[0].status;
    assert_eq!(status.name(), "unknown");
    assert_eq!(status.stored_name(), "paused_for_ci");
    assert!(!status.is_terminal());
    assert_eq!(
        store.run(run).expect("run").map(|r| r.status).as_ref(),
        Some(status)
    );
}

#[test]
fn an_event_kind_written_by_a_newer_gavel_is_shown_as_unknown() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (store, run) = store_touched_by_a_newer_gavel(&dir.path().join("state.db"));

    let events = store
        .events(run)
        .expect("the timeline is not a corrupt store");
    let last = events.last().expect("events");
    assert_eq!(last.at, "2026-01-30T14:40:00Z");
    match &last.kind {
        EventKind::Unknown { event, raw } => {
            assert_eq!(event, "tool_use");
            assert_eq!(raw["tool"], "edit");
        }
        other => panic!("expected an unknown event, got {other:?}"),
    }
}

#[test]
fn a_run_with_an_unknown_status_is_neither_driven_nor_aborted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (store, run) = store_touched_by_a_newer_gavel(&dir.path().join("state.db"));
    let bench = Bench::new(&store);

    match bench.drive(run, None) {
        Err(EngineError::UnknownStatus { run: r, status }) => {
            assert_eq!((r, status.as_str()), (run, "paused_for_ci"));
        }
        other => panic!("expected UnknownStatus, got {other:?}"),
    }
    let err = bench
        .engine()
        .abort(run, "stop")
        .expect_err("an unknown status is not aborted");
    assert!(err.to_string().contains("paused_for_ci"), "{err}");
    // Neither touched the newer gavel's status.
    let conn = rusqlite::Connection::open(dir.path().join("state.db")).expect("open directly");
    let stored: String = conn
        .query_row("SELECT status FROM runs WHERE id = ?1", [run.0], |row| {
            row.get(0)
        })
        .expect("status");
    assert_eq!(stored, NEWER_STATUS);
}

#[test]
fn an_unknown_status_keeps_its_slug_claimed_and_is_written_back_verbatim() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (store, run) = store_touched_by_a_newer_gavel(&dir.path().join("state.db"));
    let slug = store.run(run).expect("run").expect("a run").slug;

    // This gavel cannot tell whether the run is over, so the slug stays taken.
    match store.create_run_claiming_slug("toy", &slug, b"{}", START, NOW) {
        Err(StoreError::SlugTaken { run: r, .. }) => assert_eq!(r, run),
        other => panic!("expected SlugTaken, got {other:?}"),
    }
    let status: RunStatus = serde_json::from_str(NEWER_STATUS).expect("status");
    store
        .set_status(run, &status, &[], NOW)
        .expect("an unknown status is stored");
    assert_eq!(store.run(run).expect("run").map(|r| r.status), Some(status));
}

#[test]
fn a_malformed_status_of_a_known_kind_is_still_corrupt() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    let (store, run) = store_touched_by_a_newer_gavel(&path);
    rusqlite::Connection::open(&path)
        .expect("open directly")
        .execute(
            r#"UPDATE runs SET status = '{"status":"halted"}' WHERE id = ?1"#,
            [run.0],
        )
        .expect("a halted status without its reason");
    assert!(matches!(store.runs(), Err(StoreError::Corrupt { .. })));
}
