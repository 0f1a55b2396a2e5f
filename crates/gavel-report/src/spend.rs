//! The spend page: what the model calls cost by day, workflow and role, over every run of the
//! store or over the runs a report names.
//!
//! Over every run, the totals are the store's own ([`SpendStore::spend_totals`]: SQLite and
//! PostgreSQL keep them as calls are recorded), so the page costs the same with 10 runs or
//! 10,000. Over chosen runs, they are added up from those runs' timelines with the ledger's
//! rule ([`ledger::calls`]: a call recorded again by a replay counts once, at its last record),
//! the rule the stores' totals follow.

use std::collections::BTreeMap;

use gavel_core::{RunFilter, RunId, RunStore, SpendStore, SpendTotal};

use crate::error::ReportError;
use crate::ledger;

/// Spend totals grouped by a key, largest first, for the charts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpendView {
    pub by_day: Vec<(String, u64)>,
    pub by_workflow: Vec<(String, u64)>,
    pub by_role: Vec<(String, u64)>,
    pub total_micros: u64,
    pub calls: u64,
    /// Calls whose cost is unknown (no reported cost and no price): counted, adding nothing.
    pub unpriced: u64,
    pub runs: usize,
}

/// Spend over every run of the store (or only the runs `only` names), in micro-USD.
pub fn spend_view<S: RunStore + SpendStore + ?Sized>(
    store: &S,
    only: Option<&[RunId]>,
) -> Result<SpendView, ReportError> {
    match only {
        None => {
            let runs = store.find_runs(&RunFilter::default(), 0, 0)?.matched;
            Ok(of_totals(&store.spend_totals()?, runs))
        }
        Some(ids) => of_runs(store, ids),
    }
}

/// The view of a store's totals over `runs` runs.
fn of_totals(totals: &[SpendTotal], runs: usize) -> SpendView {
    let mut day: BTreeMap<String, u64> = BTreeMap::new();
    let mut workflow: BTreeMap<String, u64> = BTreeMap::new();
    let mut role: BTreeMap<String, u64> = BTreeMap::new();
    let mut view = SpendView {
        runs,
        ..SpendView::default()
    };
    for t in totals.iter().filter(|t| t.calls > 0) {
        for (map, key) in [
            (&mut day, &t.day),
            (&mut workflow, &t.workflow),
            (&mut role, &t.role),
        ] {
            let sum = map.entry(key.clone()).or_default();
            *sum = sum.saturating_add(t.micros);
        }
        view.calls = view.calls.saturating_add(t.calls);
        view.unpriced = view.unpriced.saturating_add(t.unpriced);
        view.total_micros = view.total_micros.saturating_add(t.micros);
    }
    view.by_day = day.into_iter().collect();
    view.by_workflow = sorted(workflow);
    view.by_role = sorted(role);
    view
}

/// The view of runs `ids` (those that exist), from their timelines.
pub(crate) fn of_runs<S: RunStore + ?Sized>(
    store: &S,
    ids: &[RunId],
) -> Result<SpendView, ReportError> {
    let mut day: BTreeMap<String, u64> = BTreeMap::new();
    let mut workflow: BTreeMap<String, u64> = BTreeMap::new();
    let mut role: BTreeMap<String, u64> = BTreeMap::new();
    let mut view = SpendView::default();
    let mut total = ledger::Totals::default();
    for id in ids {
        let Some(run) = store.run(*id)? else {
            continue;
        };
        view.runs += 1;
        for call in ledger::calls(&store.events(run.id)?) {
            total.add(&call.ledger);
            let cost = call.ledger.cost_micros.unwrap_or(0);
            let d = call.at.get(..10).unwrap_or(&call.at).to_owned();
            *day.entry(d).or_default() += cost;
            *workflow.entry(run.workflow.clone()).or_default() += cost;
            *role.entry(call.role).or_default() += cost;
        }
    }
    view.calls = u64::from(total.calls);
    view.unpriced = u64::from(total.unpriced_calls);
    view.total_micros = total.cost_micros;
    view.by_day = day.into_iter().collect();
    view.by_workflow = sorted(workflow);
    view.by_role = sorted(role);
    Ok(view)
}

fn sorted(m: BTreeMap<String, u64>) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = m.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v
}
