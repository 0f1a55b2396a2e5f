//! `gavel audit`: the decisions people made, newest first: who approved or rejected which
//! staged tree at a diff gate, when, in which repository, with the files flagged; and, from the
//! runs in the store, every other gate answered (with its time and who answered) and every run
//! aborted, in every workflow. The diff gates' lines come from the team's shared PostgreSQL
//! store when there is one (every machine's decisions for this project, or every project's
//! with `--all-projects`), else from the repository's audit log file, and in both cases from
//! the runs' journals, where a line written in a worktree that a `reject` then removed is kept.

use clap::Args;
use gavel_core::AuditStore;
use gavel_diffgate::AuditEvent;

use crate::context::Context;
use crate::error::CliError;
use crate::exit::Exit;
use crate::settings::storage::Backend;
use crate::store::AnyStore;
use crate::ui::sanitize;

#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Print the decisions as JSON lines, as recorded.
    #[arg(long)]
    pub json: bool,
    /// Show at most this many decisions, the newest first.
    #[arg(long, default_value_t = 50, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub limit: u64,
    /// Every project's decisions in a shared store, not only this repository's.
    #[arg(long)]
    pub all_projects: bool,
}

pub fn cmd_audit(args: &AuditArgs, ctx: Context) -> Result<Exit, CliError> {
    let limit = usize::try_from(args.limit).unwrap_or(usize::MAX);
    let (lines, source) = match &ctx.settings.backend {
        Backend::Postgres { .. } => {
            let store = if args.all_projects {
                AnyStore::open_every_project(&ctx.settings)?
            } else {
                ctx.open_existing_store()?
            };
            let store =
                store.ok_or_else(|| CliError::error("the shared store could not be opened"))?;
            // The diff gates' lines are the store's audit part; the runs' decisions its runs.
            let shared: &dyn AuditStore = &*store;
            let mut lines = shared.audit_lines(limit)?;
            lines.extend(super::audit_runs::decisions(&*store)?);
            (lines, store.describe())
        }
        Backend::Sqlite => {
            let path = ctx.settings.repo_root.join(&ctx.settings.audit_log);
            let text = match std::fs::read_to_string(&path) {
                Ok(text) => text,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
                Err(e) => {
                    return Err(CliError::error(format!(
                        "cannot read {}: {e}",
                        path.display()
                    )));
                }
            };
            let mut lines: Vec<String> = text
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(str::to_owned)
                .collect();
            lines.reverse();
            if let Some(store) = ctx.open_existing_store()? {
                lines.extend(super::audit_runs::decisions(&*store)?);
            }
            (lines, ctx.rel(&path).display().to_string())
        }
    };
    let lines = super::audit_runs::newest_first(lines, limit);
    if args.json {
        for line in &lines {
            ctx.ui.out(line);
        }
        return Ok(Exit::Success);
    }
    if lines.is_empty() {
        ctx.ui.out(&format!(
            "no diff-gate decisions in {} and no decision in the runs",
            sanitize(&source)
        ));
        return Ok(Exit::Success);
    }
    ctx.ui.out(&format!(
        "{:<20}  {:<24} {:<12} {:<30} FLAGGED / WHAT",
        "WHEN", "DECISION", "TREE / RUN", "BY"
    ));
    for line in &lines {
        if let Some(d) = super::audit_runs::RunDecision::parse(line) {
            ctx.ui.out(&format!(
                "{:<20}  {:<24} {:<12} {:<30} {}",
                sanitize(&d.timestamp),
                sanitize(&d.decision),
                format!("run {}", d.run),
                sanitize(d.by.as_deref().unwrap_or("-")),
                sanitize(&d.what())
            ));
            continue;
        }
        match serde_json::from_str::<AuditEvent>(line) {
            Ok(e) => {
                let decision = serde_json::to_value(e.decision)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                let tree = e.tree.as_deref().map_or("-", |t| &t[..t.len().min(12)]);
                ctx.ui.out(&format!(
                    "{:<20}  {:<24} {:<12} {:<30} {}",
                    sanitize(&e.timestamp),
                    decision,
                    sanitize(tree),
                    sanitize(e.by.as_deref().unwrap_or("-")),
                    sanitize(&e.flagged_files.join(", "))
                ));
            }
            Err(_) => ctx.ui.out(&format!("(unreadable) {}", sanitize(line))),
        }
    }
    Ok(Exit::Success)
}
