//! The timeline of a run, for `gavel show` and audits.
//!
//! Events are buffered while a node runs and written in the same transaction as the checkpoint
//! that ends the node, so a crashed and replayed node never leaves duplicate events behind.

use serde::{Deserialize, Serialize};

/// One entry in a run's timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// RFC 3339 time of the event.
    pub at: String,
    #[serde(flatten)]
    pub kind: EventKind,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum EventKind {
    /// A node finished and routed to `next` (`None`: the workflow ended).
    Node {
        node: String,
        next: Option<String>,
        seq: u64,
    },
    /// A run paused at a gate.
    GateWaiting { gate: String, kind: String },
    /// A person (or auto mode) answered a gate.
    GateAnswered {
        gate: String,
        choice: String,
        by: String,
    },
    /// A file was written into the lineage.
    Artifact { path: String },
    /// A model was called.
    ModelCall {
        role: String,
        provider: String,
        model: String,
    },
    /// Anything else worth a line in the timeline.
    Note { text: String },
    /// The run halted.
    Halted { reason: String },
    /// A node failed.
    Failed { error: String },
    /// The run finished.
    Done { summary: String },
    /// The run was aborted.
    Aborted { reason: String },
}
