//! `gavel runs`: the newest runs (50 unless `--limit` says otherwise) with their status and where
//! they are paused; `--all-projects` lists every repository's runs in a shared PostgreSQL store.

use clap::Args;

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

pub use gavel_report::listing::{RunRow, row};

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
