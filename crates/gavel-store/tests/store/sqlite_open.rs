//! Opening the SQLite store from many processes (here: threads with their own connections) at
//! the same moment, as parallel `gavel` commands do on a fresh repository.

use std::sync::{Arc, Barrier};

use gavel_core::Store;
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
