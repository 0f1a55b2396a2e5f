//! What only the PostgreSQL store promises, on a real server: locks the server frees when their
//! holder is killed, many writers on one database, a server that goes away and comes back, a
//! schema from a newer gavel, and a URL whose password is never shown.

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use gavel_core::{
    CHECKPOINT_FORMAT, Checkpoint, Event, EventKind, LockInfo, RunId, RunStatus, RunStore,
    SpendStore, StoreError,
};
use gavel_store::PgStore;
use gavel_store_testkit::TempPostgres;

const NOW: &str = "2026-01-30T14:33:20Z";

fn holder(pid: u32, command: &str) -> LockInfo {
    LockInfo {
        pid,
        host: "build-7".into(),
        command: command.into(),
        since: NOW.into(),
    }
}

fn note(text: String) -> Event {
    Event {
        at: NOW.into(),
        kind: EventKind::Note { text },
    }
}

fn open(url: &str) -> PgStore {
    PgStore::open(url).unwrap_or_else(|e| panic!("opening {url}: {e:?}"))
}

/// A checkpoint of a loop node after `seq - 1` (shared with `postgres_steps.rs`).
pub(crate) fn checkpoint(run: RunId, seq: u64, state: &[u8]) -> Checkpoint {
    Checkpoint {
        run,
        seq,
        parent: Some(seq - 1),
        node: Some("loop".into()),
        next: Some("loop".into()),
        state: state.to_vec(),
        format: CHECKPOINT_FORMAT,
        created_at: NOW.into(),
    }
}

#[test]
fn a_second_store_is_refused_by_name_and_a_listing_sees_the_holder() {
    let url = TempPostgres::shared().fresh_database();
    let (a, b) = (open(&url), open(&url));
    let run = a.create_run("w", "s", b"{}", "n", NOW).expect("create_run");
    assert_eq!(b.holder(run).expect("holder"), None);
    let lock = a.lock(run, &holder(11, "gavel resume 1")).expect("lock");
    match b.lock(run, &holder(22, "gavel abort 1")) {
        Err(StoreError::Locked { holder: h, .. }) => {
            assert_eq!(h, holder(11, "gavel resume 1"));
            assert!(h.to_string().contains("pid 11 on build-7"), "{h}");
        }
        other => panic!("expected Locked, got {other:?}"),
    }
    assert_eq!(
        b.holder(run).expect("holder"),
        Some(holder(11, "gavel resume 1"))
    );
    drop(lock);
    let again = b
        .lock(run, &holder(22, "gavel abort 1"))
        .expect("free after drop");
    assert_eq!(
        a.holder(run).expect("holder"),
        Some(holder(22, "gavel abort 1")),
        "the listing names the new holder, not the old row"
    );
    drop(again);
    assert_eq!(a.holder(run).expect("holder"), None);
}

const HELPER_ENV: &str = "GAVEL_STORE_TEST_PG_LOCK_HELPER";

fn helper_test_name() -> String {
    const HELPER: &str = "helper_hold_a_postgres_lock_until_killed";
    match module_path!().split_once("::") {
        Some((_, module)) => format!("{module}::{HELPER}"),
        None => HELPER.to_owned(),
    }
}

/// Not a test on its own: the process `a_killed_holder_frees_the_run_at_once` starts and kills.
#[test]
#[ignore = "a helper process of a_killed_holder_frees_the_run_at_once, not a test"]
fn helper_hold_a_postgres_lock_until_killed() {
    let spec = std::env::var(HELPER_ENV)
        .unwrap_or_else(|_| panic!("{HELPER_ENV} is not set: this is a helper process"));
    let mut parts = spec.splitn(3, '|');
    let (Some(url), Some(run), Some(ready)) = (parts.next(), parts.next(), parts.next()) else {
        panic!("bad helper spec {spec:?}");
    };
    let store = open(url);
    let run = RunId(run.parse().expect("run id"));
    let _lock = store
        .lock(run, &holder(std::process::id(), "lock helper"))
        .expect("helper lock");
    fs::write(ready, b"ready").expect("ready file");
    thread::sleep(Duration::from_secs(60));
}

#[test]
fn a_killed_holder_frees_the_run_at_once() {
    let url = TempPostgres::shared().fresh_database();
    let store = open(&url);
    let run = store
        .create_run("w", "s", b"{}", "n", NOW)
        .expect("create_run");
    let dir = tempfile::tempdir().expect("tempdir");
    let ready: PathBuf = dir.path().join("ready");
    let mut child = Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            &helper_test_name(),
            "--ignored",
            "--test-threads=1",
        ])
        .env(HELPER_ENV, format!("{url}|{run}|{}", ready.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn helper");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !ready.exists() {
        if Instant::now() > deadline || child.try_wait().expect("try_wait").is_some() {
            let _ = child.kill();
            panic!("the helper never took the lock");
        }
        thread::sleep(Duration::from_millis(20));
    }
    match store.lock(run, &holder(1, "me")) {
        Err(StoreError::Locked { holder: h, .. }) => {
            assert_eq!((h.pid, h.command.as_str()), (child.id(), "lock helper"));
        }
        other => panic!("expected Locked by the helper, got {other:?}"),
    }
    child.kill().expect("kill -9 the helper");
    child.wait().expect("wait");
    // At once: `lock` waits out a holder that is going away for under a second, no longer.
    store
        .lock(run, &holder(1, "me"))
        .expect("the server released the dead holder's lock");
}

