//! [`NodeCtx`]: what a node can do besides changing its state.

use std::cell::RefCell;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::journal::Journal;
use super::types::{CancelToken, CrashHook, NodeError, StepError};
use super::{ANSWER_STEP, step_id};
use crate::artifact::ArtifactKind;
use crate::clock::Clock;
use crate::event::{Event, EventKind};
use crate::gate::{Choice, GateAnswer, GateRequest};
use crate::hash::ContentHash;
use crate::run::RunId;
use crate::store::{Store, StoreError};
use crate::timing::{DriveTime, Stopwatch, TimeSpent};

/// What a node can do besides changing its state: journaled steps, gate answers, events, blobs.
pub struct NodeCtx<'a> {
    pub(super) store: &'a dyn Store,
    pub(super) clock: &'a dyn Clock,
    pub(super) cancel: &'a CancelToken,
    pub(super) crash: Option<&'a CrashHook>,
    pub(super) run: RunId,
    pub(super) seq: u64,
    pub(super) node: String,
    pub(super) events: Vec<Event>,
    /// The run's step ids as this lock holder knows them: every journal read and write goes
    /// through it.
    pub(super) journal: &'a Journal,
    /// Blobs this node stored, not yet in the store: the node's checkpoint stores them in its
    /// own transaction (see [`Self::put_blob`]).
    pub(super) pending: RefCell<Vec<PendingBlob>>,
    /// The account of the drive this node runs in (see `timing.rs`).
    pub(super) drive: &'a DriveTime,
}

/// A blob kept until the node's checkpoint: its hash, bytes, and the blobs it resembles.
pub(super) struct PendingBlob {
    pub(super) hash: ContentHash,
    pub(super) bytes: Vec<u8>,
    pub(super) similar: Vec<ContentHash>,
}

impl<'a> NodeCtx<'a> {
    /// The run being driven.
    pub fn run(&self) -> RunId {
        self.run
    }

    /// The sequence number of the checkpoint this node started from.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// The deterministic id of step `name` in this node visit.
    pub fn step_id(&self, name: &str) -> String {
        step_id(self.seq, &self.node, name)
    }

    /// Runs a side effect at most once per node visit: a stored result is returned instead of
    /// running `f` again. `f` must be safe to repeat if the process dies after it finished but
    /// before its result was journaled (make it idempotent, or key it by [`Self::step_id`]).
    pub fn step<T, E>(
        &mut self,
        name: &str,
        f: impl FnOnce() -> Result<T, E>,
    ) -> Result<T, StepError<E>>
    where
        T: Serialize + DeserializeOwned,
    {
        let id = self.step_id(name);
        if let Some(bytes) = self.journal.get(self.store, &id)? {
            return serde_json::from_slice(&bytes)
                .map_err(|source| StepError::Decode { step: id, source });
        }
        let value = f().map_err(StepError::Step)?;
        self.crash_point(&format!("after-effect:{name}"));
        let bytes = serde_json::to_vec(&value).map_err(|source| StepError::Decode {
            step: id.clone(),
            source,
        })?;
        self.store_pending()?;
        self.journal
            .put(self.store, &id, &bytes, &self.clock.now_rfc3339())?;
        self.crash_point(&format!("after-journal:{name}"));
        Ok(value)
    }

    /// Like [`Self::step`] for a slow side effect outside the store (a git commit): while `f`
    /// runs, the store may tidy itself on another thread ([`RunStore::while_waiting`]).
    ///
    /// [`RunStore::while_waiting`]: crate::RunStore::while_waiting
    pub fn slow_step<T, E>(
        &mut self,
        name: &str,
        f: impl FnOnce() -> Result<T, E>,
    ) -> Result<T, StepError<E>>
    where
        T: Serialize + DeserializeOwned,
    {
        let store = self.store;
        self.step(name, || {
            let mut f = Some(f);
            let mut out = None;
            store.while_waiting(&mut || {
                if let Some(f) = f.take() {
                    out = Some(f());
                }
            });
            // A store that did not call back leaves the effect to run here.
            match (out, f.take()) {
                (Some(out), _) => out,
                (None, Some(f)) => f(),
                (None, None) => unreachable!("the effect ran but left no result"),
            }
        })
    }

    /// Like [`Self::step`] for a side effect whose result refers to blobs (a model's answer):
    /// `f` returns the result and the blobs' bytes, and both are journaled in one store
    /// transaction right after `f` returns, nothing in between.
    pub fn step_with_blobs<T, E>(
        &mut self,
        name: &str,
        f: impl FnOnce() -> Result<(T, Vec<Vec<u8>>), E>,
    ) -> Result<T, StepError<E>>
    where
        T: Serialize + DeserializeOwned,
    {
        let id = self.step_id(name);
        if let Some(bytes) = self.journal.get(self.store, &id)? {
            return serde_json::from_slice(&bytes)
                .map_err(|source| StepError::Decode { step: id, source });
        }
        let (value, blobs) = f().map_err(StepError::Step)?;
        let bytes = serde_json::to_vec(&value).map_err(|source| StepError::Decode {
            step: id.clone(),
            source,
        })?;
        let blobs: Vec<&[u8]> = blobs.iter().map(Vec::as_slice).collect();
        self.crash_point(&format!("after-effect:{name}"));
        self.store_pending()?;
        self.journal
            .put_with_blobs(self.store, &id, &bytes, &blobs, &self.clock.now_rfc3339())?;
        self.crash_point(&format!("after-journal:{name}"));
        Ok(value)
    }

