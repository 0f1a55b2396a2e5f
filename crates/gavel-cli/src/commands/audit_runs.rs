//! The decisions `gavel audit` reads from the runs in the store, next to the audit log: the
//! diff gates' audit lines as each run journaled them (a `reject` at the implement diff gate
//! writes its line in the worktree that the reject then removes; the journal keeps it), every
//! other gate a person answered (from the run's `gate_answered` events: when, by whom, which
//! choice) and every abort (the run's `aborted` event, with its reason), for every workflow.

use std::collections::BTreeSet;

use gavel_core::{EventKind, RunStore};
use serde::{Deserialize, Serialize};

use crate::error::CliError;

/// A decision read from a run, as one JSON line of `gavel audit --json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunDecision {
    pub timestamp: String,
    /// `APPROVED`, `REJECTED`, `ABORTED`, or the choice made (`RETRY`, `BACK`, `REVISE`, ...).
    pub decision: String,
    pub by: Option<String>,
    pub run: i64,
    pub workflow: String,
    /// The gate answered (none for an abort).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl RunDecision {
    /// A line of this shape (a diff gate's audit line has no `run` and is not one).
    pub fn parse(line: &str) -> Option<RunDecision> {
        serde_json::from_str(line).ok()
    }

    /// The last column of the table: the workflow, and the gate or the reason.
    pub fn what(&self) -> String {
        match (&self.gate, &self.reason) {
            (Some(g), _) => format!("{} gate {g}", self.workflow),
            (None, Some(r)) => format!("{}: {r}", self.workflow),
            (None, None) => self.workflow.clone(),
        }
    }
}

/// The decision a gate's choice records.
fn decision_of(choice: &str) -> String {
    match choice {
        "approve" | "accept" => "APPROVED".to_owned(),
        "reject" => "REJECTED".to_owned(),
        "abort" => "ABORTED".to_owned(),
        other => other.to_uppercase(),
    }
}

/// Every decision in `store`'s runs, as JSON lines (see the module doc).
pub fn decisions(store: &dyn RunStore) -> Result<Vec<String>, CliError> {
    let mut lines = Vec::new();
    for run in store.runs()? {
        // The diff gates' own lines, and the gates they answered (not listed twice).
        let mut diff_gates = BTreeSet::new();
        for (step, bytes) in store.journal(run.id)? {
            if !step.ends_with(":diff-audit") {
                continue;
            }
            if let Ok(line) = serde_json::from_slice::<String>(&bytes) {
                let line = line.trim().to_owned();
                if let Some(reason) = serde_json::from_str::<serde_json::Value>(&line)
                    .ok()
                    .and_then(|v| v["reason"].as_str().map(str::to_owned))
                {
                    diff_gates.insert(reason);
                }
                lines.push(line);
            }
        }
        for event in store.events(run.id)? {
            let decision = match event.kind {
                EventKind::GateAnswered { gate, choice, by } => {
                    if diff_gates.contains(&format!("gate {gate} of run {}", run.id)) {
                        continue;
                    }
                    RunDecision {
                        timestamp: event.at,
                        decision: decision_of(&choice),
                        by: Some(by),
                        run: run.id.0,
                        workflow: run.workflow.clone(),
                        gate: Some(gate),
                        reason: None,
                    }
                }
                EventKind::Aborted { reason } => RunDecision {
                    timestamp: event.at,
                    decision: "ABORTED".to_owned(),
                    by: None,
                    run: run.id.0,
                    workflow: run.workflow.clone(),
                    gate: None,
                    reason: Some(reason),
                },
                _ => continue,
            };
            if let Ok(line) = serde_json::to_string(&decision) {
                lines.push(line);
            }
        }
    }
    Ok(lines)
}

/// `lines` without repeats, the newest first (by their `timestamp`; a line without one last),
/// at most `limit` of them.
pub fn newest_first(lines: Vec<String>, limit: usize) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut keyed: Vec<(String, String)> = lines
        .into_iter()
        .filter(|l| seen.insert(l.trim().to_owned()))
        .map(|l| {
            let at = serde_json::from_str::<serde_json::Value>(&l)
                .ok()
                .and_then(|v| v["timestamp"].as_str().map(str::to_owned))
                .unwrap_or_default();
            (at, l)
        })
        .collect();
    // Stable: lines of the same time keep their order (the log's newest first).
    keyed.sort_by(|a, b| b.0.cmp(&a.0));
    keyed.into_iter().take(limit).map(|(_, l)| l).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_deduplicated_and_sorted_newest_first() {
        let lines = vec![
            r#"{"timestamp":"2026-01-02T00:00:00Z","decision":"APPROVED"}"#.to_owned(),
            r#"{"timestamp":"2026-01-03T00:00:00Z","decision":"ABORTED","run":1,"workflow":"implement","by":null}"#.to_owned(),
            r#"{"timestamp":"2026-01-02T00:00:00Z","decision":"APPROVED"}"#.to_owned(),
        ];
        let out = newest_first(lines, 10);
        assert_eq!(out.len(), 2);
        assert!(out[0].contains("ABORTED"));
        assert_eq!(newest_first(out, 1).len(), 1);
    }

    #[test]
    fn a_run_decision_is_told_from_a_diff_gate_line() {
        assert!(RunDecision::parse(r#"{"timestamp":"t","decision":"APPROVED"}"#).is_none());
        let d = RunDecision::parse(
            r#"{"timestamp":"t","decision":"ABORTED","by":null,"run":3,"workflow":"lld","reason":"aborted by a person"}"#,
        )
        .expect("a run decision");
        assert_eq!(d.what(), "lld: aborted by a person");
        assert_eq!(decision_of("back"), "BACK");
        assert_eq!(decision_of("reject"), "REJECTED");
    }
}
