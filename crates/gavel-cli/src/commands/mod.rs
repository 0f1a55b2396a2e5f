//! The subcommands, one per file, and the one `match` that dispatches them.

mod abort;
mod audit;
mod audit_runs;
pub(crate) mod change;
mod completions;
mod confine;
mod demo;
mod diff_gate;
mod doctor;
mod implement;
mod init;
mod issue;
mod lld;
mod mcp;
mod report;
mod resume;
mod runs;
mod show;
mod start;
mod store;
mod ui;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::error::CliError;
use crate::exit::Exit;

/// gavel: governed, auditable, multi-model development workflows.
#[derive(Debug, Parser)]
#[command(name = "gavel", version, about, long_about = None, after_help = crate::exit::EXIT_CODES_HELP)]
pub struct Cli {
    /// Where the state database lives (default: .gavel/ at the repository root).
    #[arg(long, global = true, env = "GAVEL_STATE_DIR", value_name = "DIR")]
    pub state_dir: Option<PathBuf>,

    /// Work in the git repository at PATH instead of the current folder's (paths you type,
    /// such as a brief, stay relative to the current folder).
    #[arg(long, global = true, value_name = "PATH")]
    pub repo: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Set up gavel in this repository (config, template, rubric, folders, .gitignore).
    Init(init::InitArgs),
    /// Turn a brief into a filed issue: draft, human gate, review, human gate, file.
    Issue(issue::IssueArgs),
    /// Turn an issue into an approved low-level design: draft, human gate, review, human gate,
    /// commit docs/lld/active/LLD-N.md.
    Lld(lld::LldArgs),
    /// Spec-driven changes (OpenSpec's layout): list, status, plan, impl, archive.
    Change(change::ChangeArgs),
    /// Implement an approved LLD test first in an isolated worktree: failing tests, code until
    /// they pass, lint, the diff gate and your approval, then a merge.
    Implement(implement::ImplementArgs),
    /// List runs: id, workflow, slug, status, and where each is paused.
    Runs(runs::RunsArgs),
    /// Show one run's timeline of nodes, gates and artifacts.
    Show(show::ShowArgs),
    /// Serve the runs read-only in a browser, on 127.0.0.1 with a secret URL, until Ctrl-C.
    Ui(ui::UiArgs),
    /// Write a run's pages (or every run's, `--all`) as static HTML for CI artifacts.
    Report(report::ReportArgs),
    /// Continue a paused, halted or interrupted run.
    #[command(after_help = crate::exit::CHOICES_HELP)]
    Resume(resume::ResumeArgs),
    /// Stop a run for good (its lineage stays in active/).
    Abort(abort::AbortArgs),
    /// Review the staged changes before a commit: type `approve` to let it proceed.
    #[command(after_help = crate::exit::DIFF_GATE_HELP)]
    DiffGate(diff_gate::DiffGateArgs),
    /// The diff gates' decisions, newest first (from the shared store, or the audit log).
    Audit(audit::AuditArgs),
    /// Move runs between stores: `gavel store migrate --to URL|PATH`.
    Store(store::StoreArgs),
    /// Check the agent CLIs, API keys, roles, tracker and leftover worktrees, and say how to
    /// fix what is missing.
    Doctor(doctor::DoctorArgs),
    /// Run brief -> issue -> LLD -> code end to end in a temporary repository, offline.
    Demo(demo::DemoArgs),
    /// Serve the review tools over MCP on stdio, for a reviewer agent (one change folder).
    Mcp(mcp::McpArgs),
    /// Print shell completions.
    Completions(completions::CompletionsArgs),
    /// Run a program able to write only beneath the given folders (the agent launcher).
    #[command(name = "__confine", hide = true)]
    Confine(confine::ConfineArgs),
}

/// Runs the parsed command.
pub fn run(cli: Cli) -> Result<Exit, CliError> {
    let state_dir = cli.state_dir;
    if let Some(repo) = &cli.repo {
        crate::context::set_repo(repo)?;
    }
    // Commands that work in a repository get its settings resolved once, here (arguments, then
    // gavel.toml, then the environment); a command applies only its own flags on top.
    let ctx = || {
        crate::context::Context::load(&crate::settings::Overrides {
            state_dir: state_dir.clone(),
            ..Default::default()
        })
    };
    match cli.command {
        Command::Init(args) => init::cmd_init(&args),
        Command::Demo(args) => demo::cmd_demo(&args),
        Command::Completions(args) => completions::cmd_completions(&args),
        Command::Confine(args) => confine::cmd_confine(args),
        Command::Mcp(args) => mcp::cmd_mcp(args),
        Command::Issue(args) => issue::cmd_issue(&args, ctx()?),
        Command::Lld(args) => lld::cmd_lld(&args, ctx()?),
        Command::Change(args) => change::cmd_change(&args, ctx()?),
        Command::Implement(args) => implement::cmd_implement(&args, ctx()?),
        Command::Runs(args) => runs::cmd_runs(&args, ctx()?),
        Command::Show(args) => show::cmd_show(&args, ctx()?),
        Command::Ui(args) => ui::cmd_ui(&args, ctx()?),
        Command::Report(args) => report::cmd_report(&args, ctx()?),
        Command::Resume(args) => resume::cmd_resume(&args, ctx()?),
        Command::Abort(args) => abort::cmd_abort(&args, ctx()?),
        Command::Doctor(args) => doctor::cmd_doctor(&args, ctx()?),
        Command::DiffGate(args) => diff_gate::cmd_diff_gate(&args, ctx()?),
        Command::Audit(args) => audit::cmd_audit(&args, ctx()?),
        Command::Store(args) => store::cmd_store(&args, ctx()?),
    }
}
