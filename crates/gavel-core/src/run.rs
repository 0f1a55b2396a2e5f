//! Runs and checkpoints: the records a store keeps for every workflow execution.
//!
//! A run is one execution of one workflow. After every node the engine writes a [`Checkpoint`]
//! (the new state, the node to run next, a link to its parent and a format version) in the same
//! transaction that updates the run's [`RunStatus`].

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::gate::GateRequest;
use crate::hash::ContentHash;

/// The checkpoint format version written by this build. Bumped whenever the meaning of a stored
/// checkpoint changes; a store refuses checkpoints from a newer format.
pub const CHECKPOINT_FORMAT: u32 = 1;

/// A run's id: a small integer allocated by the store, stable for the run's life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RunId(pub i64);

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl FromStr for RunId {
    type Err = std::num::ParseIntError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.parse::<i64>().map(RunId)
    }
}

/// Where a run stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum RunStatus {
    /// A process is (or was, if it died) driving the run.
    Running,
    /// Paused at a human gate.
    Waiting { gate: GateRequest },
    /// Stopped for a reason that needs attention (an iteration cap, a failed call); resumable.
    Halted { reason: String },
    /// A node failed with an error (for example a pre-flight check); resumable once fixed.
    Failed { error: String },
    /// Finished. `summary` is the workflow's one-line result (for example the filed issue).
    Done { summary: String },
    /// Stopped for good by a person.
    Aborted { reason: String },
}

impl RunStatus {
    /// The status name as shown in `gavel runs`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Waiting { .. } => "waiting",
            Self::Halted { .. } => "halted",
            Self::Failed { .. } => "failed",
            Self::Done { .. } => "done",
            Self::Aborted { .. } => "aborted",
        }
    }

    /// Whether the run is over for good.
    pub fn is_terminal(&self) -> bool {
        matches!(self, Self::Done { .. } | Self::Aborted { .. })
    }
}

/// A run as listed by a store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRecord {
    pub id: RunId,
    pub workflow: String,
    pub slug: String,
    pub status: RunStatus,
    pub created_at: String,
    pub updated_at: String,
    /// Sequence number of the newest checkpoint.
    pub head_seq: u64,
}

/// A checkpoint: the state after a node, and what runs next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub run: RunId,
    /// 0 for the initial checkpoint, then 1, 2, ... in order.
    pub seq: u64,
    /// The checkpoint this one was derived from (`None` only for seq 0).
    pub parent: Option<u64>,
    /// The node that produced this checkpoint (`None` for the initial one).
    pub node: Option<String>,
    /// The node to run next; `None` once the workflow has finished.
    pub next: Option<String>,
    /// The serialized workflow state (JSON).
    pub state: Vec<u8>,
    /// [`CHECKPOINT_FORMAT`] at the time of writing.
    pub format: u32,
    pub created_at: String,
}

/// A checkpoint without its state, for timelines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointMeta {
    pub seq: u64,
    pub parent: Option<u64>,
    pub node: Option<String>,
    pub next: Option<String>,
    pub state_hash: ContentHash,
    pub format: u32,
    pub created_at: String,
}
