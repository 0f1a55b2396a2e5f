//! A step's write on PostgreSQL: one statement in its own transaction, which lands whole or not
//! at all, leaves nothing to another writer of the run, and is not written twice when the
//! server committed it but its answer was lost.

use std::thread;
use std::time::{Duration, Instant};

use gavel_core::{
    ContentHash, Event, EventKind, NewBlob, RunStatus, RunStore, SpendStore, StoreError,
};
use gavel_store::PgStore;
use gavel_store_testkit::TempPostgres;
use postgres::{Client, NoTls};

use crate::postgres::checkpoint;

const NOW: &str = "2026-01-30T14:33:20Z";

fn open(url: &str) -> PgStore {
    PgStore::open(url).unwrap_or_else(|e| panic!("opening {url}: {e:?}"))
}

fn admin(url: &str) -> Client {
    Client::connect(url, NoTls).expect("an admin connection")
}

fn note(text: &str) -> Event {
    Event {
        at: NOW.into(),
        kind: EventKind::Note { text: text.into() },
    }
}

fn paid_call(micros: u64) -> Event {
    Event {
        at: NOW.into(),
        kind: EventKind::ModelCall {
            role: "drafter".into(),
            provider: "scripted".into(),
            model: "m".into(),
            ledger: Some(Box::new(gavel_core::CallLedger {
                n: 1,
                requested_model: "m".into(),
                input_tokens: None,
                output_tokens: None,
                cached_tokens: None,
                cost_micros: Some(micros),
                cost_source: "reported".into(),
                prompt: ContentHash::of(b"p"),
                response: ContentHash::of(b"r"),
                attempts: 1,
                warning: None,
                lost: false,
                credential: None,
                quota_exhausted: Vec::new(),
                form: None,
            })),
        },
    }
}

/// A state long enough to be stored as a delta against its parent's.
fn state(seq: u64) -> Vec<u8> {
    format!(
        "{{\"seq\":{seq},\"draft\":\"{}\"}}",
        "a line of the draft ".repeat(8)
    )
    .into_bytes()
}

/// The last statement the store's session ran, and whether it left a transaction open.
fn last_statement(admin: &mut Client) -> (String, String) {
    let row = admin
        .query_one(
            "SELECT query, state FROM pg_stat_activity
             WHERE datname = current_database() AND pid <> pg_backend_pid()
               AND application_name = 'gavel'",
            &[],
        )
        .expect("the store's session");
    (row.get(0), row.get(1))
}

#[test]
fn a_step_after_the_first_is_one_statement_and_leaves_no_transaction_open() {
    let url = TempPostgres::shared().fresh_database();
    let store = open(&url);
    let mut admin = admin(&url);
    let run = store
        .create_run("w", "s", &state(0), "loop", NOW)
        .expect("create_run");
    for seq in 1..=3 {
        store
            .commit(
                &checkpoint(run, seq, &state(seq)),
                &[note(&format!("step {seq}"))],
                &RunStatus::Running,
            )
            .expect("commit");
        let (query, session) = last_statement(&mut admin);
        assert!(query.trim_start().starts_with("WITH moved AS"), "{query}");
        assert_eq!(session, "idle", "committed, no transaction left open");
    }
    store
        .put_write(run, "3:loop:answer", b"an answer", NOW)
        .expect("journal");
    let (query, session) = last_statement(&mut admin);
    assert!(query.trim_start().starts_with("WITH locked AS"), "{query}");
    assert_eq!(session, "idle");
    assert_eq!(
        store.head(run).expect("head").expect("head").state,
        state(3)
    );
    assert_eq!(store.events(run).expect("events").len(), 3);
}

#[test]
fn a_step_the_server_refuses_writes_nothing_of_itself() {
    let url = TempPostgres::shared().fresh_database();
    let store = open(&url);
    let run = store
        .create_run("w", "s", &state(0), "loop", NOW)
        .expect("create_run");
    store
        .commit(
            &checkpoint(run, 1, &state(1)),
            &[paid_call(100)],
            &RunStatus::Running,
        )
        .expect("commit 1");
    // The checkpoint is the last row the statement writes: the server refuses it, after the
    // blobs, events, spend and head were written in the same statement.
    admin(&url)
        .batch_execute(
            "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS
                 $$ BEGIN RAISE EXCEPTION 'refused for the test'; END $$;
             CREATE TRIGGER refuse BEFORE INSERT ON checkpoints
                 FOR EACH ROW EXECUTE FUNCTION refuse();",
        )
        .expect("install the trigger");
    let kept = b"a blob only this step keeps".to_vec();
    let step = checkpoint(run, 2, &state(2));
    let events = [note("step 2"), paid_call(250)];
    let blobs = [NewBlob {
        bytes: &kept,
        similar: &[],
    }];
    let refused = store.commit_with_blobs(&step, &events, &RunStatus::Running, &blobs);
    assert!(
        matches!(&refused, Err(StoreError::Backend { message, .. }) if message.contains("refused for the test")),
        "{refused:?}"
    );
    assert_eq!(store.head(run).expect("head").expect("head").seq, 1);
    assert_eq!(store.events(run).expect("events").len(), 1);
    assert_eq!(store.spent_in_month("2026-01").expect("spend"), 100);
    assert_eq!(store.get_blob(&ContentHash::of(&kept)).expect("blob"), None);
    assert_eq!(
        store.get_blob(&ContentHash::of(&state(2))).expect("blob"),
        None
    );

    admin(&url)
        .batch_execute("DROP TRIGGER refuse ON checkpoints")
        .expect("drop the trigger");
    store
        .commit_with_blobs(&step, &events, &RunStatus::Running, &blobs)
        .expect("the same step, now accepted");
    assert_eq!(
        store.head(run).expect("head").expect("head").state,
        state(2)
    );
    assert_eq!(store.events(run).expect("events").len(), 3);
    assert_eq!(store.spent_in_month("2026-01").expect("spend"), 350);
    assert_eq!(
        store.get_blob(&ContentHash::of(&kept)).expect("blob"),
        Some(kept)
    );
}

