//! `gavel implement ISSUE`: start an LLD → code run, test first, in an isolated worktree.
//!
//! Everything is checked before anything is written: the issue (read from the tracker), the
//! LLD (`docs/lld/active/LLD-{n}.md` approved by gavel, or an explicit `--lld`), the context
//! files, the test command, the checkout (on a branch, with a commit), pre-flight of the
//! implementer, and an unfinished run for the same issue.

use std::path::PathBuf;

use clap::Args;
use gavel_workflows::implement::{ImplementState, WORKFLOW, node, worktree_name};
use gavel_workflows::lld::lld_path;

use super::start::TrackerArg;
use crate::context::{self, Context};
use crate::driver::{self, GateMode};
use crate::error::CliError;
use crate::exit::Exit;
use crate::ui::sanitize;

#[derive(Debug, Args)]
pub struct ImplementArgs {
    /// The issue: 12, #12, owner/name#12 or an issue URL.
    pub issue: String,
    /// The design to implement (default: docs/lld/active/LLD-{issue}.md, which gavel must have
    /// approved).
    #[arg(long, value_name = "PATH")]
    pub lld: Option<PathBuf>,
    /// A file or folder the implementer is given (repeatable; validated first).
    #[arg(long = "context", value_name = "PATH")]
    pub context: Vec<PathBuf>,
    /// The test command, over [implement] test (e.g. "pytest -q", "cargo test").
    #[arg(long, value_name = "CMD")]
    pub test_cmd: Option<String>,
    /// The lint command, over [implement] lint (e.g. "ruff check .").
    #[arg(long, value_name = "CMD")]
    pub lint_cmd: Option<String>,
    /// Route without asking where a machine may (never at the diff gate or the approval).
    #[arg(long)]
    pub auto: bool,
    /// Override the implementer role (a provider string; default: [workflows.implement.roles],
    /// [roles] implementer, else the drafter's). The run keeps it on every resume.
    #[arg(long, value_name = "PROVIDER")]
    pub implementer: Option<String>,
    /// Stop before any model call that would take the run's spend over USD.
    #[arg(long, value_name = "USD")]
    pub budget: Option<f64>,
    /// The tracker the issue is read from, over gavel.toml's [tracker] kind.
    #[arg(long, value_enum, value_name = "KIND")]
    pub tracker: Option<TrackerArg>,
    /// Not a role of this workflow: refused with a message that says so.
    #[arg(long, hide = true, value_name = "PROVIDER")]
    pub drafter: Option<String>,
    /// Not a role of this workflow: refused with a message that says so.
    #[arg(long, hide = true, value_name = "PROVIDER")]
    pub reviewer: Option<String>,
}

