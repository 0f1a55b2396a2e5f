//! What model calls cost, as a run keeps it and as a store adds it up.
//!
//! Every workflow's state embeds [`Spend`] (flattened, so the fields sit at the state's top
//! level, where older checkpoints have them): the calls' count, their cost and the run's budget,
//! and which role's service refused structured output (so that a resumed run does not ask it
//! again; see [`SchemaRefusal`]).
//! That makes it the one part of a workflow's state others may read: the report shows a run's
//! budget against its spend from the run's newest checkpoint ([`Spend::of_state`]) without
//! knowing the workflow's state type.
//!
//! Across runs, a store answers the spend page with [`SpendTotal`]s (by day, workflow and role)
//! it keeps as calls are recorded ([`crate::SpendStore::spend_totals`]), instead of every call's
//! event being read and decoded; [`spend_totals_of`] computes the same from the runs' timelines
//! (the default, and the reference the stores are tested against).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::event::EventKind;
use crate::run::RunId;
use crate::store::{RunStore, SpendStore, StoreError};

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
    /// The roles whose service refused structured output in this run: their later calls ask
    /// in plain text, after a resume too (absent in older checkpoints: nothing was refused).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub schema_refused: Vec<SchemaRefusal>,
}

/// A role whose service refused structured output (an HTTP 400 naming it) in a run, and the
/// provider it was: a role given another provider (`gavel resume --role`) is asked again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemaRefusal {
    pub role: String,
    /// The provider string that refused.
    pub provider: String,
}

impl Spend {
    /// Whether `role`, played by `provider`, refused structured output earlier in the run.
    pub fn schema_refused_by(&self, role: &str, provider: &str) -> bool {
        self.schema_refused
            .iter()
            .any(|r| r.role == role && r.provider == provider)
    }

    /// Remembers that `role`, played by `provider`, refused structured output (once).
    pub fn remember_schema_refusal(&mut self, role: &str, provider: &str) {
        if !self.schema_refused_by(role, provider) {
            self.schema_refused.push(SchemaRefusal {
                role: role.to_owned(),
                provider: provider.to_owned(),
            });
        }
    }

    /// The spend a checkpoint's `state` (JSON) embeds; `None` when it is not a JSON object
    /// with these fields' types (a state without them reads as no calls and no budget).
    pub fn of_state(state: &[u8]) -> Option<Self> {
        serde_json::from_slice(state).ok()
    }
}

/// What the model calls of one day, workflow and role cost, over every run of a store.
///
/// A call counts once, as its run's ledger numbers it: a node replayed after a crash records
/// its call again with the same number, and the last record wins (its time, role and cost).
/// The day is the first 10 characters of that record's time (UTC).
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct SpendTotal {
    pub day: String,
    pub workflow: String,
    pub role: String,
    /// Calls counted (never 0: a total without calls is not listed).
    pub calls: u64,
    /// Calls whose cost is unknown (no reported cost and no price): counted, adding nothing.
    pub unpriced: u64,
    /// What the priced calls cost, in micro-USD.
    pub micros: u64,
}

/// [`SpendStore::spend_totals`] computed from the runs' model-call events
/// ([`SpendStore::model_call_events`]), sorted by day, workflow and role.
pub fn spend_totals_of(
    store: &(impl RunStore + SpendStore + ?Sized),
) -> Result<Vec<SpendTotal>, StoreError> {
    let workflows: BTreeMap<RunId, String> = store
        .runs()?
        .into_iter()
        .map(|r| (r.id, r.workflow))
        .collect();
    // Each run's calls by number, the last record winning: (day, role, cost).
    let mut calls: BTreeMap<(RunId, u32), (String, String, Option<u64>)> = BTreeMap::new();
    for (run, event) in store.model_call_events()? {
        if let EventKind::ModelCall {
            role,
            ledger: Some(ledger),
            ..
        } = event.kind
        {
            let day = event.at.get(..10).unwrap_or(&event.at).to_owned();
            calls.insert((run, ledger.n), (day, role, ledger.cost_micros));
        }
    }
    let mut totals: BTreeMap<(String, String, String), SpendTotal> = BTreeMap::new();
    for ((run, _), (day, role, cost)) in calls {
        let Some(workflow) = workflows.get(&run) else {
            continue;
        };
        let total = totals
            .entry((day.clone(), workflow.clone(), role.clone()))
            .or_insert_with(|| SpendTotal {
                day,
                workflow: workflow.clone(),
                role,
                ..SpendTotal::default()
            });
        total.calls += 1;
        match cost {
            Some(c) => total.micros = total.micros.saturating_add(c),
            None => total.unpriced += 1,
        }
    }
    Ok(totals.into_values().collect())
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
                budget_micros: Some(5000),
                schema_refused: Vec::new(),
            }
        );
        let none = Spend::of_state(br#"{"slug":"s"}"#).expect("no spend yet");
        assert_eq!(none, Spend::default());
        assert_eq!(Spend::of_state(b"not json"), None);
    }

    #[test]
    fn a_refusal_is_kept_once_per_role_and_provider_and_old_states_have_none() {
        let mut spend = Spend::default();
        spend.remember_schema_refusal("reviewer", "openai-compatible:m@http://a/v1");
        spend.remember_schema_refusal("reviewer", "openai-compatible:m@http://a/v1");
        assert_eq!(spend.schema_refused.len(), 1);
        assert!(spend.schema_refused_by("reviewer", "openai-compatible:m@http://a/v1"));
        assert!(!spend.schema_refused_by("reviewer", "openai:gpt-5"));
        assert!(!spend.schema_refused_by("drafter", "openai-compatible:m@http://a/v1"));
        let json = serde_json::to_string(&spend).expect("json");
        let back: Spend = serde_json::from_str(&json).expect("back");
        assert_eq!(back, spend);
        // Nothing refused: nothing written, so older gavels read the state as before.
        let none = serde_json::to_string(&Spend::default()).expect("json");
        assert!(!none.contains("schema_refused"), "{none}");
        let old = Spend::of_state(br#"{"call_count":1,"spent_micros":0}"#).expect("old");
        assert!(old.schema_refused.is_empty());
    }
}
