//! The checkpoint-store contract every storage backend implements, split by concern.
//!
//! A store keeps three kinds of record, each behind a trait of its own, so that code needing
//! one asks for only that one:
//! - [`RunStore`]: runs and what drives them: checkpoints (linked to their parents, with a
//!   format version), the journal of finished side-effect steps ("writes", keyed by
//!   deterministic step ids, which resume re-applies), the event timeline, content-addressed
//!   blobs and run locks. The engine, `gavel show` and the report's run pages need this.
//! - [`AuditStore`]: the diff gates' decisions (their audit lines), kept where every machine of
//!   a team can read them. `gavel audit` and the diff gate need this.
//! - [`SpendStore`]: the spend ledger across runs: every model call with its cost, and a
//!   month's total. Team budgets and the report's spend page need this.
//!
//! [`Store`] is the three together, implemented for every type that implements all three, so
//! code that needs everything (the engine, copying runs) keeps one bound and a `&dyn Store`
//! turns into any one part (`&dyn Store as &dyn AuditStore`). `gavel-store` provides SQLite and
//! PostgreSQL implementations; `gavel-store-testkit` an in-memory one and one conformance suite
//! that all three pass.

use std::any::Any;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::event::Event;
use crate::hash::ContentHash;
use crate::run::{CHECKPOINT_FORMAT, Checkpoint, CheckpointMeta, RunId, RunRecord, RunStatus};
use crate::run_filter::{RunFilter, RunPage};
use crate::spend::SpendTotal;

/// What the model calls among `events` made in month `month` (`YYYY-MM`) cost, in micro-USD.
pub fn month_cost(events: &[Event], month: &str) -> u64 {
    events
        .iter()
        .filter(|e| e.at.get(..7) == Some(month))
        .filter_map(|e| match &e.kind {
            crate::event::EventKind::ModelCall {
                ledger: Some(ledger),
                ..
            } => ledger.cost_micros,
            _ => None,
        })
        .fold(0u64, u64::saturating_add)
}

/// Who holds a run's lock, to name them when someone else tries to drive it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockInfo {
    pub pid: u32,
    /// The holder's machine (empty when unknown: a lock written by an older gavel).
    #[serde(default)]
    pub host: String,
    /// The command line of the holder (for example `gavel resume 3`).
    pub command: String,
    /// When the lock was taken (RFC 3339).
    pub since: String,
}

impl fmt::Display for LockInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pid == 0 {
            // The store could not read a name (the holder died while writing it).
            return f.write_str(&self.command);
        }
        write!(f, "pid {}", self.pid)?;
        if !self.host.is_empty() {
            write!(f, " on {}", self.host)?;
        }
        write!(f, " (`{}`, since {})", self.command, self.since)
    }
}

/// Exclusive right to drive a run; released on drop (and by the OS if the process dies).
pub struct RunLock {
    _guard: Box<dyn Any + Send>,
}

impl RunLock {
    /// Wraps a backend-specific guard.
    pub fn new(guard: Box<dyn Any + Send>) -> Self {
        Self { _guard: guard }
    }
}

impl fmt::Debug for RunLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RunLock")
    }
}

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    #[error("run {0} does not exist")]
    UnknownRun(RunId),
    #[error("slug `{slug}` is already in use (run {run} is using it)")]
    SlugTaken { slug: String, run: RunId },
    #[error("run {run} is being driven by another process: {holder}")]
    Locked { run: RunId, holder: LockInfo },
    #[error("checkpoint conflict on run {run}: expected seq {expected}, got {got}")]
    Conflict { run: RunId, expected: u64, got: u64 },
    #[error("step `{step}` of run {run} is already journaled with a different result")]
    WriteConflict { run: RunId, step: String },
    #[error("checkpoint format {found} is newer than this gavel understands ({supported})")]
    NewerFormat { found: u32, supported: u32 },
    #[error("the state database {path} is not usable: {message}")]
    Corrupt { path: String, message: String },
    #[error("blob {0} is missing from the store")]
    MissingBlob(ContentHash),
    #[error("storage failure: {message}")]
    Backend {
        message: String,
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
}

