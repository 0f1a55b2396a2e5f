//! What a run keeps of its model calls in its own state: their count, their cost and its
//! budget.
//!
//! Every workflow's state embeds [`Spend`] (flattened, so the fields sit at the state's top
//! level, where older checkpoints have them). That makes it the one part of a workflow's state
//! others may read: the report shows a run's budget against its spend from the run's newest
//! checkpoint ([`Spend::of_state`]) without knowing the workflow's state type.

use serde::{Deserialize, Serialize};

/// The spend fields of a workflow's state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spend {
    /// Model calls made so far (the spend ledger's numbering).
    #[serde(default)]
    pub call_count: u32,
    /// What the calls cost so far, in micro-USD.
    #[serde(default)]
    pub spent_micros: u64,
    /// The run's budget in micro-USD, if it has one.
    #[serde(default)]
    pub budget_micros: Option<u64>,
}

impl Spend {
    /// The spend a checkpoint's `state` (JSON) embeds; `None` when it is not a JSON object
    /// with these fields' types (a state without them reads as no calls and no budget).
    pub fn of_state(state: &[u8]) -> Option<Self> {
        serde_json::from_slice(state).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_embedding_spend_gives_it_back() {
        let state = br#"{"slug":"s","call_count":2,"spent_micros":448,"budget_micros":5000}"#;
        let spend = Spend::of_state(state).expect("spend");
        assert_eq!(
            spend,
            Spend {
                call_count: 2,
                spent_micros: 448,
                budget_micros: Some(5000)
            }
        );
        let none = Spend::of_state(br#"{"slug":"s"}"#).expect("no spend yet");
        assert_eq!(none, Spend::default());
        assert_eq!(Spend::of_state(b"not json"), None);
    }
}
