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
pub(crate) mod implement;
mod init;
pub(crate) mod issue;
pub(crate) mod lld;
mod mcp;
mod report;
mod resume;
mod runs;
mod show;
pub(crate) mod start;
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
    // The workflows' own subcommands (issue, lld, change, implement) come from the registry of
    // workflow kinds ([`command`]), not from this list.
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

/// gavel's whole command line: [`Cli`]'s own subcommands and each registered workflow's
/// (`crate::kinds`), listed `init` first, then the workflows in the registry's order, then
/// the rest as [`Command`] declares them.
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    let declared: Vec<String> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_owned())
        .collect();
    let mut order = 0;
    cmd = cmd.mut_subcommand("init", |c| c.display_order(order));
    for own in crate::kinds::cli_commands() {
        order += 1;
        cmd = cmd.subcommand(own.command().display_order(order));
    }
    for name in declared.iter().filter(|n| *n != "init") {
        order += 1;
        cmd = cmd.mut_subcommand(name, |c| c.display_order(order));
    }
    cmd
}

/// Runs what the command line asked for: a workflow's own subcommand through the registry,
/// anything else through [`run`].
pub fn run_matches(matches: &clap::ArgMatches) -> Result<Exit, CliError> {
    use clap::FromArgMatches;
    if let Some((name, sub)) = matches.subcommand()
        && let Some(own) = crate::kinds::cli_commands().find(|c| c.name == name)
    {
        let global = |id: &str| {
            sub.get_one::<PathBuf>(id)
                .or_else(|| matches.get_one::<PathBuf>(id))
                .cloned()
        };
        if let Some(repo) = global("repo") {
            crate::context::set_repo(&repo)?;
        }
        let ctx = crate::context::Context::load(&crate::settings::Overrides {
            state_dir: global("state_dir"),
            ..Default::default()
        })?;
        return (own.run)(sub, ctx);
    }
    let cli = Cli::from_arg_matches(matches).map_err(|e| CliError::usage(e.to_string()))?;
    run(cli)
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