    /// Journals that step `name` happened in this node visit (a marker with no result): an
    /// intent recorded before a side effect, or an attempt's start or failure.
    pub fn mark(&mut self, name: &str) -> Result<(), NodeError> {
        let marked: Result<(), StepError<std::convert::Infallible>> = self.step(name, || Ok(()));
        marked.map_err(|e| match e {
            StepError::Store(s) => NodeError::Store(s),
            other => NodeError::Failed(other.to_string()),
        })
    }

    /// A journaled result of step `name` in this node visit, read without running anything
    /// (`None` when there is none). For results an older gavel journaled.
    pub fn journaled<T: DeserializeOwned>(&self, name: &str) -> Result<Option<T>, NodeError> {
        let id = self.step_id(name);
        match self.journal.get(self.store, &id)? {
            Some(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| NodeError::Failed(format!("step {id} cannot be read: {e}"))),
            None => Ok(None),
        }
    }

    /// A journaled result of step `name` in an earlier visit of `node` (the one that started
    /// from checkpoint `seq`), or `None`. What a later node checks an earlier one did, from the
    /// journal rather than from the state (a checkpoint edited by hand carries no journal).
    pub fn journaled_in<T: DeserializeOwned>(
        &self,
        seq: u64,
        node: &str,
        name: &str,
    ) -> Result<Option<T>, NodeError> {
        let id = step_id(seq, node, name);
        match self.journal.get(self.store, &id)? {
            Some(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| NodeError::Failed(format!("step {id} cannot be read: {e}"))),
            None => Ok(None),
        }
    }

    /// The answer given to the gate of an earlier visit of `node` (the one that started from
    /// checkpoint `seq`), if one was given.
    pub fn answer_in(&self, seq: u64, node: &str) -> Result<Option<GateAnswer>, NodeError> {
        self.journaled_in(seq, node, ANSWER_STEP)
    }

    /// Whether step `name` of this node visit already has a journaled result (a replay).
    pub fn has_step(&self, name: &str) -> Result<bool, NodeError> {
        Ok(self.journal.get(self.store, &self.step_id(name))?.is_some())
    }

    /// The answer given to this node's gate, if one was given.
    pub fn answer(&self) -> Result<Option<GateAnswer>, NodeError> {
        match self.journal.get(self.store, &self.step_id(ANSWER_STEP))? {
            None => Ok(None),
            Some(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| NodeError::Failed(format!("stored gate answer cannot be read: {e}"))),
        }
    }

    /// A gate request with this node's stable gate id filled in.
    pub fn gate(&self, kind: &str, title: impl Into<String>, choices: Vec<Choice>) -> GateRequest {
        GateRequest {
            id: format!("{}@{}", self.node, self.seq),
            node: self.node.clone(),
            kind: kind.into(),
            title: title.into(),
            detail: None,
            artifacts: Vec::new(),
            choices,
            recommended: None,
            present: Box::default(),
        }
    }

    /// Adds an event to the timeline (written with the node's checkpoint).
    pub fn event(&mut self, kind: EventKind) {
        let at = self.clock.now_rfc3339();
        self.events.push(Event { at, kind });
    }

    /// Stores bytes by content hash. They reach the store with the node's checkpoint, in its
    /// transaction ([`RunStore::commit_with_blobs`]), or before any journal write of this node,
    /// so that nothing in the store names a blob it lacks; [`Self::get_blob`] reads them back
    /// meanwhile. A node that fails or is killed before its checkpoint is run again and
    /// stores them again.
    ///
    /// [`RunStore::commit_with_blobs`]: crate::RunStore::commit_with_blobs
    pub fn put_blob(&self, bytes: &[u8]) -> Result<ContentHash, NodeError> {
        self.put_blob_sharing(bytes, &[])
    }

    /// Stores bytes by content hash like [`Self::put_blob`], naming blobs they share content
    /// with (see [`RunStore::put_blob_sharing`](crate::RunStore::put_blob_sharing)).
    pub fn put_blob_sharing(
        &self,
        bytes: &[u8],
        similar: &[ContentHash],
    ) -> Result<ContentHash, NodeError> {
        let hash = ContentHash::of(bytes);
        let mut pending = self.pending.borrow_mut();
        if !pending.iter().any(|p| p.hash == hash) {
            pending.push(PendingBlob {
                hash: hash.clone(),
                bytes: bytes.to_vec(),
                similar: similar.to_vec(),
            });
        }
        Ok(hash)
    }