#[test]
fn a_run_another_store_moved_on_is_refused_and_nothing_of_the_step_is_written() {
    let url = TempPostgres::shared().fresh_database();
    let (a, b) = (open(&url), open(&url));
    let run = a
        .create_run("w", "s", &state(0), "loop", NOW)
        .expect("create_run");
    a.commit(&checkpoint(run, 1, &state(1)), &[], &RunStatus::Running)
        .expect("a commits 1");
    b.commit(
        &checkpoint(run, 2, b"b's state"),
        &[note("b")],
        &RunStatus::Running,
    )
    .expect("b commits 2");
    // `a` remembers head 1: its statement finds the run moved on, writes nothing, and the
    // transaction says why.
    let ours = format!("{{\"a's own state\":\"{}\"}}", "x".repeat(100)).into_bytes();
    match a.commit(
        &checkpoint(run, 2, &ours),
        &[note("a")],
        &RunStatus::Running,
    ) {
        Err(StoreError::Conflict {
            expected: 3,
            got: 2,
            ..
        }) => {}
        other => panic!("expected a conflict, got {other:?}"),
    }
    assert_eq!(
        a.head(run).expect("head").expect("head").state,
        b"b's state"
    );
    assert_eq!(a.events(run).expect("events"), [note("b")]);
    assert_eq!(a.get_blob(&ContentHash::of(&ours)).expect("blob"), None);
    // Following the new head works, and the steps after it too.
    for seq in 3..=4 {
        a.commit(&checkpoint(run, seq, &state(seq)), &[], &RunStatus::Running)
            .expect("a follows the new head");
    }
    assert_eq!(a.head(run).expect("head").expect("head").state, state(4));
}

/// Runs `write` while the server commits but cannot answer: a synchronous standby that never
/// answers holds the answer back, and the store's session is then terminated, which
/// PostgreSQL reports as "committed locally". The store's retry meets a server that answers.
fn with_the_answer_lost(url: &str, write: impl FnOnce()) {
    let mut admin = admin(url);
    // One statement per call: ALTER SYSTEM refuses a transaction block.
    for sql in [
        "SET synchronous_commit = local",
        "ALTER SYSTEM SET synchronous_standby_names = 'nobody'",
        "SELECT pg_reload_conf()",
    ] {
        admin
            .batch_execute(sql)
            .expect("a standby that never answers");
    }
    thread::sleep(Duration::from_millis(300));
    let cutter = thread::spawn(move || {
        let started = Instant::now();
        loop {
            let waiting: Option<i32> = admin
                .query_opt(
                    "SELECT pid FROM pg_stat_activity
                     WHERE application_name = 'gavel' AND wait_event = 'SyncRep'",
                    &[],
                )
                .expect("pg_stat_activity")
                .map(|row| row.get(0));
            if let Some(pid) = waiting {
                admin
                    .execute("SELECT pg_terminate_backend($1)", &[&pid])
                    .expect("terminate the store's session");
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the commit never waited for the standby"
            );
            thread::sleep(Duration::from_millis(20));
        }
        for sql in [
            "ALTER SYSTEM RESET synchronous_standby_names",
            "SELECT pg_reload_conf()",
        ] {
            admin.batch_execute(sql).expect("no standby again");
        }
    });
    write();
    cutter.join().expect("cutter");
}

/// A step the server committed but whose answer was lost: the retry on a new connection finds
/// it written and reports it done, instead of writing it again or calling it a conflict.
#[test]
fn a_step_committed_whose_answer_was_lost_is_done_once() {
    let pg = TempPostgres::start();
    let url = pg.url();
    let store = open(&url).reconnect_for(Duration::from_secs(30));
    let run = store
        .create_run("w", "s", &state(0), "loop", NOW)
        .expect("create_run");
    store
        .commit(&checkpoint(run, 1, &state(1)), &[], &RunStatus::Running)
        .expect("commit 1");
    with_the_answer_lost(&url, || {
        store
            .commit(
                &checkpoint(run, 2, &state(2)),
                &[note("step 2")],
                &RunStatus::Running,
            )
            .expect("the step is done, once");
    });
    assert_eq!(
        store.head(run).expect("head").expect("head").state,
        state(2)
    );
    assert_eq!(store.events(run).expect("events"), [note("step 2")]);
    store
        .commit(&checkpoint(run, 3, &state(3)), &[], &RunStatus::Running)
        .expect("the next step");
}

/// The same for a journaled step result: the retry finds its own result and is done.
#[test]
fn a_result_journaled_whose_answer_was_lost_is_kept_once() {
    let pg = TempPostgres::start();
    let url = pg.url();
    let store = open(&url).reconnect_for(Duration::from_secs(30));
    let run = store
        .create_run("w", "s", &state(0), "loop", NOW)
        .expect("create_run");
    let raw = b"the answer as the provider sent it".to_vec();
    with_the_answer_lost(&url, || {
        store
            .put_write_with_blobs(run, "1:loop:call", b"the answer", &[&raw], NOW)
            .expect("journaled, once");
    });
    assert_eq!(
        store.journal(run).expect("journal"),
        [("1:loop:call".to_owned(), b"the answer".to_vec())]
    );
    assert_eq!(
        store.get_blob(&ContentHash::of(&raw)).expect("blob"),
        Some(raw)
    );
}
