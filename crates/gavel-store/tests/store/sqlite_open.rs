//! Opening the SQLite store from many processes (here: threads with their own connections) at
//! the same moment, as parallel `gavel` commands do on a fresh repository; and what closing it
//! leaves on disk.

use std::sync::{Arc, Barrier};

use gavel_core::RunStore;
use gavel_store::SqliteStore;

#[test]
fn many_connections_creating_the_database_at_once_all_succeed() {
    for round in 0..20 {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = Arc::new(dir.path().join("state.db"));
        let barrier = Arc::new(Barrier::new(8));
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let (path, barrier) = (Arc::clone(&path), Arc::clone(&barrier));
                std::thread::spawn(move || {
                    barrier.wait();
                    let store = SqliteStore::open(&path)?;
                    store.runs().map(|r| r.len())
                })
            })
            .collect();
        for h in handles {
            let result = h.join().expect("thread");
            assert!(matches!(result, Ok(0)), "round {round}: {result:?}");
        }
    }
}

/// `len` bytes that deflate cannot shrink (a xorshift stream), so the log grows by about `len`.
fn incompressible(len: usize, mut seed: u64) -> Vec<u8> {
    (0..len)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed.to_le_bytes()[0]
        })
        .collect()
}

#[test]
fn a_small_log_is_left_for_the_next_process_and_a_large_one_is_copied_at_close() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    let wal = dir.path().join("state.db-wal");
    let small = {
        let store = SqliteStore::open(&path).expect("open");
        // About two brief → issue runs' worth of log.
        store.put_blob(&incompressible(1536 << 10, 1)).expect("put")
    };
    let kept = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
    assert!(
        kept > 1536 << 10,
        "a log under 2 MiB stays at close ({kept} bytes)"
    );
    // The next process sees what the log holds.
    let big = {
        let store = SqliteStore::open(&path).expect("reopen");
        assert!(store.get_blob(&small).expect("get").is_some());
        // Past the 2 MiB limit, short of SQLite's own checkpoint at about 4 MiB.
        let mut last = None;
        for i in 0..6 {
            last = Some(
                store
                    .put_blob(&incompressible(512 << 10, 2 + i))
                    .expect("put"),
            );
        }
        last.expect("blobs")
    };
    assert!(
        std::fs::metadata(&wal).map_or(true, |m| m.len() == 0),
        "a log over the limit is copied into the database at close"
    );
    let store = SqliteStore::open(&path).expect("reopen");
    assert!(store.get_blob(&big).expect("get").is_some());
    assert!(store.get_blob(&small).expect("get").is_some());
}

#[test]
fn a_read_only_store_reads_and_refuses_every_write() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    let run = SqliteStore::open(&path)
        .expect("open")
        .create_run("issue", "dark", b"{}", "N0", "2026-01-30T14:33:20Z")
        .expect("run");
    let reader = SqliteStore::open(&path).expect("reopen");
    reader.set_read_only().expect("read-only");
    assert_eq!(reader.runs().expect("runs").len(), 1);
    assert!(reader.run(run).expect("run").is_some());
    let refused = reader.create_run("issue", "other", b"{}", "N0", "2026-01-30T14:33:20Z");
    assert!(refused.is_err(), "{refused:?}");
    drop(reader);
    let again = SqliteStore::open(&path).expect("reopen");
    assert_eq!(again.runs().expect("runs").len(), 1, "nothing was written");
}

fn pragma(path: &std::path::Path, name: &str) -> i64 {
    let conn = rusqlite::Connection::open(path).expect("open");
    conn.pragma_query_value(None, name, |row| row.get(0))
        .expect("pragma")
}

#[test]
fn a_new_store_has_2_kib_pages_and_an_existing_one_keeps_its_own() {
    let dir = tempfile::tempdir().expect("tempdir");
    let new = dir.path().join("new.db");
    let store = SqliteStore::open(&new).expect("a new store");
    store
        .create_run("toy", "s", b"{}", "a", "2026-01-01T00:00:00Z")
        .expect("a run");
    drop(store);
    assert_eq!(pragma(&new, "page_size"), 2048);

    // A store created with SQLite's default page size (as gavel created them before) keeps it,
    // and its data, when this build opens and uses it.
    let old = dir.path().join("old.db");
    {
        let conn = rusqlite::Connection::open(&old).expect("open");
        conn.execute_batch("PRAGMA page_size = 4096; PRAGMA journal_mode = WAL;")
            .expect("an empty WAL database with 4 KiB pages");
    }
    let store = SqliteStore::open(&old).expect("the old store");
    let run = store
        .create_run("toy", "s", b"{}", "a", "2026-01-01T00:00:00Z")
        .expect("a run");
    assert!(store.run(run).expect("read").is_some());
    drop(store);
    assert_eq!(pragma(&old, "page_size"), 4096);
}
