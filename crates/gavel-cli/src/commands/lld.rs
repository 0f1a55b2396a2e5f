//! `gavel lld ISSUE`: start (or, on a collision, resume) an issue → low-level design run.
//!
//! Everything that can be checked runs before anything is written: the context files (the
//! context validator), the issue (read from the tracker: it exists, it is an issue, and a
//! closed one is confirmed), pre-flight, and the collision with an approved LLD or an
//! unfinished run for the same issue.

use std::path::PathBuf;

use clap::Args;
use gavel_tracker::{TrackedIssue, TrackerError};
use gavel_workflows::document::DocState;
use gavel_workflows::lld::{self, LLD, WORKFLOW, lld_path, slug_for};

use super::start::{self, Clash, Collision, Resolution, RunFlags, collision, resume};
use crate::context::Context;
use crate::driver::{self, GateMode};
use crate::editor;
use crate::error::CliError;
use crate::exit::Exit;
use crate::ui::sanitize;

#[derive(Debug, Args)]
pub struct LldArgs {
    /// The issue: 12, #12, owner/name#12 or an issue URL (local tracker: its number or file).
    pub issue: String,
    /// No draft or verdict gates: route by the verdict (unparseable verdicts still stop).
    #[arg(long)]
    pub auto: bool,
    /// A file or folder the drafter is given (repeatable); checked by the context validator
    /// (inside the repository, no secrets, size and token limits) before anything runs.
    #[arg(long = "context", value_name = "PATH")]
    pub context: Vec<PathBuf>,
    /// Design for a closed issue without asking.
    #[arg(long)]
    pub allow_closed: bool,
    /// What to do when the issue already has an approved LLD or an unfinished LLD run.
    #[arg(long, value_enum, value_name = "ACTION")]
    pub on_collision: Option<Collision>,
    #[command(flatten)]
    pub run: RunFlags,
}

pub fn cmd_lld(args: &LldArgs, mut ctx: Context) -> Result<Exit, CliError> {
    ctx.settings.apply(&args.run.overrides())?;
    let context = validate_context(&ctx, &args.context)?;
    let editor_program = if args.auto || !ctx.ui.interactive() {
        None
    } else {
        editor::resolve()?.into_iter().next()
    };
    let wf = crate::kinds::doc_workflow(&ctx, &LLD, editor_program, None)?;
    let issue = wf
        .tracker
        .get_issue(&args.issue)
        .map_err(|e| tracker_error(&args.issue, e))?;
    if issue.is_closed() && !args.allow_closed && !confirm_closed(&ctx, &issue)? {
        ctx.ui.info("nothing was done");
        return Ok(Exit::Success);
    }
    start::preflight(wf.preflight_problems())?;

    let store = ctx.open_store()?;
    let n = issue.number;
    let mut slug = slug_for(n);
    let approved = lld_path(n);
    let taken = match collision(&ctx, &*store, WORKFLOW, &slug)? {
        Some(why) => Some(why),
        None => ctx
            .settings
            .repo_root
            .join(&approved)
            .exists()
            .then(|| format!("{approved} is already approved")),
    };
    if let Some(why) = taken {
        let clash = Clash {
            workflow: WORKFLOW,
            slug: &slug,
            question: format!("Issue #{n} already has an LLD: {why}."),
            refused: CliError::usage(format!("issue #{n} already has an LLD: {why}")).hint(
                "pass --on-collision resume (continue its run), new (design it again) or abort",
            ),
            no_run: CliError::error(format!(
                "issue #{n} has no unfinished LLD run to resume ({why})"
            ))
            .hint("pass --on-collision new to design it again; the approved LLD is replaced when the new one is approved"),
        };
        let new_slug = || next_free_slug(&ctx, &*store, n);
        match start::resolve(&ctx, &*store, clash, args.on_collision, new_slug)? {
            Resolution::Start(new) => slug = new,
            Resolution::Resume(run) => return resume(run, ctx),
            Resolution::Abort => return Ok(Exit::Success),
        }
    }

    let mut state = DocState::new(
        gavel_core::random_key(),
        args.issue.trim().to_owned(),
        String::new(),
        slug.clone(),
        None,
        args.auto,
        ctx.clock.now_rfc3339(),
    );
    state.spend.budget_micros = crate::commands::start::budget(&ctx);
    state.roles = Some(wf.settings.roles.clone());
    if let Some(c) = &context {
        state.context_text = Some(c.prompt_section());
        state.context_manifest = Some(String::from_utf8_lossy(&c.manifest()).into_owned());
    }
    let run = start::start(
        &ctx,
        &*store,
        &wf,
        &state,
        &slug,
        wf.kind.load_node,
        "another `gavel lld` for this issue started a moment ago; see `gavel runs`",
    )?;
    ctx.ui.info(&format!(
        "run {run} started: issue #{n} {} -> LLD ({slug}){}{}",
        sanitize(issue.title.trim()),
        context
            .as_ref()
            .map(|c| format!(
                ", {} context files ({} tokens)",
                c.files.len(),
                c.total_tokens
            ))
            .unwrap_or_default(),
        if args.auto { ", auto mode" } else { "" }
    ));
    driver::drive(&ctx, &*store, &wf, run, None, GateMode::for_ui(&ctx))
}