    /// Stores the blobs kept since the last store write (for a write that may name them).
    fn store_pending(&self) -> Result<(), StoreError> {
        let pending = std::mem::take(&mut *self.pending.borrow_mut());
        for blob in &pending {
            self.store.put_blob_sharing(&blob.bytes, &blob.similar)?;
        }
        Ok(())
    }

    /// The blobs kept for the node's checkpoint, taken.
    pub(super) fn take_pending(&self) -> Vec<PendingBlob> {
        std::mem::take(&mut *self.pending.borrow_mut())
    }

    /// Records that `bytes` were written to the lineage file `path` (repository-relative), a
    /// file of `kind`: the bytes go to the blob store (as a delta against `similar` when they
    /// repeat it) and an [`EventKind::Artifact`] names both, so another clone can write the
    /// file again, and says what the file is, so readers need not guess from its name.
    pub fn artifact(
        &mut self,
        kind: ArtifactKind,
        path: String,
        bytes: &[u8],
        similar: &[ContentHash],
    ) -> Result<(), NodeError> {
        let content = self.put_blob_sharing(bytes, similar)?;
        self.event(EventKind::Artifact {
            path,
            content: Some(content),
            kind: Some(kind),
        });
        Ok(())
    }

    /// What every run in the store spent on model calls in month `month` (`YYYY-MM`), for a
    /// team budget.
    pub fn spent_in_month(&self, month: &str) -> Result<u64, NodeError> {
        Ok(self.store.spent_in_month(month)?)
    }

    /// The ledger numbers of the model calls already recorded for this run: a node visit that
    /// halted kept its events, and when it runs again it must not record them twice.
    pub fn recorded_calls(&self) -> Result<std::collections::BTreeSet<u32>, NodeError> {
        Ok(self
            .store
            .events(self.run)?
            .into_iter()
            .filter_map(|e| match e.kind {
                EventKind::ModelCall {
                    ledger: Some(ledger),
                    ..
                } => Some(ledger.n),
                _ => None,
            })
            .collect())
    }

    /// Keeps a diff gate's audit line in a shared store (see
    /// [`AuditStore::record_audit`](crate::AuditStore::record_audit)).
    pub fn record_audit(&self, line: &str) -> Result<(), NodeError> {
        Ok(self.store.record_audit(line)?)
    }

    /// A handle on the blob store that does not borrow this context, for a journaled step to
    /// store large results out of line while [`Self::step`] holds the context.
    pub fn blobs(&self) -> Blobs<'a> {
        Blobs { store: self.store }
    }

    /// Reads bytes back by content hash (kept ones too).
    pub fn get_blob(&self, hash: &ContentHash) -> Result<Vec<u8>, NodeError> {
        if let Some(blob) = self.pending.borrow().iter().find(|p| &p.hash == hash) {
            return Ok(blob.bytes.clone());
        }
        self.store
            .get_blob(hash)?
            .ok_or_else(|| NodeError::Store(StoreError::MissingBlob(hash.clone())))
    }

    /// The clock, for timestamps that end up in artifacts.
    pub fn clock(&self) -> &dyn Clock {
        self.clock
    }

    /// Times what the node waits on outside gavel (a model, a test command) for the run's
    /// account of where its time went; copy it out before a journaled step that waits.
    pub fn stopwatch(&self) -> Stopwatch<'a> {
        Stopwatch {
            clock: self.clock,
            drive: self.drive,
        }
    }

    /// Where the run's time went so far: the accounts of its earlier drives and this drive's
    /// up to now (see `timing.rs`).
    pub fn time_spent(&self) -> Result<TimeSpent, NodeError> {
        let earlier = TimeSpent::of_events(&self.store.events(self.run)?).unwrap_or_default();
        Ok(earlier + self.drive.spent(self.clock.now()))
    }

    /// The cancellation flag, for long steps to poll.
    pub fn cancel(&self) -> &CancelToken {
        self.cancel
    }

    fn crash_point(&self, point: &str) {
        if let Some(hook) = self.crash {
            hook(point);
        }
    }
}

/// The blob store, usable inside a journaled step (see [`NodeCtx::blobs`]).
#[derive(Clone, Copy)]
pub struct Blobs<'a> {
    store: &'a dyn Store,
}

impl Blobs<'_> {
    /// Stores bytes by content hash.
    pub fn put(&self, bytes: &[u8]) -> Result<ContentHash, StoreError> {
        self.store.put_blob(bytes)
    }

    /// Reads bytes back by content hash; a missing blob is [`StoreError::MissingBlob`].
    pub fn get(&self, hash: &ContentHash) -> Result<Vec<u8>, StoreError> {
        self.store
            .get_blob(hash)?
            .ok_or_else(|| StoreError::MissingBlob(hash.clone()))
    }
}
