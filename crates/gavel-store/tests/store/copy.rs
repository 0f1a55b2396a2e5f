//! Copying runs between stores: SQLite to PostgreSQL and back, whole and verified, and a
//! second copy that copies nothing twice.

use gavel_core::{
    CHECKPOINT_FORMAT, CallLedger, Checkpoint, Event, EventKind, RunId, RunStatus, RunStore,
    SpendStore, Store,
};
use gavel_store::copy::{CopyError, copy_runs};
use gavel_store::{PgStore, SqliteStore};
use gavel_store_testkit::MemoryStore;
use gavel_store_testkit::TempPostgres;

const NOW: &str = "2026-01-30T14:33:20Z";
const LATER: &str = "2026-01-30T15:00:00Z";

/// A run with everything a real one has: checkpoints, a journaled call whose answer is a blob,
/// a model-call event naming its prompt and answer, an artifact with its content, and a status.
fn fill(store: &dyn Store, slug: &str, done: bool) -> RunId {
    let run = store
        .create_run("issue", slug, b"{\"n\":0}", "N0_load_brief", NOW)
        .expect("create_run");
    let prompt = format!("the prompt of {slug}, long enough to be compressed ... ").repeat(20);
    let answer = store
        .put_blob(format!("the answer of {slug}").as_bytes())
        .expect("blob");
    let prompt_hash = store.put_blob(prompt.as_bytes()).expect("blob");
    let draft = store
        .put_blob(format!("# Draft of {slug}").as_bytes())
        .expect("blob");
    for seq in 1..=3u64 {
        let state = format!("{{\"n\":{seq},\"draft\":\"{}\"}}", draft.as_str());
        store
            .commit(
                &Checkpoint {
                    run,
                    seq,
                    parent: Some(seq - 1),
                    node: Some(format!("N{seq}")),
                    next: Some(format!("N{}", seq + 1)),
                    state: state.into_bytes(),
                    format: CHECKPOINT_FORMAT,
                    created_at: NOW.into(),
                },
                &[Event {
                    at: NOW.into(),
                    kind: EventKind::Note {
                        text: format!("step {seq}"),
                    },
                }],
                &RunStatus::Running,
            )
            .expect("commit");
    }
    let journal = format!("{{\"text_blob\":\"{}\"}}", answer.as_str());
    store
        .put_write_with_blobs(run, "N2@2/call", journal.as_bytes(), &[], NOW)
        .expect("journal");
    let call = Event {
        at: NOW.into(),
        kind: EventKind::ModelCall {
            role: "drafter".into(),
            provider: "scripted".into(),
            model: "m".into(),
            ledger: Some(Box::new(CallLedger {
                n: 1,
                requested_model: "m".into(),
                input_tokens: Some(10),
                output_tokens: Some(20),
                cached_tokens: None,
                cost_micros: Some(1_250),
                cost_source: "reported".into(),
                prompt: prompt_hash,
                response: answer,
                attempts: 1,
                warning: None,
                lost: false,
                credential: None,
                quota_exhausted: Vec::new(),
                form: None,
            })),
        },
    };
    let artifact = Event {
        at: NOW.into(),
        kind: EventKind::Artifact {
            path: format!("docs/lineage/active/{slug}/002-draft.md"),
            content: Some(draft),
            kind: Some(gavel_core::ArtifactKind::Draft),
        },
    };
    let status = if done {
        RunStatus::Done {
            summary: "filed #1".into(),
        }
    } else {
        RunStatus::Halted {
            reason: "paused".into(),
        }
    };
    store
        .set_status(run, &status, &[call, artifact], LATER)
        .expect("status");
    run
}

fn blob_of(store: &dyn Store, run: RunId) -> Vec<u8> {
    let events = store.events(run).expect("events");
    let Some(EventKind::ModelCall {
        ledger: Some(ledger),
        ..
    }) = events
        .iter()
        .map(|e| e.kind.clone())
        .find(|k| matches!(k, EventKind::ModelCall { .. }))
    else {
        panic!("no call event");
    };
    store
        .get_blob(&ledger.prompt)
        .expect("get_blob")
        .expect("the prompt blob was copied")
}

#[test]
fn runs_go_from_sqlite_to_postgres_and_back_whole_and_a_second_copy_copies_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sqlite = SqliteStore::open(&dir.path().join("state.db")).expect("sqlite");
    let a = fill(&sqlite, "dark-mode", true);
    let b = fill(&sqlite, "search", false);
    let url = TempPostgres::shared().fresh_database();
    let pg = PgStore::open_project(&url, "github.com/octo/app", &gavel_store::PgEnv::default())
        .expect("postgres");
    // Another project's run in the target is left alone and does not count.
    let web = PgStore::open_project(&url, "github.com/octo/web", &gavel_store::PgEnv::default())
        .expect("postgres");
    fill(&web, "dark-mode", true);
    let report = copy_runs(&sqlite, &pg).expect("copy");
    assert_eq!(report.copied.len(), 2);
    assert!(report.present.is_empty());
    assert_eq!(
        (report.checkpoints, report.events, report.journal),
        (6, 10, 2)
    );
    // The dark-mode run's prompt, answer and draft are already there (web's run has the same
    // content, and blobs are shared by content): only search's three are new.
    assert_eq!(report.blobs, 3, "{report:?}");
    let again = copy_runs(&sqlite, &pg).expect("copy again");
    assert!(again.copied.is_empty(), "{again:?}");
    assert_eq!(again.present, report.copied);
    assert_eq!(pg.runs().expect("runs").len(), 2);
    let (_, b_in_pg) = report.copied[1];
    assert_eq!(blob_of(&pg, b_in_pg), blob_of(&sqlite, b));
    assert_eq!(
        pg.spent_in_month("2026-01").expect("spend"),
        3 * 1_250,
        "the team's month: both projects"
    );
    assert_eq!(web.runs().expect("runs").len(), 1);

    // And back, into a new SQLite file.
    let back = SqliteStore::open(&dir.path().join("back.db")).expect("sqlite");
    let report = copy_runs(&pg, &back).expect("copy back");
    assert_eq!(report.copied.len(), 2);
    let (_, a_back) = report.copied[0];
    assert_eq!(
        back.head(a_back).expect("head"),
        sqlite
            .head(a)
            .expect("head")
            .map(|cp| Checkpoint { run: a_back, ..cp })
    );
    assert_eq!(
        back.run(a_back).expect("run").expect("run").status,
        sqlite.run(a).expect("run").expect("run").status
    );
}

#[test]
fn a_run_being_driven_is_refused_and_nothing_is_copied() {
    let from = MemoryStore::new();
    let run = fill(&from, "dark-mode", false);
    let _held = from
        .lock(
            run,
            &gavel_core::LockInfo {
                pid: 7,
                host: String::new(),
                command: "gavel resume 1".into(),
                since: NOW.into(),
            },
        )
        .expect("lock");
    let to = MemoryStore::new();
    match copy_runs(&from, &to) {
        Err(CopyError::Driven { run: r, holder }) => {
            assert_eq!(r, run);
            assert_eq!(holder.pid, 7);
        }
        other => panic!("expected Driven, got {other:?}"),
    }
    assert!(to.runs().expect("runs").is_empty());
}