pub fn cmd_implement(args: &ImplementArgs, mut ctx: Context) -> Result<Exit, CliError> {
    // The document commands' role flags, typed here out of habit, would change nothing.
    for (flag, given) in [("drafter", &args.drafter), ("reviewer", &args.reviewer)] {
        if given.is_some() {
            return Err(CliError::usage(format!(
                "--{flag}: the implement workflow has no {flag} role; its one role is the implementer"
            ))
            .hint("use --implementer PROVIDER; nothing was written"));
        }
    }
    ctx.settings.apply(&crate::settings::Overrides {
        state_dir: None,
        roles: args
            .implementer
            .iter()
            .map(|p| ("implementer".to_owned(), p.clone()))
            .collect(),
        budget: args.budget,
        tracker: args.tracker.map(crate::settings::TrackerKind::from),
    })?;
    let tracker = crate::tracker::build(&ctx.settings, None)?;
    let issue = tracker
        .get_issue(&args.issue)
        .map_err(|e| CliError::error(sanitize(&e.to_string())).hint("nothing was written"))?;
    let n = issue.number;
    let root = ctx.settings.repo_root.clone();
    let lld_rel = match &args.lld {
        Some(p) => {
            let abs = context::absolute(p);
            if !abs.is_file() {
                return Err(CliError::usage(format!(
                    "--lld {} is not a file",
                    p.display()
                )));
            }
            ctx.rel(&abs).to_string_lossy().into_owned()
        }
        None => {
            let rel = lld_path(n);
            if !root.join(&rel).is_file() {
                return Err(
                    CliError::usage(format!("issue #{n} has no LLD at {rel}")).hint(format!(
                        "run `gavel lld {n}` first, or name a design with --lld PATH"
                    )),
                );
            }
            if !approved_by_gavel(&root, &ctx.settings.lineage_dir_for("lld"), n, &rel) {
                return Err(CliError::usage(format!(
                    "{rel} was not approved by gavel (no approved.json for it in the lineage)"
                ))
                .hint("approve it with `gavel lld`, or pass --lld PATH to use it as it is"));
            }
            rel
        }
    };
    let lld_text = std::fs::read_to_string(root.join(&lld_rel))
        .map_err(|e| CliError::usage(format!("cannot read {lld_rel}: {e}")))?;
    let context = crate::commands::lld::validate_context(&ctx, &args.context)?;
    let wf = crate::kinds::implement_workflow(&ctx, args.test_cmd.clone(), args.lint_cmd.clone())?;
    super::start::preflight(crate::kinds::implement_preflight(&ctx, &wf))?;
    let git = gavel_workflows::git::Git::at(&root);
    let (base_commit, base_branch) = super::start::base(&git)?;
    let store = ctx.open_store()?;
    let slug = worktree_name(n);
    if let Some(run) = store
        .runs_with_slug(&slug, Some(WORKFLOW))?
        .into_iter()
        .rev()
        .find(|r| !r.status.is_terminal())
    {
        return Err(CliError::usage(format!(
            "issue #{n} already has an unfinished implementation run ({})",
            run.id
        ))
        .hint(format!(
            "`gavel resume {}` continues it; `gavel abort {}` removes it and its worktree",
            run.id, run.id
        )));
    }
    let mut state = ImplementState::new(
        gavel_core::random_key(),
        n,
        issue.title.clone(),
        lld_rel.clone(),
        lld_text,
        base_commit,
        base_branch.clone(),
        args.auto,
        ctx.clock.now_rfc3339(),
    );
    state.spend.budget_micros = crate::commands::start::budget(&ctx);
    state.implementer = Some(wf.settings.implementer.clone());
    state.test_command = Some(wf.settings.test.command.clone());
    state.lint_command = wf.settings.lint.as_ref().map(|l| l.command.clone());
    if let Some(c) = &context {
        state.context_text = Some(c.prompt_section());
        state.context_manifest = Some(String::from_utf8_lossy(&c.manifest()).into_owned());
    }
    let run = super::start::start(
        &ctx,
        &*store,
        &wf,
        &state,
        &slug,
        node::LOAD,
        "another `gavel implement` for this issue started a moment ago; see `gavel runs`",
    )?;
    ctx.ui.info(&format!(
        "run {run} started: {lld_rel} -> code for issue #{n} on branch gavel/{slug} (merged into {base_branch} after your approval){}",
        if args.auto { ", auto mode" } else { "" }
    ));
    driver::drive(&ctx, &*store, &wf, run, None, GateMode::for_ui(&ctx))
}

/// Whether gavel approved `rel` as issue `n`'s LLD: an `approved.json` naming it in one of the
/// issue's LLD lineage folders (`done/{n}-lld`, `done/{n}-lld-2`, ...).
fn approved_by_gavel(root: &std::path::Path, lineage: &std::path::Path, n: u64, rel: &str) -> bool {
    let done = root.join(lineage).join("done");
    let Ok(entries) = std::fs::read_dir(&done) else {
        return false;
    };
    let prefix = format!("{n}-lld");
    entries.filter_map(Result::ok).any(|folder| {
        let name = folder.file_name().to_string_lossy().into_owned();
        if name != prefix && !name.starts_with(&format!("{prefix}-")) {
            return false;
        }
        std::fs::read_dir(folder.path())
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .filter(|f| f.file_name().to_string_lossy().ends_with("approved.json"))
            .filter_map(|f| std::fs::read_to_string(f.path()).ok())
            .filter_map(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .any(|v| v["lld_path"] == rel)
    })
}