#[test]
fn eight_writers_lose_nothing_and_exactly_one_claims_a_slug() {
    let url = TempPostgres::shared().fresh_database();
    let shared_run = open(&url)
        .create_run("w", "shared", b"{}", "n", NOW)
        .expect("create_run");
    let barrier = Arc::new(Barrier::new(8));
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let (url, barrier) = (url.clone(), barrier.clone());
            thread::spawn(move || {
                let store = open(&url);
                barrier.wait();
                let claimed = store.create_run_claiming_slug("w", "one-slug", b"{}", "n", NOW);
                let own = store
                    .create_run("w", &format!("own-{i}"), b"{}", "n", NOW)
                    .expect("create own run");
                for seq in 1..=40u64 {
                    let state = format!("{{\"writer\":{i},\"seq\":{seq}}}");
                    let event = note(format!("{i}:{seq}"));
                    store
                        .commit(
                            &checkpoint(own, seq, state.as_bytes()),
                            &[event],
                            &RunStatus::Running,
                        )
                        .expect("commit");
                    // Everyone also appends to one shared timeline and journals a shared step.
                    store
                        .set_status(
                            shared_run,
                            &RunStatus::Running,
                            &[note(format!("{i}:{seq}"))],
                            NOW,
                        )
                        .expect("set_status");
                    store
                        .put_write(shared_run, &format!("step-{i}-{seq}"), b"done", NOW)
                        .expect("put_write");
                }
                (claimed.is_ok(), own)
            })
        })
        .collect();
    let results: Vec<(bool, RunId)> = handles
        .into_iter()
        .map(|h| h.join().expect("writer"))
        .collect();
    assert_eq!(
        results.iter().filter(|(claimed, _)| *claimed).count(),
        1,
        "exactly one writer claims the slug"
    );
    let store = open(&url);
    for (_, own) in &results {
        let head = store.head(*own).expect("head").expect("a head");
        assert_eq!(head.seq, 40);
        assert_eq!(store.events(*own).expect("events").len(), 40);
    }
    let timeline = store.events(shared_run).expect("events");
    assert_eq!(timeline.len(), 8 * 40, "no event lost");
    for i in 0..8 {
        for seq in 1..=40 {
            assert_eq!(
                store
                    .get_write(shared_run, &format!("step-{i}-{seq}"))
                    .expect("get_write")
                    .as_deref(),
                Some(&b"done"[..])
            );
        }
    }
}

#[test]
fn many_processes_opening_a_fresh_database_migrate_it_once() {
    let url = TempPostgres::shared().fresh_database();
    let handles: Vec<_> = (0..6)
        .map(|_| {
            let url = url.clone();
            thread::spawn(move || PgStore::open(&url).map(|_| ()))
        })
        .collect();
    for h in handles {
        h.join().expect("thread").expect("every open succeeds");
    }
    let mut client = postgres::Client::connect(&url, postgres::NoTls).expect("connect");
    let rows = client
        .query("SELECT version FROM gavel_schema", &[])
        .expect("schema table");
    assert_eq!(rows.len(), 1);
}

#[test]
fn a_database_from_a_newer_gavel_is_refused_and_left_alone() {
    let url = TempPostgres::shared().fresh_database();
    drop(open(&url));
    let mut client = postgres::Client::connect(&url, postgres::NoTls).expect("connect");
    client
        .batch_execute("UPDATE gavel_schema SET version = 99")
        .expect("pretend a newer gavel");
    let err = PgStore::open(&url).expect_err("a newer schema is refused");
    let text = err.to_string();
    assert!(
        text.contains("version 99") && text.contains("use a newer gavel"),
        "{text}"
    );
    let version: i32 = client
        .query_one("SELECT version FROM gavel_schema", &[])
        .expect("version")
        .get(0);
    assert_eq!(version, 99, "left alone");
}

#[test]
fn a_password_in_the_url_is_never_shown() {
    // Nothing listens on port 1: connecting fails, and the error names the URL.
    let err = PgStore::open("postgres://ann:hunter2@127.0.0.1:1/gavel?connect_timeout=2")
        .expect_err("nothing listens there");
    let text = format!("{err} {err:?}");
    assert!(!text.contains("hunter2"), "{text}");
    assert!(
        text.contains("postgres://ann:***@127.0.0.1:1/gavel"),
        "{text}"
    );
    let err = PgStore::open("postgres://ann:hunter2@[::1").expect_err("not a URL");
    assert!(!err.to_string().contains("hunter2"), "{err}");
}