impl StoreError {
    /// A backend failure with its cause.
    pub fn backend(
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self::Backend {
            message: message.into(),
            source: Some(Box::new(source)),
        }
    }
}

/// A blob to store with a checkpoint ([`RunStore::commit_with_blobs`]): its bytes, and the stored
/// blobs it shares content with (see [`RunStore::put_blob_sharing`]).
#[derive(Debug, Clone, Copy)]
pub struct NewBlob<'b> {
    pub bytes: &'b [u8],
    pub similar: &'b [ContentHash],
}

/// A place to keep runs: their checkpoints, journals, timelines, blobs and locks.
/// Implementations must be safe to share between threads, and the SQLite one between processes.
pub trait RunStore: Send + Sync {
    /// Creates a run whose initial checkpoint (seq 0) holds `state` and will run `next` first.
    fn create_run(
        &self,
        workflow: &str,
        slug: &str,
        state: &[u8],
        next: &str,
        now: &str,
    ) -> Result<RunId, StoreError>;

    /// Like [`Self::create_run`], but only while no unfinished run (not done, not aborted) of
    /// `workflow` uses `slug`: the check and the creation are one transaction, so of several
    /// processes starting the same slug at once exactly one gets a run and the others get
    /// [`StoreError::SlugTaken`] having written nothing.
    fn create_run_claiming_slug(
        &self,
        workflow: &str,
        slug: &str,
        state: &[u8],
        next: &str,
        now: &str,
    ) -> Result<RunId, StoreError>;

    /// One run, if it exists.
    fn run(&self, id: RunId) -> Result<Option<RunRecord>, StoreError>;

    /// Every run, oldest first.
    fn runs(&self) -> Result<Vec<RunRecord>, StoreError>;

    /// The runs named `slug` (of `workflow` only, when given), oldest first: what finding a
    /// run by its name needs (the run a new start would collide with, `gavel resume SLUG`)
    /// without reading every run. The default filters [`Self::runs`]; the stores answer from
    /// an index, so the cost does not grow with the number of runs.
    fn runs_with_slug(
        &self,
        slug: &str,
        workflow: Option<&str>,
    ) -> Result<Vec<RunRecord>, StoreError> {
        Ok(self
            .runs()?
            .into_iter()
            .filter(|r| r.slug == slug && workflow.is_none_or(|w| r.workflow == w))
            .collect())
    }

    /// The newest `limit` runs, newest first: what a listing shows without reading every run.
    fn recent_runs(&self, limit: usize) -> Result<Vec<RunRecord>, StoreError> {
        let mut runs = self.runs()?;
        runs.reverse();
        runs.truncate(limit);
        Ok(runs)
    }

    /// The runs `filter` matches, newest first, skipping `offset` of them and keeping at most
    /// `limit`, with how many match in all: a listing's page without reading every run. The
    /// default filters [`Self::runs`] ([`RunFilter::page_of`]); the stores select and count in
    /// one query each.
    fn find_runs(
        &self,
        filter: &RunFilter,
        offset: usize,
        limit: usize,
    ) -> Result<RunPage, StoreError> {
        Ok(filter.page_of(self.runs()?, offset, limit))
    }

    /// The workflows this store has runs of, each once, sorted: what a listing offers to
    /// filter by.
    fn workflows(&self) -> Result<Vec<String>, StoreError> {
        let mut names: Vec<String> = self.runs()?.into_iter().map(|r| r.workflow).collect();
        names.sort();
        names.dedup();
        Ok(names)
    }

    /// Calls `wait` once: something slow the caller does outside the store (a git commit),
    /// during which the store may do its housekeeping on another thread, done by the time this
    /// returns. The default just calls `wait`.
    fn while_waiting(&self, wait: &mut dyn FnMut()) {
        wait();
    }

    /// Changes a run's status without a new checkpoint, appending `events`.
    fn set_status(
        &self,
        id: RunId,
        status: &RunStatus,
        events: &[Event],
        now: &str,
    ) -> Result<(), StoreError>;

