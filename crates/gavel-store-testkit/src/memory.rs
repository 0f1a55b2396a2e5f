//! An in-memory store with the same contract as the SQLite one, for fast tests.
//!
//! Nothing survives the process. Like the SQLite store it keeps no audit lines, and it answers
//! spend questions by reading every run's timeline. Run locks are entries in a shared map that the returned guard
//! removes when dropped, so lock contention behaves as with the SQLite store within one process.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use gavel_core::{
    AuditStore, CHECKPOINT_FORMAT, Checkpoint, CheckpointMeta, ContentHash, Event, LockInfo,
    NewBlob, RunId, RunLock, RunRecord, RunStatus, RunStore, SpendStore, StoreError,
};

/// A [`gavel_core::Store`] that keeps everything in memory.
#[derive(Debug, Default)]
pub struct MemoryStore {
    data: Mutex<Data>,
    locks: Arc<Mutex<HashMap<RunId, LockInfo>>>,
}

#[derive(Debug, Default)]
struct Data {
    last_id: i64,
    runs: BTreeMap<RunId, MemRun>,
    blobs: HashMap<ContentHash, Vec<u8>>,
}

#[derive(Debug)]
struct MemRun {
    record: RunRecord,
    checkpoints: Vec<CheckpointMeta>,
    writes: HashMap<String, ContentHash>,
    events: Vec<Event>,
}

impl Data {
    /// Adds a run with its initial checkpoint.
    fn insert_run(
        &mut self,
        workflow: &str,
        slug: &str,
        state: &[u8],
        next: &str,
        now: &str,
    ) -> RunId {
        let state_hash = self.put_blob(state);
        self.last_id += 1;
        let id = RunId(self.last_id);
        let record = RunRecord {
            id,
            workflow: workflow.to_owned(),
            slug: slug.to_owned(),
            status: RunStatus::Running,
            created_at: now.to_owned(),
            updated_at: now.to_owned(),
            head_seq: 0,
        };
        let initial = CheckpointMeta {
            seq: 0,
            parent: None,
            node: None,
            next: Some(next.to_owned()),
            state_hash,
            format: CHECKPOINT_FORMAT,
            created_at: now.to_owned(),
        };
        let run = MemRun {
            record,
            checkpoints: vec![initial],
            writes: HashMap::new(),
            events: Vec::new(),
        };
        self.runs.insert(id, run);
        id
    }

    fn run_mut(&mut self, id: RunId) -> Result<&mut MemRun, StoreError> {
        self.runs.get_mut(&id).ok_or(StoreError::UnknownRun(id))
    }

    fn run(&self, id: RunId) -> Result<&MemRun, StoreError> {
        self.runs.get(&id).ok_or(StoreError::UnknownRun(id))
    }

    fn put_blob(&mut self, bytes: &[u8]) -> ContentHash {
        let hash = ContentHash::of(bytes);
        self.blobs
            .entry(hash.clone())
            .or_insert_with(|| bytes.to_vec());
        hash
    }

    fn blob(&self, hash: &ContentHash) -> Result<Vec<u8>, StoreError> {
        self.blobs
            .get(hash)
            .cloned()
            .ok_or_else(|| StoreError::MissingBlob(hash.clone()))
    }
}

/// Holds a run's entry in the lock map until dropped.
struct MemLock {
    run: RunId,
    locks: Arc<Mutex<HashMap<RunId, LockInfo>>>,
}

impl Drop for MemLock {
    fn drop(&mut self) {
        lock_map(&self.locks).remove(&self.run);
    }
}

fn lock_map(locks: &Mutex<HashMap<RunId, LockInfo>>) -> MutexGuard<'_, HashMap<RunId, LockInfo>> {
    locks.lock().unwrap_or_else(PoisonError::into_inner)
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn data(&self) -> MutexGuard<'_, Data> {
        // Every mutation below validates before it changes anything, so a panic cannot leave
        // half of an operation behind.
        self.data.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl AuditStore for MemoryStore {}

impl SpendStore for MemoryStore {
    fn spent_in_month(&self, month: &str) -> Result<u64, StoreError> {
        gavel_core::spent_in_month_of(self, month)
    }

    fn model_call_events(&self) -> Result<Vec<(RunId, Event)>, StoreError> {
        gavel_core::model_call_events_of(self)
    }

    fn spend_totals(&self) -> Result<Vec<gavel_core::SpendTotal>, StoreError> {
        gavel_core::spend_totals_of(self)
    }
}

impl RunStore for MemoryStore {
    fn create_run_claiming_slug(
        &self,
        workflow: &str,
        slug: &str,
        state: &[u8],
        next: &str,
        now: &str,
    ) -> Result<RunId, StoreError> {
        // One lock over the check and the creation.
        let mut data = self.data();
        if let Some(run) = data.runs.values().find(|r| {
            r.record.workflow == workflow && r.record.slug == slug && !r.record.status.is_terminal()
        }) {
            return Err(StoreError::SlugTaken {
                slug: slug.to_owned(),
                run: run.record.id,
            });
        }
        Ok(data.insert_run(workflow, slug, state, next, now))
    }

