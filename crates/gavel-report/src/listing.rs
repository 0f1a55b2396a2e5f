//! A run as a listing shows it (`gavel runs`, the runs page): its status in words, where it is
//! paused or why it stopped, and its spend. One definition for the terminal and the web.

use gavel_core::{Event, RunRecord, RunStatus, RunStore, StoreError};
use serde::Serialize;

use crate::ledger::{self, Totals};

/// One row of `gavel runs --json` and of the runs page.
#[derive(Debug, Clone, Serialize)]
pub struct RunRow {
    pub id: i64,
    /// The run's project, when listing every project of a shared store.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    pub workflow: String,
    pub slug: String,
    pub status: String,
    pub detail: String,
    pub gate: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    /// Spend totals of the run's model calls.
    pub spend: Totals,
}

/// A run as listed; a `running` run whose lock is free was interrupted (its process died).
pub fn row(store: &dyn RunStore, r: &RunRecord) -> Result<RunRow, StoreError> {
    row_from(store, r, &store.events(r.id)?)
}

/// [`row`] with the run's timeline already read.
pub fn row_from(
    store: &dyn RunStore,
    r: &RunRecord,
    events: &[Event],
) -> Result<RunRow, StoreError> {
    let (status, detail, gate) = match &r.status {
        RunStatus::Running => match store.holder(r.id)? {
            None => (
                "interrupted".to_owned(),
                format!("resumable: gavel resume {}", r.id),
                None,
            ),
            Some(holder) => ("running".to_owned(), format!("driven by {holder}"), None),
        },
        RunStatus::Waiting { gate } => (
            "waiting".to_owned(),
            format!("gate {} ({})", gate.id, gate.kind),
            Some(gate.id.clone()),
        ),
        RunStatus::Halted { reason } => ("halted".to_owned(), one_line(reason), None),
        RunStatus::Failed { error } => ("failed".to_owned(), one_line(error), None),
        RunStatus::Done { summary } => ("done".to_owned(), summary.clone(), None),
        RunStatus::Aborted { reason } => ("aborted".to_owned(), reason.clone(), None),
        RunStatus::Unknown { status, .. } => (
            "unknown".to_owned(),
            format!("status `{status}` from a newer gavel"),
            None,
        ),
        other => (other.name().to_owned(), String::new(), None),
    };
    Ok(RunRow {
        id: r.id.0,
        workflow: r.workflow.clone(),
        slug: r.slug.clone(),
        status,
        detail,
        gate,
        created_at: r.created_at.clone(),
        updated_at: r.updated_at.clone(),
        spend: ledger::totals(&ledger::calls(events)).0,
        project: None,
    })
}

/// A reason on one line: a list under a heading (`pre-flight failed:` then `  - ...` lines)
/// keeps its items, joined with `; `, so the listing shows the cause and not only the heading.
pub fn one_line(s: &str) -> String {
    let mut parts = s
        .lines()
        .map(|l| l.trim().trim_start_matches("- ").trim())
        .filter(|l| !l.is_empty());
    let Some(first) = parts.next() else {
        return String::new();
    };
    let rest: Vec<&str> = parts.collect();
    match (rest.is_empty(), first.ends_with(':')) {
        (true, _) => first.to_owned(),
        (false, true) => format!("{first} {}", rest.join("; ")),
        (false, false) => format!("{first}; {}", rest.join("; ")),
    }
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn a_listed_reason_shows_its_cause_not_only_its_heading() {
        assert_eq!(
            one_line("pre-flight failed:\n  - editor `nano` is not on PATH\n  - rubric missing"),
            "pre-flight failed: editor `nano` is not on PATH; rubric missing"
        );
        assert_eq!(one_line("budget exceeded"), "budget exceeded");
    }
}
