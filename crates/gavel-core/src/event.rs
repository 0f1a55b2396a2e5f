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
    /// The credential that answered, by name (a key's variable or a CLI login's folder), never
    /// the key itself; absent when the provider used none (and in older events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential: Option<String>,
    /// Credentials whose quota was exhausted before `credential` answered, in the order tried
    /// (credential rotation within the answering attempt; not counted in `attempts`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quota_exhausted: Vec<String>,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ledger_written_before_credentials_were_recorded_still_loads() {
        let hash = ContentHash::of(b"x").to_string();
        let old = format!(
            r#"{{"n":1,"requested_model":"m","input_tokens":1,"output_tokens":2,
                "cached_tokens":null,"cost_micros":null,"cost_source":"unknown",
                "prompt":"{hash}","response":"{hash}","attempts":1}}"#
        );
        let ledger: CallLedger = serde_json::from_str(&old).expect("an old ledger loads");
        assert_eq!(ledger.credential, None);
        assert!(ledger.quota_exhausted.is_empty());
        // Without a credential the JSON is what it was.
        let json = serde_json::to_string(&ledger).expect("serializes");
        assert!(!json.contains("credential") && !json.contains("quota_exhausted"));

        let rotated = CallLedger {
            credential: Some("ANTHROPIC_API_KEY_2".into()),
            quota_exhausted: vec!["ANTHROPIC_API_KEY".into()],
            ..ledger
        };
        let json = serde_json::to_string(&rotated).expect("serializes");
        let back: CallLedger = serde_json::from_str(&json).expect("loads");
        assert_eq!(back, rotated);
    }
}
