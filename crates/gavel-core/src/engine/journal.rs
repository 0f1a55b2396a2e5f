//! What this process knows of a run's step journal while it holds the run's lock.
//!
//! A node asks the journal before each side effect whether it already happened (was the model
//! called? the attempt marked? the commit made?), so a fresh run asks a few times per node,
//! forty times for a brief → issue run, and nearly always hears "no". Each question was a
//! store read: a transaction of its own on SQLite, a round trip to the server on PostgreSQL.
//! While this process holds the run's lock nobody else journals the run's steps, so the ids
//! of the steps journaled so far are read once when the lock is taken, each step journaled
//! through here is added, and a step id not among them has no result without asking. Results
//! themselves are still read from the store. A journal write that fails may or may not have
//! committed (a lost connection): from then on every question goes to the store again.

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};

use crate::run::RunId;
use crate::store::{RunStore, StoreError};

/// The step ids of one run's journal, as far as this process knows them (`None`: it does not,
/// ask the store).
pub(crate) struct Journal {
    run: RunId,
    steps: Mutex<Option<HashSet<String>>>,
}

impl Journal {
    /// Reads the run's step ids, for a process that has just taken the run's lock. A failed
    /// read leaves every question to the store.
    pub(crate) fn load(store: &dyn RunStore, run: RunId) -> Self {
        let steps = store
            .journal_steps(run)
            .ok()
            .map(|steps| steps.into_iter().collect());
        Self {
            run,
            steps: Mutex::new(steps),
        }
    }

    /// The journaled result of `step`.
    pub(crate) fn get(
        &self,
        store: &dyn RunStore,
        step: &str,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let absent = self
            .steps
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .is_some_and(|steps| !steps.contains(step));
        if absent {
            return Ok(None);
        }
        store.get_write(self.run, step)
    }

    /// Journals `step`'s result ([`RunStore::put_write`]).
    pub(crate) fn put(
        &self,
        store: &dyn RunStore,
        step: &str,
        value: &[u8],
        now: &str,
    ) -> Result<(), StoreError> {
        self.note(step, store.put_write(self.run, step, value, now))
    }

    /// Journals `step`'s result with the blobs it names ([`RunStore::put_write_with_blobs`]).
    pub(crate) fn put_with_blobs(
        &self,
        store: &dyn RunStore,
        step: &str,
        value: &[u8],
        blobs: &[&[u8]],
        now: &str,
    ) -> Result<(), StoreError> {
        self.note(
            step,
            store.put_write_with_blobs(self.run, step, value, blobs, now),
        )
    }

