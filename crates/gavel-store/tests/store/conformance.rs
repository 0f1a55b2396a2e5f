//! The store tests: the conformance suite against both backends, then what only the SQLite
//! store promises (sharing a file between writers, surviving a reopen and a killed lock holder,
//! refusing files it must not touch).

use std::cell::Cell;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use gavel_core::{
    CHECKPOINT_FORMAT, Checkpoint, Event, EventKind, LockInfo, RunId, RunStatus, RunStore,
    StoreError,
};
use gavel_store::SqliteStore;
use gavel_store_testkit::{MemoryStore, conformance};

const NOW: &str = "2026-01-30T14:33:20Z";

fn holder(pid: u32, command: &str) -> LockInfo {
    LockInfo {
        pid,
        host: String::new(),
        command: command.into(),
        since: NOW.into(),
    }
}

fn open(path: &Path) -> SqliteStore {
    SqliteStore::open(path).unwrap_or_else(|e| panic!("opening {}: {e:?}", path.display()))
}

fn next_checkpoint(run: RunId, seq: u64, state: &[u8]) -> Checkpoint {
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

// --- the conformance suite ----------------------------------------------------------------

#[test]
fn memory_store_passes_the_conformance_suite() {
    conformance::run_all(&|| Box::new(MemoryStore::new()));
}

#[test]
fn postgres_store_passes_the_conformance_suite() {
    let pg = gavel_store_testkit::TempPostgres::shared();
    conformance::run_all(&|| {
        Box::new(
            gavel_store::PgStore::open(&pg.fresh_database()).expect("open the PostgreSQL store"),
        )
    });
}

#[test]
fn sqlite_store_passes_the_conformance_suite() {
    let dir = tempfile::tempdir().expect("tempdir");
    let n = Cell::new(0);
    conformance::run_all(&|| {
        n.set(n.get() + 1);
        // Separate directories, so lock files of equal run ids do not collide between checks.
        Box::new(open(
            &dir.path()
                .join(format!("check-{}", n.get()))
                .join("gavel.db"),
        ))
    });
}

// --- SQLite: concurrency and durability ---------------------------------------------------

#[test]
fn two_writers_on_one_file_each_commit_200_checkpoints() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = Arc::new(dir.path().join("state").join("gavel.db"));
    let runs: Vec<RunId> = {
        let store = open(&path);
        ["left", "right"]
            .iter()
            .map(|slug| {
                store
                    .create_run("w", slug, b"0", "loop", NOW)
                    .expect("create_run")
            })
            .collect()
    };
    let writers: Vec<_> = runs
        .iter()
        .map(|&run| {
            let path = Arc::clone(&path);
            thread::spawn(move || -> Result<(), StoreError> {
                let store = SqliteStore::open(&path)?;
                for seq in 1..=200u64 {
                    let event = Event {
                        at: NOW.into(),
                        kind: EventKind::Note {
                            text: format!("{seq}"),
                        },
                    };
                    let cp = next_checkpoint(run, seq, format!("{run}:{seq}").as_bytes());
                    store.commit(&cp, &[event], &RunStatus::Running)?;
                    store.put_write(run, &format!("{seq}:loop:effect"), b"done", NOW)?;
                }
                Ok(())
            })
        })
        .collect();
    for writer in writers {
        writer
            .join()
            .expect("writer thread panicked")
            .expect("every commit succeeds");
    }

    let store = open(&path);
    for run in runs {
        let head = store.head(run).expect("head").expect("a head");
        assert_eq!(
            (head.seq, head.state),
            (200, format!("{run}:200").into_bytes())
        );
        let metas = store.checkpoints(run).expect("checkpoints");
        assert_eq!(metas.len(), 201);
        assert!(metas.iter().enumerate().all(|(i, m)| m.seq == i as u64));
        let events = store.events(run).expect("events");
        let texts: Vec<String> = events
            .iter()
            .map(|e| match &e.kind {
                EventKind::Note { text } => text.clone(),
                other => panic!("unexpected event {other:?}"),
            })
            .collect();
        assert_eq!(texts, (1..=200).map(|i| i.to_string()).collect::<Vec<_>>());
        assert_eq!(
            store.get_write(run, "200:loop:effect").expect("get_write"),
            Some(b"done".to_vec())
        );
    }
}