/// The `--context` files, validated (`None` when there are none); a refusal is a usage error
/// that lists every file and rule, and nothing has been written.
pub(crate) fn validate_context(
    ctx: &Context,
    paths: &[PathBuf],
) -> Result<Option<gavel_context::Context>, CliError> {
    if paths.is_empty() {
        return Ok(None);
    }
    let cwd = std::env::current_dir()
        .map_err(|e| CliError::error(format!("cannot read the current folder: {e}")))?;
    gavel_context::validate(&ctx.settings.repo_root, &cwd, paths, &ctx.settings.context)
        .map(Some)
        .map_err(|e| {
            CliError::usage(sanitize(&e.to_string())).hint(
                "nothing was written and no model was called; remove those files from --context, or set [context] in gavel.toml",
            )
        })
}

/// A reference that is not an issue is a usage error; the tracker's other refusals are
/// errors with what they say.
fn tracker_error(reference: &str, e: TrackerError) -> CliError {
    match e {
        TrackerError::BadReference { message } => CliError::usage(sanitize(&message)),
        TrackerError::NotFound { .. } => CliError::error(sanitize(&e.to_string())).hint(format!(
            "check the reference `{}`; nothing was written",
            sanitize(reference)
        )),
        other => CliError::error(sanitize(&other.to_string())).hint("nothing was written"),
    }
}

/// A closed issue: asked in a terminal, refused elsewhere.
fn confirm_closed(ctx: &Context, issue: &TrackedIssue) -> Result<bool, CliError> {
    let n = issue.number;
    if !ctx.ui.interactive() {
        return Err(CliError::usage(format!(
            "issue #{n} ({}) is closed",
            sanitize(issue.title.trim())
        ))
        .hint("pass --allow-closed to design for it anyway"));
    }
    let answer = ctx.ui.ask(&format!(
        "Issue #{n} ({}) is closed. Design for it anyway? [y/N] ",
        sanitize(issue.title.trim())
    ));
    Ok(matches!(
        answer.as_deref().map(|a| a.trim().to_ascii_lowercase()),
        Some(ref a) if a == "y" || a == "yes"
    ))
}

/// `{n}-lld-2`, `{n}-lld-3`, ...: the first slug no run or lineage folder uses.
fn next_free_slug(
    ctx: &Context,
    store: &dyn gavel_core::Store,
    n: u64,
) -> Result<String, CliError> {
    for i in 2..1000 {
        let slug = format!("{}-{i}", lld::slug_for(n));
        let done = ctx
            .settings
            .repo_root
            .join(ctx.settings.lineage_dir_for(WORKFLOW))
            .join("done")
            .join(&slug);
        if collision(ctx, store, WORKFLOW, &slug)?.is_none() && !done.exists() {
            return Ok(slug);
        }
    }
    Err(CliError::error(format!("issue #{n} has too many LLD runs")))
}
