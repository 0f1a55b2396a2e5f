//! `gavel runs`: the newest runs (50 unless `--limit` says otherwise) with their status and where
//! they are paused; `--all-projects` lists every repository's runs in a shared PostgreSQL store.

use clap::Args;
use gavel_core::{RunRecord, RunStatus, Store};
use serde::Serialize;

use crate::context::Context;
use crate::error::CliError;
use crate::exit::Exit;
use crate::store::AnyStore;
use crate::ui::sanitize;

#[derive(Debug, Args)]
pub struct RunsArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Show at most this many runs, the newest first.
    #[arg(long, default_value_t = 50, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub limit: u64,
    /// List the runs of every project in a shared PostgreSQL store, not only this clone's.
    #[arg(long)]
    pub all_projects: bool,
}

/// One row of `gavel runs --json`.
#[derive(Debug, Serialize)]
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
    pub spend: crate::ledger::Totals,
}

pub fn cmd_runs(args: &RunsArgs, ctx: Context) -> Result<Exit, CliError> {
    let store = if args.all_projects {
        AnyStore::open_every_project(&ctx.settings)?
    } else {
        ctx.open_existing_store()?
    };
    let limit = usize::try_from(args.limit).unwrap_or(usize::MAX);
    // One more than shown, to tell whether older runs were left out.
    let mut listed = match &store {
        Some(store) => store.recent(limit.saturating_add(1))?,
        None => Vec::new(),
    };
    let more = listed.len() > limit;
    listed.truncate(limit);
    let rows = match &store {
        Some(store) => listed
            .into_iter()
            .map(|(project, r)| {
                let mut row = row(&**store, &r)?;
                row.project = project;
                Ok(row)
            })
            .collect::<Result<Vec<_>, CliError>>()?,
        None => Vec::new(),
    };
    if args.json {
        ctx.ui
            .out(&serde_json::to_string_pretty(&rows).map_err(|e| CliError::error(e.to_string()))?);
        return Ok(Exit::Success);
    }
    if rows.is_empty() {
        ctx.ui
            .out("no runs yet; start one with `gavel issue BRIEF.md`");
        return Ok(Exit::Success);
    }
    // The workflow column fits the longest name listed (`change-archive`).
    let w = rows
        .iter()
        .map(|r| r.workflow.len())
        .max()
        .unwrap_or(0)
        .max(9);
    // Every project's runs: a PROJECT column first, as wide as the longest.
    let p = rows
        .iter()
        .filter_map(|r| r.project.as_ref().map(|p| p.chars().count() + 1))
        .max()
        .map(|w| w.max(8));
    let project = |name: &str| match p {
        Some(p) => format!("{:<p$}", sanitize(name)),
        None => String::new(),
    };
    ctx.ui.out(&format!(
        "{}{:<5} {:<w$} {:<24} {:<12} {:>10} {:>5}  WHERE",
        project("PROJECT"),
        "ID",
        "WORKFLOW",
        "SLUG",
        "STATUS",
        "COST",
        "CALLS"
    ));
    for r in rows {
        let warn = if r.spend.warnings > 0 {
            " (model WARNING)"
        } else {
            ""
        };
        ctx.ui.out(&format!(
            "{}{:<5} {:<w$} {:<24} {:<12} {:>10} {:>5}  {}{warn}",
            project(r.project.as_deref().unwrap_or_default()),
            r.id,
            r.workflow,
            sanitize(&r.slug),
            r.status,
            gavel_llm::price::usd(r.spend.cost_micros),
            r.spend.calls,
            sanitize(&r.detail)
        ));
    }
    if more {
        ctx.ui.out(&format!(
            "(the newest {limit} runs; older ones: gavel runs --limit {})",
            limit.saturating_mul(2)
        ));
    }
    Ok(Exit::Success)
}

/// A run as listed; a `running` run whose lock is free was interrupted (its process died).
pub fn row(store: &dyn Store, r: &RunRecord) -> Result<RunRow, CliError> {
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
        spend: crate::ledger::totals(&crate::ledger::calls(&store.events(r.id)?)).0,
        project: None,
    })
}

/// A reason on one line: a list under a heading (`pre-flight failed:` then `  - ...` lines)
/// keeps its items, joined with `; `, so the listing shows the cause and not only the heading.
fn one_line(s: &str) -> String {
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