#[test]
fn everything_survives_closing_and_reopening() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("gavel.db");
    let (run, hash) = {
        let store = open(&path);
        let run = store
            .create_run("issue", "slug", b"s0", "start", NOW)
            .expect("create_run");
        store
            .commit(
                &next_checkpoint(run, 1, b"s1"),
                &[],
                &RunStatus::Halted {
                    reason: "cap".into(),
                },
            )
            .expect("commit");
        store
            .put_write(run, "1:loop:x", b"result", NOW)
            .expect("put_write");
        (run, store.put_blob(b"artifact").expect("put_blob"))
    };
    let store = open(&path);
    let record = store
        .run(run)
        .expect("run")
        .expect("the run is still there");
    assert_eq!(
        (record.head_seq, record.status),
        (
            1,
            RunStatus::Halted {
                reason: "cap".into()
            }
        )
    );
    assert_eq!(
        store.head(run).expect("head").map(|cp| cp.state),
        Some(b"s1".to_vec())
    );
    assert_eq!(
        store.get_write(run, "1:loop:x").expect("get_write"),
        Some(b"result".to_vec())
    );
    assert_eq!(
        store.get_blob(&hash).expect("get_blob"),
        Some(b"artifact".to_vec())
    );
    let next = store
        .create_run("issue", "second", b"s0", "start", NOW)
        .expect("create_run");
    assert!(next > run, "ids keep growing after a reopen");
}

#[test]
fn identical_payloads_are_stored_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("gavel.db");
    let store = open(&path);
    let a = store
        .create_run("w", "a", b"same", "n", NOW)
        .expect("create_run");
    let b = store
        .create_run("w", "b", b"same", "n", NOW)
        .expect("create_run");
    store
        .put_write(a, "0:n:x", b"same", NOW)
        .expect("put_write");
    store
        .put_write(b, "0:n:x", b"same", NOW)
        .expect("put_write");
    store.put_blob(b"same").expect("put_blob");
    let conn = rusqlite::Connection::open(&path).expect("open directly");
    let blobs: i64 = conn
        .query_row("SELECT COUNT(*) FROM blobs", [], |row| row.get(0))
        .expect("count");
    assert_eq!(blobs, 1);
}

#[test]
fn db_size_grows_with_content() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open(&dir.path().join("gavel.db"));
    let before = store.db_size_bytes().expect("size");
    assert!(before > 0);
    // Incompressible bytes: the store deflates what compresses.
    let mut x = 0x2545_f491_4f6c_dd1d_u64;
    let noise: Vec<u8> = (0..256 * 1024)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 56) as u8
        })
        .collect();
    store.put_blob(&noise).expect("put_blob");
    let after = store.db_size_bytes().expect("size");
    assert!(after >= before + 256 * 1024, "{before} -> {after}");
}

// --- SQLite: locks --------------------------------------------------------------------------

#[test]
fn two_stores_on_one_file_share_run_locks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("gavel.db");
    let (a, b) = (open(&path), open(&path));
    let run = a.create_run("w", "s", b"{}", "n", NOW).expect("create_run");
    let lock = a.lock(run, &holder(11, "gavel resume 1")).expect("lock");
    match b.lock(run, &holder(22, "gavel abort 1")) {
        Err(StoreError::Locked { holder: h, .. }) => assert_eq!(h, holder(11, "gavel resume 1")),
        other => panic!("expected Locked, got {other:?}"),
    }
    drop(lock);
    b.lock(run, &holder(22, "gavel abort 1"))
        .expect("free after drop");
}

const HELPER_ENV: &str = "GAVEL_STORE_TEST_LOCK_HELPER";

/// The helper's name as the test harness lists it (`conformance::helper_hold_a_lock_until_killed`
/// inside the `store` binary). Derived from `module_path!()` so that moving this module cannot
/// leave `--exact` matching nothing.
fn helper_test_name() -> String {
    const HELPER: &str = "helper_hold_a_lock_until_killed";
    // `module_path!()` starts with the crate (the test binary); the harness omits it.
    match module_path!().split_once("::") {
        Some((_, module)) => format!("{module}::{HELPER}"),
        None => HELPER.to_owned(),
    }
}