    /// Appends a checkpoint, its events and the run's new status in one transaction.
    /// `cp.seq` must be exactly the head's seq + 1 and `cp.parent` the head's seq.
    fn commit(
        &self,
        cp: &Checkpoint,
        events: &[Event],
        status: &RunStatus,
    ) -> Result<(), StoreError> {
        self.commit_with_blobs(cp, events, status, &[])
    }

    /// Like [`Self::commit`], storing `blobs` (the state or the events may name them) in the
    /// same transaction, so a node's blobs cost no transaction of their own and exist exactly
    /// when the checkpoint that names them does. A refused commit stores none of them.
    fn commit_with_blobs(
        &self,
        cp: &Checkpoint,
        events: &[Event],
        status: &RunStatus,
        blobs: &[NewBlob<'_>],
    ) -> Result<(), StoreError>;

    /// The newest checkpoint of a run.
    fn head(&self, id: RunId) -> Result<Option<Checkpoint>, StoreError>;

    /// All checkpoints of a run (without states), oldest first.
    fn checkpoints(&self, id: RunId) -> Result<Vec<CheckpointMeta>, StoreError>;

    /// The stored result of a finished step.
    fn get_write(&self, id: RunId, step: &str) -> Result<Option<Vec<u8>>, StoreError>;

    /// Records a finished step's result. Recording the same value twice is a no-op; a different
    /// value for the same step is a [`StoreError::WriteConflict`].
    fn put_write(&self, id: RunId, step: &str, value: &[u8], now: &str) -> Result<(), StoreError>;

    /// Records a finished step's result together with the blobs it refers to, in one
    /// transaction where the store can, so that the moment between a paid side effect and its
    /// journal entry is as short as one commit. Same rules as [`Self::put_write`].
    fn put_write_with_blobs(
        &self,
        id: RunId,
        step: &str,
        value: &[u8],
        blobs: &[&[u8]],
        now: &str,
    ) -> Result<(), StoreError> {
        for bytes in blobs {
            self.put_blob(bytes)?;
        }
        self.put_write(id, step, value, now)
    }

    /// Every journaled step result of run `id` as `(step id, value)`, sorted by step id: what
    /// copying a run to another store carries over.
    fn journal(&self, id: RunId) -> Result<Vec<(String, Vec<u8>)>, StoreError>;

    /// The ids of every journaled step of run `id`, without their values: what the engine
    /// reads once when it takes a run's lock (see `engine::journal`).
    fn journal_steps(&self, id: RunId) -> Result<Vec<String>, StoreError> {
        Ok(self
            .journal(id)?
            .into_iter()
            .map(|(step, _)| step)
            .collect())
    }

    /// A run's timeline, oldest first.
    fn events(&self, id: RunId) -> Result<Vec<Event>, StoreError>;

    /// Stores bytes under their sha256 (idempotent).
    fn put_blob(&self, bytes: &[u8]) -> Result<ContentHash, StoreError>;

    /// Stores bytes like [`Self::put_blob`], naming existing blobs that share much of their
    /// content (the draft inside a prompt). A store may then keep only what is new; reading
    /// returns the same bytes and the hash is the same as `put_blob`'s. Names that are not
    /// stored blobs are ignored.
    fn put_blob_sharing(
        &self,
        bytes: &[u8],
        similar: &[ContentHash],
    ) -> Result<ContentHash, StoreError> {
        let _ = similar;
        self.put_blob(bytes)
    }

    /// Reads bytes back by hash.
    fn get_blob(&self, hash: &ContentHash) -> Result<Option<Vec<u8>>, StoreError>;

    /// Takes the exclusive right to drive a run, or fails naming the holder.
    fn lock(&self, id: RunId, holder: &LockInfo) -> Result<RunLock, StoreError>;

    /// Who is driving the run now (`None`: nobody), found without taking the run's lock, so
    /// a listing never gets in the way of a process that is about to drive the run.
    fn holder(&self, id: RunId) -> Result<Option<LockInfo>, StoreError>;
}

/// A place to keep the diff gates' decisions where a team can read them.
///
/// A store that is not shared keeps nothing (the repository's audit log file is the record):
/// that is what the provided methods do, so such a store implements this trait with an empty
/// `impl`.
pub trait AuditStore: Send + Sync {
    /// Keeps a diff gate's decision (its audit line, JSON) where every machine of the team can
    /// read it; the same line twice is kept once. The default keeps nothing.
    fn record_audit(&self, _line: &str) -> Result<(), StoreError> {
        Ok(())
    }

