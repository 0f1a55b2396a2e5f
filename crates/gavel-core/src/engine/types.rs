//! The engine's vocabulary: the [`Workflow`] trait, what a node returns ([`Transition`],
//! [`NodeError`]), what driving returns ([`Outcome`], [`EngineError`]), and the hooks a caller
//! can attach (cancellation, progress observer, crash points).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::ctx::NodeCtx;
use crate::event::Event;
use crate::gate::GateRequest;
use crate::run::{RunId, RunStatus};
use crate::store::StoreError;

/// A workflow: typed state plus the code of its nodes and routes.
pub trait Workflow {
    /// The workflow's state, checkpointed after every node.
    type State: Serialize + DeserializeOwned;

    /// The workflow's name as stored with each run (for example `issue`).
    fn name(&self) -> &'static str;

    /// Runs one node. The node may mutate `state`; the mutation is kept only if the node
    /// returns [`Transition::Goto`], [`Transition::Done`] or [`Transition::Abort`].
    fn run_node(
        &self,
        node: &str,
        state: &mut Self::State,
        cx: &mut NodeCtx<'_>,
    ) -> Result<Transition, NodeError>;
}

/// Where a node sends the run.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Transition {
    /// Checkpoint and run `node` next.
    Goto(String),
    /// Pause for a person. The state is not checkpointed: answering re-runs this node.
    Gate(GateRequest),
    /// Checkpoint and finish.
    Done { summary: String },
    /// Stop, resumably, for `reason`; the state is not checkpointed.
    Halt { reason: String },
    /// Checkpoint and stop for good.
    Abort { reason: String },
}

/// A node's failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NodeError {
    /// The node failed; the run is marked failed and can be resumed once the cause is fixed.
    #[error("{0}")]
    Failed(String),
    /// Ctrl-C (or another cancellation) arrived while the node ran.
    #[error("interrupted")]
    Cancelled,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A journaled step's failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StepError<E> {
    #[error(transparent)]
    Step(E),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("stored result of step `{step}` cannot be read: {source}")]
    Decode {
        step: String,
        #[source]
        source: serde_json::Error,
    },
}

/// Why driving a run failed (as opposed to the run halting or pausing, which are outcomes).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("run {run} is already {status}; there is nothing to resume")]
    Finished { run: RunId, status: String },
    #[error(
        "run {run} has status `{status}`, which this gavel does not know (a newer gavel wrote it); this gavel cannot drive or abort it"
    )]
    UnknownStatus { run: RunId, status: String },
    #[error("run {run} is not waiting at a gate (it is {status})")]
    NotWaiting { run: RunId, status: String },
    #[error("run {run} is waiting at gate {expected}, not {got}")]
    WrongGate {
        run: RunId,
        expected: String,
        got: String,
    },
    #[error("`{choice}` is not a valid answer at gate {gate}; valid answers: {valid}")]
    InvalidChoice {
        gate: String,
        choice: String,
        valid: String,
    },
    #[error(
        "gate {gate} of run {run} was already answered `{choice}` just before an interruption; resume without --choice to continue with that answer"
    )]
    AlreadyAnswered {
        run: RunId,
        gate: String,
        choice: String,
    },
    #[error("run {run} has no checkpoint")]
    NoCheckpoint { run: RunId },
    #[error("the state of run {run} cannot be read: {message}")]
    BadState { run: RunId, message: String },
}

impl EngineError {
    /// Refuses a run whose status a newer gavel wrote: this build cannot know what driving or
    /// aborting it would mean.
    pub(crate) fn refuse_unknown(run: RunId, status: &RunStatus) -> Result<(), Self> {
        match status {
            RunStatus::Unknown { status, .. } => Err(Self::UnknownStatus {
                run,
                status: status.clone(),
            }),
            _ => Ok(()),
        }
    }
}

/// The result of driving a run as far as it goes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    Done {
        summary: String,
    },
    Waiting(GateRequest),
    Halted {
        reason: String,
    },
    Failed {
        error: String,
    },
    Aborted {
        reason: String,
    },
    /// Cancelled (Ctrl-C); the run is resumable.
    Interrupted,
}

/// Engine-wide safety limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The most nodes one `drive` call runs before halting (a guard against routing loops;
    /// workflows also enforce their own iteration caps).
    pub max_steps_per_drive: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_steps_per_drive: 10_000,
        }
    }
}

/// A cooperative cancellation flag, set by the CLI's Ctrl-C handler.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// What the engine reports while it drives, for a live display.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Progress<'e> {
    /// A node is about to run.
    NodeStarted { node: &'e str },
    /// An event was recorded.
    Event(&'e Event),
}

/// Receives [`Progress`] reports.
pub type Observer = dyn Fn(Progress<'_>) + Send + Sync;

/// Called at named crash points (`before:NODE`, `after:NODE`, `after-effect:STEP`,
/// `after-journal:STEP`); the CLI's test hook kills the process there.
pub type CrashHook = dyn Fn(&str) + Send + Sync;