/// Not a test on its own: the process that `a_killed_lock_holder_releases_the_lock` starts
/// (with `--ignored`) and kills. It takes the lock named by the environment, signals readiness
/// with a file, and waits. Ignored so that it is never counted as a passing test: run without
/// its helper environment it has nothing to check, and it says so by failing.
#[test]
#[ignore = "a helper process of a_killed_lock_holder_releases_the_lock, not a test"]
fn helper_hold_a_lock_until_killed() {
    let spec = std::env::var(HELPER_ENV)
        .unwrap_or_else(|_| panic!("{HELPER_ENV} is not set: this is a helper process"));
    let mut parts = spec.splitn(3, '|');
    let (Some(db), Some(run), Some(ready)) = (parts.next(), parts.next(), parts.next()) else {
        panic!("bad helper spec {spec:?}");
    };
    let store = open(Path::new(db));
    let run = RunId(run.parse().expect("run id"));
    let _lock = store
        .lock(run, &holder(std::process::id(), "lock helper"))
        .expect("helper lock");
    fs::write(ready, b"ready").expect("ready file");
    thread::sleep(Duration::from_secs(60));
}

#[test]
fn a_killed_lock_holder_releases_the_lock() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("gavel.db");
    let store = open(&path);
    let run = store
        .create_run("w", "s", b"{}", "n", NOW)
        .expect("create_run");
    let ready: PathBuf = dir.path().join("ready");
    let mut child = Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            &helper_test_name(),
            "--ignored",
            "--test-threads=1",
        ])
        .env(
            HELPER_ENV,
            format!("{}|{}|{}", path.display(), run, ready.display()),
        )
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
    store
        .lock(run, &holder(1, "me"))
        .expect("the OS released the dead holder's lock");
}

// --- SQLite: files it must refuse -----------------------------------------------------------

fn sidecars(path: &Path) -> Vec<PathBuf> {
    ["-wal", "-shm", "-journal"]
        .iter()
        .map(|suffix| {
            let mut name = path.as_os_str().to_owned();
            name.push(suffix);
            PathBuf::from(name)
        })
        .filter(|p| p.exists())
        .collect()
}

fn assert_refused_untouched(path: &Path, contents: &[u8], expected_message: &str) {
    match SqliteStore::open(path) {
        Err(err @ StoreError::Corrupt { .. }) => {
            let StoreError::Corrupt { path: p, message } = &err else {
                unreachable!()
            };
            assert_eq!(p, &path.display().to_string());
            assert!(message.contains(expected_message), "message: {message}");
            let shown = err.to_string();
            assert!(
                shown.contains(&path.display().to_string()),
                "error names the file: {shown}"
            );
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
    assert_eq!(
        fs::read(path).expect("read back"),
        contents,
        "the file must not be modified"
    );
    assert_eq!(
        sidecars(path),
        Vec::<PathBuf>::new(),
        "no journal files may be created"
    );
}

#[test]
fn a_text_file_is_refused_as_corrupt_and_left_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("gavel.db");
    let text = b"this is my shopping list, not a database\n";
    fs::write(&path, text).expect("write");
    assert_refused_untouched(&path, text, "not a SQLite database");
}

#[test]
fn random_bytes_are_refused_as_corrupt_and_left_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("gavel.db");
    // A deterministic xorshift stream: 64 KiB of noise, not a SQLite header.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let bytes: Vec<u8> = (0..65_536)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 56) as u8
        })
        .collect();
    fs::write(&path, &bytes).expect("write");
    assert_refused_untouched(&path, &bytes, "not a SQLite database");
}

#[test]
fn another_programs_sqlite_database_is_refused_and_left_alone() {
    // Regression (issue 10): gavel added its schema to such a file and switched it to WAL.
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("gavel.db");
    {
        let conn = rusqlite::Connection::open(&path).expect("create");
        conn.execute_batch(
            "CREATE TABLE invoices (id INTEGER, total REAL); INSERT INTO invoices VALUES (1, 9.5);",
        )
        .expect("setup");
    }
    let before = fs::read(&path).expect("read");
    assert_refused_untouched(&path, &before, "not gavel's (it has invoices)");
    assert!(
        !dir.path().join("gavel.db-wal").exists(),
        "no write-ahead log was started"
    );
}

