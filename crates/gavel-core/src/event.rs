//! The timeline of a run, for `gavel show` and audits.
//!
//! Events are buffered while a node runs and written in the same transaction as the checkpoint
//! that ends the node, so a crashed and replayed node never leaves duplicate events behind.

use serde::{Deserialize, Serialize};

use crate::hash::ContentHash;

/// One entry in a run's timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// RFC 3339 time of the event.
    pub at: String,
    #[serde(flatten)]
    pub kind: EventKind,
}

/// One model call in a run's spend ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallLedger {
    /// 1-based number of the call within the run (`gavel show RUN --call N`).
    pub n: u32,
    /// The model that was asked for (`model` in the event is the one that answered).
    pub requested_model: String,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub cached_tokens: Option<u64>,
    /// Cost in millionths of a USD.
    pub cost_micros: Option<u64>,
    /// Where the cost came from: `reported` (by the CLI or API), `price-table`, or `unknown`.
    pub cost_source: String,
    /// The prompt, content-addressed in the store.
    pub prompt: ContentHash,
    /// The raw answer, content-addressed in the store.
    pub response: ContentHash,
    pub attempts: u32,
    /// Set when the answering model is not the one requested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    /// A call that was made but whose answer was lost: gavel was killed after sending it and
    /// before its answer was journaled, so the call was made again. The provider may have
    /// charged for it; its tokens and cost are unknown.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lost: bool,
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
        /// What the call cost and where its prompt and answer are kept (absent in events
        /// written before the ledger existed).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ledger: Option<Box<CallLedger>>,
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