    fn create_run(
        &self,
        workflow: &str,
        slug: &str,
        state: &[u8],
        next: &str,
        now: &str,
    ) -> Result<RunId, StoreError> {
        Ok(self.data().insert_run(workflow, slug, state, next, now))
    }

    fn run(&self, id: RunId) -> Result<Option<RunRecord>, StoreError> {
        Ok(self.data().runs.get(&id).map(|run| run.record.clone()))
    }

    fn runs(&self) -> Result<Vec<RunRecord>, StoreError> {
        Ok(self
            .data()
            .runs
            .values()
            .map(|run| run.record.clone())
            .collect())
    }

    fn set_status(
        &self,
        id: RunId,
        status: &RunStatus,
        events: &[Event],
        now: &str,
    ) -> Result<(), StoreError> {
        let mut data = self.data();
        let run = data.run_mut(id)?;
        run.record.status = status.clone();
        run.record.updated_at = now.to_owned();
        run.events.extend_from_slice(events);
        Ok(())
    }

    fn commit_with_blobs(
        &self,
        cp: &Checkpoint,
        events: &[Event],
        status: &RunStatus,
        blobs: &[NewBlob<'_>],
    ) -> Result<(), StoreError> {
        let mut data = self.data();
        gavel_core::check_commit(cp, data.run(cp.run)?.record.head_seq)?;
        for blob in blobs {
            data.put_blob(blob.bytes);
        }
        let state_hash = data.put_blob(&cp.state);
        let run = data.run_mut(cp.run)?;
        run.checkpoints.push(CheckpointMeta {
            seq: cp.seq,
            parent: cp.parent,
            node: cp.node.clone(),
            next: cp.next.clone(),
            state_hash,
            format: cp.format,
            created_at: cp.created_at.clone(),
        });
        run.events.extend_from_slice(events);
        run.record.status = status.clone();
        run.record.head_seq = cp.seq;
        run.record.updated_at = cp.created_at.clone();
        Ok(())
    }

    fn head(&self, id: RunId) -> Result<Option<Checkpoint>, StoreError> {
        let data = self.data();
        let Some(meta) = data.run(id)?.checkpoints.last() else {
            return Ok(None);
        };
        Ok(Some(Checkpoint {
            run: id,
            seq: meta.seq,
            parent: meta.parent,
            node: meta.node.clone(),
            next: meta.next.clone(),
            state: data.blob(&meta.state_hash)?,
            format: meta.format,
            created_at: meta.created_at.clone(),
        }))
    }

    fn checkpoints(&self, id: RunId) -> Result<Vec<CheckpointMeta>, StoreError> {
        Ok(self.data().run(id)?.checkpoints.clone())
    }

    fn journal(&self, id: RunId) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        let data = self.data();
        let mut entries = data
            .run(id)?
            .writes
            .iter()
            .map(|(step, hash)| Ok((step.clone(), data.blob(hash)?)))
            .collect::<Result<Vec<_>, StoreError>>()?;
        entries.sort();
        Ok(entries)
    }

    fn get_write(&self, id: RunId, step: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let data = self.data();
        data.run(id)?
            .writes
            .get(step)
            .map(|hash| data.blob(hash))
            .transpose()
    }

    fn put_write(&self, id: RunId, step: &str, value: &[u8], _now: &str) -> Result<(), StoreError> {
        let mut data = self.data();
        let hash = ContentHash::of(value);
        if let Some(existing) = data.run(id)?.writes.get(step) {
            return if *existing == hash {
                Ok(())
            } else {
                Err(StoreError::WriteConflict {
                    run: id,
                    step: step.to_owned(),
                })
            };
        }
        data.put_blob(value);
        data.run_mut(id)?.writes.insert(step.to_owned(), hash);
        Ok(())
    }

    fn events(&self, id: RunId) -> Result<Vec<Event>, StoreError> {
        Ok(self.data().run(id)?.events.clone())
    }

    fn put_blob(&self, bytes: &[u8]) -> Result<ContentHash, StoreError> {
        Ok(self.data().put_blob(bytes))
    }

    fn get_blob(&self, hash: &ContentHash) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.data().blobs.get(hash).cloned())
    }

    fn lock(&self, id: RunId, holder: &LockInfo) -> Result<RunLock, StoreError> {
        self.data().run(id)?;
        let mut locks = lock_map(&self.locks);
        if let Some(current) = locks.get(&id) {
            return Err(StoreError::Locked {
                run: id,
                holder: current.clone(),
            });
        }
        locks.insert(id, holder.clone());
        Ok(RunLock::new(Box::new(MemLock {
            run: id,
            locks: Arc::clone(&self.locks),
        })))
    }

    fn holder(&self, id: RunId) -> Result<Option<LockInfo>, StoreError> {
        self.data().run(id)?;
        Ok(lock_map(&self.locks).get(&id).cloned())
    }
}