#[test]
fn a_database_from_a_newer_gavel_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("gavel.db");
    {
        let conn = rusqlite::Connection::open(&path).expect("create");
        conn.execute_batch("CREATE TABLE future (x); PRAGMA user_version = 5;")
            .expect("setup");
    }
    let before = fs::read(&path).expect("read");
    assert_refused_untouched(
        &path,
        &before,
        "schema version 5 is newer than this gavel supports (4)",
    );
}

#[test]
fn a_version_1_database_is_migrated_and_its_raw_blobs_still_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("gavel.db");
    let state = br#"{"draft":"written by gavel with schema version 1"}"#;
    let hash = gavel_core::ContentHash::of(state);
    {
        let conn = rusqlite::Connection::open(&path).expect("create");
        conn.execute_batch(
            "CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, workflow TEXT NOT NULL,
                 slug TEXT NOT NULL, status TEXT NOT NULL, created_at TEXT NOT NULL,
                 updated_at TEXT NOT NULL, head_seq INTEGER NOT NULL);
             CREATE TABLE blobs (hash TEXT PRIMARY KEY, data BLOB NOT NULL);
             CREATE TABLE checkpoints (run_id INTEGER NOT NULL REFERENCES runs(id),
                 seq INTEGER NOT NULL, parent_seq INTEGER, node TEXT, next_node TEXT,
                 state_hash TEXT NOT NULL REFERENCES blobs(hash), format INTEGER NOT NULL,
                 created_at TEXT NOT NULL, PRIMARY KEY (run_id, seq)) WITHOUT ROWID;
             CREATE TABLE writes (run_id INTEGER NOT NULL REFERENCES runs(id),
                 step_id TEXT NOT NULL, value_hash TEXT NOT NULL REFERENCES blobs(hash),
                 created_at TEXT NOT NULL, PRIMARY KEY (run_id, step_id)) WITHOUT ROWID;
             CREATE TABLE events (run_id INTEGER NOT NULL REFERENCES runs(id),
                 seq INTEGER NOT NULL, json TEXT NOT NULL, PRIMARY KEY (run_id, seq))
                 WITHOUT ROWID;
             PRAGMA user_version = 1;",
        )
        .expect("v1 schema");
        conn.execute(
            "INSERT INTO blobs (hash, data) VALUES (?1, ?2)",
            rusqlite::params![hash.as_str(), &state[..]],
        )
        .expect("blob");
        conn.execute_batch(&format!(
            "INSERT INTO runs VALUES (1, 'issue', 's', '\"running\"', '{NOW}', '{NOW}', 0);
             INSERT INTO checkpoints VALUES (1, 0, NULL, NULL, 'start', '{hash}', 1, '{NOW}');"
        ))
        .expect("run");
    }
    let store = open(&path);
    let head = store.head(RunId(1)).expect("head").expect("a head");
    assert_eq!(head.state, state);
    let mut cp = head.clone();
    cp.seq = 1;
    cp.parent = Some(0);
    cp.state = br#"{"draft":"written by gavel with schema version 1, and 2"}"#.to_vec();
    store
        .commit(&cp, &[], &RunStatus::Running)
        .expect("a new checkpoint after the migration");
    assert_eq!(
        store.head(RunId(1)).expect("head").expect("head").state,
        cp.state
    );
    let version: i64 = rusqlite::Connection::open(&path)
        .and_then(|c| c.query_row("PRAGMA user_version", [], |row| row.get(0)))
        .expect("user_version");
    assert_eq!(version, 4);
}

#[test]
fn open_creates_missing_directories_and_an_empty_file_is_a_new_database() {
    let dir = tempfile::tempdir().expect("tempdir");
    let nested = dir.path().join("a").join("b").join("gavel.db");
    let store = open(&nested);
    assert!(nested.exists());
    assert!(store.runs().expect("runs").is_empty());

    let empty = dir.path().join("empty.db");
    fs::write(&empty, b"").expect("write");
    let store = open(&empty);
    store
        .create_run("w", "s", b"{}", "n", NOW)
        .expect("an empty file becomes a database");
    let version: i64 = rusqlite::Connection::open(&empty)
        .and_then(|c| c.query_row("PRAGMA user_version", [], |row| row.get(0)))
        .expect("user_version");
    assert_eq!(version, 4);
}
