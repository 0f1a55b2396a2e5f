//! The spend ledger as people read it: every model call of a run (from its timeline) and the
//! totals per run and per role, for `gavel runs`, `gavel show`, `gavel show --call N` and the
//! report pages.

use std::collections::BTreeMap;

use gavel_core::{CallLedger, Event, EventKind};
use serde::Serialize;

/// One model call.
#[derive(Debug, Clone, Serialize)]
pub struct CallRow {
    /// When its (last) record was written.
    #[serde(skip)]
    pub at: String,
    pub role: String,
    pub provider: String,
    pub model: String,
    #[serde(flatten)]
    pub ledger: CallLedger,
}

/// Totals for a run or a role.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Totals {
    pub calls: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_tokens: u64,
    pub cost_micros: u64,
    /// Calls whose cost is unknown (no reported cost and no price).
    pub unpriced_calls: u32,
    /// Calls answered by another model than requested.
    pub warnings: u32,
    /// Calls made whose answers were lost to a kill (made again; maybe charged).
    #[serde(default)]
    pub lost_calls: u32,
}

impl Totals {
    /// Counts one call.
    pub fn add(&mut self, l: &CallLedger) {
        self.calls += 1;
        self.input_tokens += l.input_tokens.unwrap_or(0);
        self.output_tokens += l.output_tokens.unwrap_or(0);
        self.cached_tokens += l.cached_tokens.unwrap_or(0);
        match l.cost_micros {
            Some(c) => self.cost_micros += c,
            None => self.unpriced_calls += 1,
        }
        if l.warning.is_some() {
            self.warnings += 1;
        }
        if l.lost {
            self.lost_calls += 1;
        }
    }

    /// `$0.0123 (3 calls, 1,200 in / 800 out tokens)`.
    pub fn summary(&self) -> String {
        let mut unpriced = if self.unpriced_calls > 0 {
            format!(", {} unpriced", self.unpriced_calls)
        } else {
            String::new()
        };
        if self.lost_calls > 0 {
            unpriced.push_str(&format!(", {} lost to a kill", self.lost_calls));
        }
        format!(
            "{} ({} call{}, {} in / {} out tokens{unpriced})",
            gavel_llm::price::usd(self.cost_micros),
            self.calls,
            if self.calls == 1 { "" } else { "s" },
            self.input_tokens,
            self.output_tokens
        )
    }
}

/// The calls recorded in a timeline, in order. A node replayed after a crash records its call
/// again with the same number; the last record of each number wins.
pub fn calls<'a>(events: impl IntoIterator<Item = &'a Event>) -> Vec<CallRow> {
    let mut by_n: BTreeMap<u32, CallRow> = BTreeMap::new();
    for e in events {
        if let EventKind::ModelCall {
            role,
            provider,
            model,
            ledger: Some(l),
        } = &e.kind
        {
            by_n.insert(
                l.n,
                CallRow {
                    at: e.at.clone(),
                    role: role.clone(),
                    provider: provider.clone(),
                    model: model.clone(),
                    ledger: (**l).clone(),
                },
            );
        }
    }
    by_n.into_values().collect()
}

/// Totals for the whole run and per role.
pub fn totals(calls: &[CallRow]) -> (Totals, BTreeMap<String, Totals>) {
    let mut all = Totals::default();
    let mut per_role: BTreeMap<String, Totals> = BTreeMap::new();
    for c in calls {
        all.add(&c.ledger);
        per_role.entry(c.role.clone()).or_default().add(&c.ledger);
    }
    (all, per_role)
}
