//! `gavel change`: spec-driven changes in OpenSpec's layout (`[changes] root`, default
//! `openspec`). `list` and `status` read them (`status.rs`); `plan` plans and challenges one
//! (`plan.rs`); `impl` implements and reviews it (`implement.rs`); `archive` merges a complete
//! change's specs and archives it (`archive.rs`). Each subcommand decides by the change's
//! `STATE.yaml` phase alone.

mod archive;
mod implement;
mod plan;
pub(crate) mod status;

use clap::{Args, Subcommand};

use crate::context::Context;
use crate::error::CliError;
use crate::exit::Exit;

#[derive(Debug, Args)]
pub struct ChangeArgs {
    #[command(subcommand)]
    pub command: ChangeCommand,
}

#[derive(Debug, Subcommand)]
pub enum ChangeCommand {
    /// List the changes (not the archived ones) with their phase and open tasks.
    List {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// One change (or every change) in detail: phase, next command, tasks.
    Status {
        /// The change's id (`[a-z0-9-]`, at most 64 characters).
        id: Option<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Plan a change: the planner writes proposal.md, the delta specs and tasks.md, the
    /// challenger judges the plan (up to [changes] planning_iterations rounds), you decide.
    Plan(plan::PlanArgs),
    /// Implement a challenged change: code and tests in a worktree (test first, the real test
    /// runner), the reviewer's structured review (REVIEW.md), the diff gate, your `approve`.
    Impl(implement::ImplArgs),
    /// Merge a complete change's delta specs into the living specs (after you see the diff
    /// and type `approve`), move it to the archive, and commit.
    Archive(archive::ArchiveArgs),
}

pub fn cmd_change(args: &ChangeArgs, ctx: Context) -> Result<Exit, CliError> {
    match &args.command {
        ChangeCommand::Plan(a) => plan::cmd_plan(a, ctx),
        ChangeCommand::Impl(a) => implement::cmd_impl(a, ctx),
        ChangeCommand::Archive(a) => archive::cmd_archive(a, ctx),
        other => status::cmd_status(other, ctx),
    }
}

/// Applies a change command's `--ROLE PROVIDER` flags (the given ones only) and `--budget` to
/// the settings this invocation resolved.
fn apply_flags(
    ctx: &mut Context,
    roles: &[(&str, &Option<String>)],
    budget: Option<f64>,
) -> Result<(), CliError> {
    ctx.settings.apply(&crate::settings::Overrides {
        state_dir: None,
        budget,
        roles: roles
            .iter()
            .filter_map(|(role, p)| p.as_ref().map(|p| ((*role).to_owned(), p.clone())))
            .collect(),
        tracker: None,
    })
}