#[test]
fn a_server_that_goes_away_fails_the_call_and_the_store_reconnects_when_it_is_back() {
    let pg = TempPostgres::start();
    let store = open(&pg.url()).reconnect_for(Duration::ZERO);
    let run = store
        .create_run("w", "s", b"{}", "n", NOW)
        .expect("create_run");
    store
        .commit(&checkpoint(run, 1, b"{\"a\":1}"), &[], &RunStatus::Running)
        .expect("commit");
    pg.stop();
    let err = store
        .commit(&checkpoint(run, 2, b"{\"a\":2}"), &[], &RunStatus::Running)
        .expect_err("the server is gone");
    let text = err.to_string();
    assert!(
        text.contains("PostgreSQL at postgres://postgres@"),
        "{text}"
    );
    pg.start_server();
    assert_eq!(
        store.head(run).expect("head").expect("head").seq,
        1,
        "nothing lost"
    );
    store
        .commit(&checkpoint(run, 2, b"{\"a\":2}"), &[], &RunStatus::Running)
        .expect("the store reconnects");
    assert_eq!(store.head(run).expect("head").expect("head").seq, 2);
}

#[test]
fn projects_on_one_database_never_see_each_others_runs() {
    let url = TempPostgres::shared().fresh_database();
    let app = PgStore::open_project(&url, "github.com/octo/app", &gavel_store::PgEnv::default())
        .expect("open app");
    let web = PgStore::open_project(&url, "github.com/octo/web", &gavel_store::PgEnv::default())
        .expect("open web");
    let a = app
        .create_run_claiming_slug("issue", "dark-mode", b"{}", "n", NOW)
        .expect("app run");
    // The same slug is free in another project.
    let w = web
        .create_run_claiming_slug("issue", "dark-mode", b"{}", "n", NOW)
        .expect("web run");
    assert_eq!(app.runs().expect("runs").len(), 1);
    assert_eq!(web.runs().expect("runs")[0].id, w);
    // The spend report's model calls are the project's own.
    let call = Event {
        at: NOW.into(),
        kind: EventKind::ModelCall {
            role: "drafter".into(),
            provider: "scripted".into(),
            model: "m".into(),
            ledger: None,
        },
    };
    app.commit(&checkpoint(a, 1, b"{}"), &[call], &RunStatus::Running)
        .expect("a model call in app's run");
    let calls: Vec<RunId> = app
        .model_call_events()
        .expect("app's calls")
        .into_iter()
        .map(|(run, _)| run)
        .collect();
    assert_eq!(calls, [a]);
    assert!(web.model_call_events().expect("web's calls").is_empty());
    assert_eq!(web.run(a).expect("run"), None, "a foreign run is not there");
    assert!(matches!(
        web.commit(&checkpoint(a, 1, b"{}"), &[], &RunStatus::Running),
        Err(StoreError::UnknownRun(_))
    ));
    assert!(matches!(
        web.lock(a, &holder(1, "gavel resume")),
        Err(StoreError::UnknownRun(_))
    ));
    assert_eq!(
        web.project_of(a).expect("project_of").as_deref(),
        Some("github.com/octo/app")
    );
    let all = web.runs_of_all_projects(50).expect("all projects");
    let listed: Vec<(&str, RunId)> = all.iter().map(|(p, r)| (p.as_str(), r.id)).collect();
    assert_eq!(
        listed,
        vec![("github.com/octo/web", w), ("github.com/octo/app", a)],
        "newest first"
    );
}

#[test]
fn a_server_restarted_within_the_reconnect_window_is_waited_for() {
    let pg = Arc::new(TempPostgres::start());
    let store = open(&pg.url()).reconnect_for(Duration::from_secs(60));
    let run = store
        .create_run("w", "s", b"{}", "n", NOW)
        .expect("create_run");
    pg.stop();
    let restart = {
        let pg = pg.clone();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(1_500));
            pg.start_server();
        })
    };
    store
        .commit(&checkpoint(run, 1, b"{\"a\":1}"), &[], &RunStatus::Running)
        .expect("the commit waits for the server and lands");
    restart.join().expect("restart");
    assert_eq!(store.head(run).expect("head").expect("head").seq, 1);
}

#[test]
fn a_read_only_store_reads_and_refuses_every_write() {
    let url = TempPostgres::shared().fresh_database();
    let run = open(&url)
        .create_run("issue", "dark", b"{}", "N0", "2026-01-30T14:33:20Z")
        .expect("run");
    let reader = open(&url).into_read_only();
    assert_eq!(reader.runs().expect("runs").len(), 1);
    assert!(reader.run(run).expect("run").is_some());
    let refused = reader.create_run("issue", "other", b"{}", "N0", "2026-01-30T14:33:20Z");
    assert!(refused.is_err(), "{refused:?}");
    assert_eq!(
        open(&url).runs().expect("runs").len(),
        1,
        "nothing was written"
    );
}
