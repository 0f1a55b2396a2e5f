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

#[cfg(test)]
mod lazy_tests;

use std::path::PathBuf;

use clap::{ArgMatches, Args, FromArgMatches, Parser, Subcommand};

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
    Init(Lazy<init::InitArgs>),
    /// Turn a brief into a filed issue: draft, human gate, review, human gate, file.
    Issue(Lazy<issue::IssueArgs>),
    /// Turn an issue into an approved low-level design: draft, human gate, review, human gate,
    /// commit docs/lld/active/LLD-N.md.
    Lld(Lazy<lld::LldArgs>),
    /// Spec-driven changes (OpenSpec's layout): list, status, plan, impl, archive.
    Change(Lazy<change::ChangeArgs>),
    /// Implement an approved LLD test first in an isolated worktree: failing tests, code until
    /// they pass, lint, the diff gate and your approval, then a merge.
    Implement(Lazy<implement::ImplementArgs>),
    /// List runs: id, workflow, slug, status, and where each is paused.
    Runs(Lazy<runs::RunsArgs>),
    /// Show one run's timeline of nodes, gates and artifacts.
    Show(Lazy<show::ShowArgs>),
    /// Serve the runs read-only in a browser, on 127.0.0.1 with a secret URL, until Ctrl-C.
    Ui(Lazy<ui::UiArgs>),
    /// Write a run's pages (or every run's, `--all`) as static HTML for CI artifacts.
    Report(Lazy<report::ReportArgs>),
    /// Continue a paused, halted or interrupted run.
    #[command(after_help = crate::exit::CHOICES_HELP)]
    Resume(Lazy<resume::ResumeArgs>),
    /// Stop a run for good (its lineage stays in active/).
    Abort(Lazy<abort::AbortArgs>),
    /// Review the staged changes before a commit: type `approve` to let it proceed.
    #[command(after_help = crate::exit::DIFF_GATE_HELP)]
    DiffGate(Lazy<diff_gate::DiffGateArgs>),
    /// The diff gates' decisions, newest first (from the shared store, or the audit log).
    Audit(Lazy<audit::AuditArgs>),
    /// Move runs between stores: `gavel store migrate --to URL|PATH`.
    Store(Lazy<store::StoreArgs>),
    /// Check the agent CLIs, API keys, roles, tracker and leftover worktrees, and say how to
    /// fix what is missing.
    Doctor(Lazy<doctor::DoctorArgs>),
    /// Run brief -> issue -> LLD -> code end to end in a temporary repository, offline.
    Demo(Lazy<demo::DemoArgs>),
    /// Serve the review tools over MCP on stdio, for a reviewer agent (one change folder).
    Mcp(Lazy<mcp::McpArgs>),
    /// Print shell completions.
    Completions(Lazy<completions::CompletionsArgs>),
    /// Run a program able to write only beneath the given folders (the agent launcher).
    #[command(name = "__confine", hide = true)]
    Confine(Lazy<confine::ConfineArgs>),
}

/// A subcommand's arguments, defined only when that subcommand is parsed or its help is shown
/// (clap's `Command::defer`). Building every subcommand's arguments is most of the parse: about
/// 0.2 ms of every command's start, for the one subcommand that runs. Names and one-line
/// descriptions (the variants' doc comments) stay defined up front, so `gavel --help` lists
/// them all and a mistyped subcommand is still suggested.
///
/// The deferred definition keeps the subcommand's description (a flattened argument struct's
/// own doc comment would otherwise replace it), and [`define_all_now`] turns deferral off for
/// what walks the whole tree (shell completions).
#[derive(Debug)]
pub struct Lazy<T>(pub T);

thread_local! {
    /// Whether subcommands' arguments are defined up front on this thread ([`define_all_now`]).
    static EAGER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Makes every [`Lazy`] subcommand built on this thread define its arguments at once, for a
/// caller that walks the whole tree (completions must see nested subcommands before clap
/// mirrors them under `help`).
pub(crate) fn define_all_now() {
    EAGER.set(true);
}

/// `define` applied to `cmd`, keeping the description the subcommand already had.
fn keeping_about(cmd: clap::Command, define: fn(clap::Command) -> clap::Command) -> clap::Command {
    let about = cmd.get_about().cloned();
    let long_about = cmd.get_long_about().cloned();
    let cmd = define(cmd);
    let cmd = match about {
        Some(about) => cmd.about(about),
        None => cmd.about(clap::builder::Resettable::Reset),
    };
    match long_about {
        Some(long_about) => cmd.long_about(long_about),
        None => cmd.long_about(clap::builder::Resettable::Reset),
    }
}

impl<T: Args> Args for Lazy<T> {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        if EAGER.get() {
            T::augment_args(cmd)
        } else {
            cmd.defer(|cmd| keeping_about(cmd, T::augment_args))
        }
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        // Only updating parsed arguments uses this (gavel never does): defined at once.
        T::augment_args_for_update(cmd)
    }

    fn group_id() -> Option<clap::Id> {
        T::group_id()
    }
}

impl<T: FromArgMatches> FromArgMatches for Lazy<T> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches(matches).map(Lazy)
    }

    fn from_arg_matches_mut(matches: &mut ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches_mut(matches).map(Lazy)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches(matches)
    }

    fn update_from_arg_matches_mut(&mut self, matches: &mut ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches_mut(matches)
    }
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
        Command::Init(Lazy(args)) => init::cmd_init(&args),
        Command::Demo(Lazy(args)) => demo::cmd_demo(&args),
        Command::Completions(Lazy(args)) => completions::cmd_completions(&args),
        Command::Confine(Lazy(args)) => confine::cmd_confine(args),
        Command::Mcp(Lazy(args)) => mcp::cmd_mcp(args),
        Command::Issue(Lazy(args)) => issue::cmd_issue(&args, ctx()?),
        Command::Lld(Lazy(args)) => lld::cmd_lld(&args, ctx()?),
        Command::Change(Lazy(args)) => change::cmd_change(&args, ctx()?),
        Command::Implement(Lazy(args)) => implement::cmd_implement(&args, ctx()?),
        Command::Runs(Lazy(args)) => runs::cmd_runs(&args, ctx()?),
        Command::Show(Lazy(args)) => show::cmd_show(&args, ctx()?),
        Command::Ui(Lazy(args)) => ui::cmd_ui(&args, ctx()?),
        Command::Report(Lazy(args)) => report::cmd_report(&args, ctx()?),
        Command::Resume(Lazy(args)) => resume::cmd_resume(&args, ctx()?),
        Command::Abort(Lazy(args)) => abort::cmd_abort(&args, ctx()?),
        Command::Doctor(Lazy(args)) => doctor::cmd_doctor(&args, ctx()?),
        Command::DiffGate(Lazy(args)) => diff_gate::cmd_diff_gate(&args, ctx()?),
        Command::Audit(Lazy(args)) => audit::cmd_audit(&args, ctx()?),
        Command::Store(Lazy(args)) => store::cmd_store(&args, ctx()?),
    }
}
