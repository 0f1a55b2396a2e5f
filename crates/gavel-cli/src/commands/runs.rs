//! `gavel runs`: every run with its status and where it is paused.

use std::path::PathBuf;

use clap::Args;
use gavel_core::{RunRecord, RunStatus, Store};
use serde::Serialize;

use crate::context::Context;
use crate::error::CliError;
use crate::exit::Exit;
use crate::settings::Overrides;
use crate::ui::sanitize;

#[derive(Debug, Args)]
pub struct RunsArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// One row of `gavel runs --json`.
#[derive(Debug, Serialize)]
pub struct RunRow {
    pub id: i64,
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

pub fn cmd_runs(args: &RunsArgs, state_dir: Option<PathBuf>) -> Result<Exit, CliError> {
    let ctx = Context::load(&Overrides {
        state_dir,
        ..Overrides::default()
    })?;
    let rows = match ctx.open_existing_store()? {
        Some(store) => store
            .runs()?
            .iter()
            .map(|r| row(&store, r))
            .collect::<Result<Vec<_>, _>>()?,
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
    ctx.ui.out(&format!(
        "{:<5} {:<9} {:<24} {:<12} {:>10} {:>5}  WHERE",
        "ID", "WORKFLOW", "SLUG", "STATUS", "COST", "CALLS"
    ));
    for r in rows {
        let warn = if r.spend.warnings > 0 {
            " (model WARNING)"
        } else {
            ""
        };
        ctx.ui.out(&format!(
            "{:<5} {:<9} {:<24} {:<12} {:>10} {:>5}  {}{warn}",
            r.id,
            r.workflow,
            sanitize(&r.slug),
            r.status,
            gavel_llm::price::usd(r.spend.cost_micros),
            r.spend.calls,
            sanitize(&r.detail)
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
        RunStatus::Halted { reason } => ("halted".to_owned(), first_line(reason), None),
        RunStatus::Failed { error } => ("failed".to_owned(), first_line(error), None),
        RunStatus::Done { summary } => ("done".to_owned(), summary.clone(), None),
        RunStatus::Aborted { reason } => ("aborted".to_owned(), reason.clone(), None),
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
    })
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or_default().to_owned()
}