    /// Takes note of how journaling `step` went.
    fn note(&self, step: &str, written: Result<(), StoreError>) -> Result<(), StoreError> {
        let mut steps = self.steps.lock().unwrap_or_else(PoisonError::into_inner);
        match (&written, steps.as_mut()) {
            (Ok(()), Some(steps)) => {
                steps.insert(step.to_owned());
            }
            (Ok(()), None) => {}
            // Committed or not, nobody can tell: stop answering from memory.
            (Err(_), _) => *steps = None,
        }
        written
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::event::Event;
    use crate::hash::ContentHash;
    use crate::run::{Checkpoint, CheckpointMeta, RunRecord, RunStatus};
    use crate::store::{LockInfo, NewBlob, RunLock};

    /// A journal and nothing else, counting the questions it is asked.
    #[derive(Default)]
    struct JournalOnly {
        steps: Mutex<BTreeMap<String, Vec<u8>>>,
        reads: AtomicUsize,
    }

    impl RunStore for JournalOnly {
        fn get_write(&self, _: RunId, step: &str) -> Result<Option<Vec<u8>>, StoreError> {
            self.reads.fetch_add(1, Ordering::SeqCst);
            Ok(self.steps.lock().expect("lock").get(step).cloned())
        }
        fn put_write(
            &self,
            run: RunId,
            step: &str,
            value: &[u8],
            _: &str,
        ) -> Result<(), StoreError> {
            let mut steps = self.steps.lock().expect("lock");
            match steps.get(step) {
                Some(v) if v != value => Err(StoreError::WriteConflict {
                    run,
                    step: step.to_owned(),
                }),
                _ => {
                    steps.insert(step.to_owned(), value.to_vec());
                    Ok(())
                }
            }
        }
        fn journal(&self, _: RunId) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
            Ok(self
                .steps
                .lock()
                .expect("lock")
                .clone()
                .into_iter()
                .collect())
        }
        fn create_run(
            &self,
            _: &str,
            _: &str,
            _: &[u8],
            _: &str,
            _: &str,
        ) -> Result<RunId, StoreError> {
            unreachable!("only the journal is used here")
        }
        fn create_run_claiming_slug(
            &self,
            _: &str,
            _: &str,
            _: &[u8],
            _: &str,
            _: &str,
        ) -> Result<RunId, StoreError> {
            unreachable!("only the journal is used here")
        }
        fn run(&self, _: RunId) -> Result<Option<RunRecord>, StoreError> {
            unreachable!("only the journal is used here")
        }
        fn runs(&self) -> Result<Vec<RunRecord>, StoreError> {
            unreachable!("only the journal is used here")
        }
        fn set_status(
            &self,
            _: RunId,
            _: &RunStatus,
            _: &[Event],
            _: &str,
        ) -> Result<(), StoreError> {
            unreachable!("only the journal is used here")
        }
        fn commit_with_blobs(
            &self,
            _: &Checkpoint,
            _: &[Event],
            _: &RunStatus,
            _: &[NewBlob<'_>],
        ) -> Result<(), StoreError> {
            unreachable!("only the journal is used here")
        }
        fn head(&self, _: RunId) -> Result<Option<Checkpoint>, StoreError> {
            unreachable!("only the journal is used here")
        }
        fn checkpoints(&self, _: RunId) -> Result<Vec<CheckpointMeta>, StoreError> {
            unreachable!("only the journal is used here")
        }
        fn events(&self, _: RunId) -> Result<Vec<Event>, StoreError> {
            unreachable!("only the journal is used here")
        }
        fn put_blob(&self, _: &[u8]) -> Result<ContentHash, StoreError> {
            unreachable!("only the journal is used here")
        }
        fn get_blob(&self, _: &ContentHash) -> Result<Option<Vec<u8>>, StoreError> {
            unreachable!("only the journal is used here")
        }
        fn lock(&self, _: RunId, _: &LockInfo) -> Result<RunLock, StoreError> {
            unreachable!("only the journal is used here")
        }
        fn holder(&self, _: RunId) -> Result<Option<LockInfo>, StoreError> {
            unreachable!("only the journal is used here")
        }
    }

    #[test]
    fn absent_steps_are_answered_from_memory_and_the_rest_by_the_store() {
        let store = JournalOnly::default();
        let run = RunId(1);
        store
            .put_write(run, "0:a:old", b"before the lock", "t")
            .expect("put");
        let journal = Journal::load(&store, run);
        let reads = |n| assert_eq!(store.reads.load(Ordering::SeqCst), n);
        assert_eq!(journal.get(&store, "0:a:new").expect("get"), None);
        reads(0);
        assert_eq!(
            journal.get(&store, "0:a:old").expect("get").as_deref(),
            Some(&b"before the lock"[..])
        );
        reads(1);
        journal.put(&store, "0:a:new", b"now", "t").expect("put");
        assert_eq!(
            journal.get(&store, "0:a:new").expect("get").as_deref(),
            Some(&b"now"[..])
        );
        reads(2);
        // Written behind the journal's back, which the run's lock rules out: not seen.
        store.put_write(run, "0:a:side", b"x", "t").expect("put");
        assert_eq!(journal.get(&store, "0:a:side").expect("get"), None);
        reads(2);
        // A failed write (a conflicting value here): from then on the store is asked.
        assert!(journal.put(&store, "0:a:new", b"other", "t").is_err());
        assert_eq!(
            journal.get(&store, "0:a:side").expect("get").as_deref(),
            Some(&b"x"[..])
        );
        reads(3);
    }
}