    /// The newest `limit` audit lines [`Self::record_audit`] kept, newest first.
    fn audit_lines(&self, _limit: usize) -> Result<Vec<String>, StoreError> {
        Ok(Vec::new())
    }
}

/// The spend ledger across a store's runs: what the model calls cost.
///
/// The answers follow from the runs' timelines ([`RunStore::events`]); a store without a
/// faster way gives [`spent_in_month_of`], [`model_call_events_of`] and
/// [`crate::spend_totals_of`], which read every run.
pub trait SpendStore: Send + Sync {
    /// What the model calls recorded in calendar month `month` (`YYYY-MM`, by their events'
    /// UTC time) cost, in micro-USD, over every run this store can see: a team's monthly
    /// spend. A shared store keeps a running total.
    fn spent_in_month(&self, month: &str) -> Result<u64, StoreError>;

    /// Every model call recorded in this store's runs, as `(run, its ModelCall event)`, by run
    /// then in timeline order (replays included, as in each run's events): what a spend report
    /// needs without reading every other event. A store may select the calls in one query.
    fn model_call_events(&self) -> Result<Vec<(RunId, Event)>, StoreError>;

    /// What the model calls of this store's runs cost by day, workflow and role, each call
    /// counted once (see [`SpendTotal`]), in any order: the spend page. The SQLite and
    /// PostgreSQL stores keep these totals as calls are recorded, so the answer does not grow
    /// with the number of calls; [`crate::spend_totals_of`] computes them from the timelines.
    fn spend_totals(&self) -> Result<Vec<SpendTotal>, StoreError>;
}

/// Everything a store keeps: runs, audit lines and spend. Implemented for every type that is
/// all three; code that needs only one part asks for that trait instead.
pub trait Store: RunStore + AuditStore + SpendStore {}

impl<T: RunStore + AuditStore + SpendStore + ?Sized> Store for T {}

/// [`SpendStore::spent_in_month`] read from every run's timeline.
pub fn spent_in_month_of(store: &(impl RunStore + ?Sized), month: &str) -> Result<u64, StoreError> {
    let mut total = 0u64;
    for run in store.runs()? {
        total = total.saturating_add(month_cost(&store.events(run.id)?, month));
    }
    Ok(total)
}

/// [`SpendStore::model_call_events`] read from every run's timeline.
pub fn model_call_events_of(
    store: &(impl RunStore + ?Sized),
) -> Result<Vec<(RunId, Event)>, StoreError> {
    let mut out = Vec::new();
    for run in store.runs()? {
        for event in store.events(run.id)? {
            if matches!(event.kind, crate::event::EventKind::ModelCall { .. }) {
                out.push((run.id, event));
            }
        }
    }
    Ok(out)
}

/// Checks that `cp` may follow a head at seq `head`, before anything is written: the commit rule
/// every [`RunStore`] applies (see [`RunStore::commit`]).
pub fn check_commit(cp: &Checkpoint, head: u64) -> Result<(), StoreError> {
    if cp.format > CHECKPOINT_FORMAT {
        return Err(StoreError::NewerFormat {
            found: cp.format,
            supported: CHECKPOINT_FORMAT,
        });
    }
    let expected = head.saturating_add(1);
    if cp.seq != expected {
        return Err(StoreError::Conflict {
            run: cp.run,
            expected,
            got: cp.seq,
        });
    }
    match cp.parent {
        Some(parent) if parent == head => Ok(()),
        Some(parent) => Err(StoreError::Conflict {
            run: cp.run,
            expected: head,
            got: parent,
        }),
        None => Err(StoreError::Backend {
            message: format!(
                "checkpoint {} of run {} has no parent; only the initial checkpoint may lack one",
                cp.seq, cp.run
            ),
            source: None,
        }),
    }
}
