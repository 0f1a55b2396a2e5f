//! `gavel issue BRIEF`: start (or, on a slug collision, resume) a brief → issue run.
//!
//! Every check on the input runs before anything is written: a bad brief or slug changes
//! nothing, not even the state database.

use std::fs;
use std::path::{Path, PathBuf};

use clap::Args;
use gavel_core::{RunId, RunStatus, Store};
use gavel_workflows::brief::{self, validate_slug};
use gavel_workflows::issue::{IssueState, WORKFLOW};

use super::start::{self, Clash, Collision, Resolution, RunFlags, collision, resume};
use crate::context::{self, Context};
use crate::driver::{self, GateMode};
use crate::editor;
use crate::error::CliError;
use crate::exit::Exit;
use crate::ui::sanitize;

#[derive(Debug, Args)]
pub struct IssueArgs {
    /// The brief: a Markdown file with your notes.
    #[arg(required_unless_present = "select", conflicts_with = "select")]
    pub brief: Option<PathBuf>,
    /// Pick the brief from ideas/active/.
    #[arg(long)]
    pub select: bool,
    /// No draft or verdict gates: route by the verdict (unparseable verdicts still stop).
    #[arg(long)]
    pub auto: bool,
    /// Use this slug instead of the brief's file name.
    #[arg(long, value_name = "NAME")]
    pub slug: Option<String>,
    /// What to do when the slug is already in use (asked interactively when omitted).
    #[arg(long, value_enum, value_name = "ACTION")]
    pub on_collision: Option<Collision>,
    #[command(flatten)]
    pub run: RunFlags,
    /// When the issue is filed, open its lineage folder (docs/lineage/done/N-slug) in your
    /// editor, e.g. to read what an --auto run decided.
    #[arg(long)]
    pub open: bool,
}

pub fn cmd_issue(args: &IssueArgs, mut ctx: Context) -> Result<Exit, CliError> {
    ctx.settings.apply(&args.run.overrides())?;
    let brief_path = match &args.brief {
        Some(p) => context::absolute(p),
        None => match select_idea(&ctx)? {
            Some(p) => p,
            None => {
                ctx.ui.info("no idea selected; nothing was done");
                return Ok(Exit::Success);
            }
        },
    };
    if brief_path.to_str().is_none() {
        return Err(CliError::usage(format!(
            "the brief's path {} is not valid UTF-8",
            sanitize(&brief_path.to_string_lossy())
        ))
        .hint("rename the file; gavel records paths as text in the lineage and the issue"));
    }
    let text = brief::load_brief(&brief_path)?;
    let mut slug = match &args.slug {
        Some(s) => {
            validate_slug(s).map_err(CliError::from)?;
            s.clone()
        }
        None => brief::slug_from_path(&brief_path)?,
    };
    let rel_brief = ctx.rel(&brief_path);
    let ideas_active = ctx.settings.ideas_dir_for(WORKFLOW).join("active");
    let source_idea = (rel_brief.parent() == Some(ideas_active.as_path()))
        .then(|| rel_brief.to_string_lossy().into_owned());

    // Check first, write after: a run that cannot start leaves nothing behind, so the same
    // command works once the problem is fixed.
    let wf = crate::kinds::issue_workflow(&ctx, editor_program(&ctx, args.auto)?, None)?;
    start::preflight(wf.preflight_problems())?;

    let store = ctx.open_store()?;
    if let Some(existing) = collision(&ctx, &*store, WORKFLOW, &slug)? {
        let clash = Clash {
            workflow: WORKFLOW,
            slug: &slug,
            question: format!("Slug `{slug}` already exists in active/."),
            refused: CliError::usage(format!("slug `{slug}` is already in use ({existing})"))
                .hint("pass --on-collision resume, --on-collision abort, or --on-collision new --slug NAME"),
            no_run: CliError::error(format!(
                "slug `{slug}` has a lineage folder but no resumable run"
            ))
            .hint("choose a new name with --on-collision new --slug NAME"),
        };
        let new_slug = || {
            if ctx.ui.interactive() {
                ask_new_slug(&ctx, &*store)
            } else {
                Err(CliError::usage(format!(
                    "slug `{slug}` is already in use; a new name is asked for in a terminal"
                ))
                .hint("pass --slug NAME with a name that is not in use"))
            }
        };
        match start::resolve(&ctx, &*store, clash, args.on_collision, new_slug)? {
            Resolution::Start(new) => slug = new,
            Resolution::Resume(run) => return resume(run, ctx),
            Resolution::Abort => return Ok(Exit::Success),
        }
    }

    let now = ctx.clock.now_rfc3339();
    let run_key = run_key();
    let text_check = text.clone();
    let mut state = IssueState::new(
        run_key,
        rel_brief.to_string_lossy().into_owned(),
        text,
        slug.clone(),
        source_idea,
        args.auto,
        now,
    );
    state.spend.budget_micros = crate::commands::start::budget(&ctx);
    state.roles = Some(wf.settings.roles.clone());
    let run = start::start(
        &ctx,
        &*store,
        &wf,
        &state,
        &slug,
        wf.kind.load_node,
        "another `gavel issue` started it a moment ago; see `gavel runs`, or pass --slug NAME",
    )?;
    // The slug was free, but the brief may have been filed (and moved) by a run that finished
    // while this one started: then this run must not file it again.
    if brief::load_brief(&brief_path).ok().as_deref() != Some(text_check.as_str()) {
        let reason = format!(
            "the brief {} changed or moved while this run was starting (another run may have filed it); nothing was done",
            rel_brief.display()
        );
        store.set_status(
            run,
            &RunStatus::Aborted {
                reason: reason.clone(),
            },
            &[],
            &ctx.clock.now_rfc3339(),
        )?;
        return Err(CliError::error(reason).hint("`gavel runs` shows the run that filed it"));
    }
    ctx.ui.info(&format!(
        "run {run} started: {} -> issue ({slug}){}",
        sanitize(&rel_brief.to_string_lossy()),
        if args.auto { ", auto mode" } else { "" }
    ));
    let exit = driver::drive(&ctx, &*store, &wf, run, None, GateMode::for_ui(&ctx))?;
    if args.open && exit == Exit::Success {
        open_lineage(&ctx, &*store, run);
    }
    Ok(exit)
}

/// `--open`: the filed run's lineage folder in the editor. The issue is filed and committed
/// by now, so an editor that cannot start is a warning, not a failure.
fn open_lineage(ctx: &Context, store: &dyn Store, run: RunId) {
    let lineage = store
        .head(run)
        .ok()
        .flatten()
        .and_then(|head| serde_json::from_slice::<IssueState>(&head.state).ok())
        .and_then(|s| s.filed)
        .map(|f| f.lineage);
    let Some(lineage) = lineage else {
        return;
    };
    let opened =
        editor::resolve().and_then(|e| editor::open(&e, &ctx.settings.repo_root, &[&lineage]));
    match opened {
        Ok(()) => ctx.ui.info(&format!("opened {lineage}")),
        Err(e) => ctx.ui.info(&format!(
            "warning: could not open {lineage} in the editor: {}",
            e.message
        )),
    }
}

/// The editor pre-flight must find: only when a person will be asked at gates.
fn editor_program(ctx: &Context, auto: bool) -> Result<Option<String>, CliError> {
    if auto || !ctx.ui.interactive() {
        return Ok(None);
    }
    Ok(editor::resolve()?.into_iter().next())
}

fn ask_new_slug(ctx: &Context, store: &dyn Store) -> Result<String, CliError> {
    loop {
        let Some(input) = ctx.ui.ask("New slug: ") else {
            return Err(CliError::usage("no new slug given"));
        };
        let slug = input.trim().to_owned();
        if let Err(e) = validate_slug(&slug) {
            ctx.ui.info(&format!("{e}; try again."));
            continue;
        }
        match collision(ctx, store, WORKFLOW, &slug)? {
            Some(why) => ctx
                .ui
                .info(&format!("`{slug}` is taken too ({why}); try again.")),
            None => return Ok(slug),
        }
    }
}

/// `--select`: a numbered picker over `ideas/active/`. `None`: the person chose to quit.
fn select_idea(ctx: &Context) -> Result<Option<PathBuf>, CliError> {
    let dir = ctx
        .settings
        .repo_root
        .join(ctx.settings.ideas_dir_for(WORKFLOW))
        .join("active");
    let mut ideas: Vec<PathBuf> = fs::read_dir(&dir)
        .map_err(|e| {
            CliError::error(format!("cannot read {}: {e}", dir.display()))
                .hint("run `gavel init`, then put briefs in ideas/active/")
        })?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "md"))
        .collect();
    ideas.sort();
    if ideas.is_empty() {
        return Err(
            CliError::error(format!("no ideas in {}", ctx.rel(&dir).display()))
                .hint("write a brief there as NAME.md"),
        );
    }
    if !ctx.ui.interactive() {
        return Err(
            CliError::usage("--select needs a terminal").hint("pass the brief's path instead")
        );
    }
    ctx.ui
        .info(&format!("Select an idea from {}:", ctx.rel(&dir).display()));
    for (i, p) in ideas.iter().enumerate() {
        ctx.ui.info(&format!(
            "  [{}] {}  {}",
            i + 1,
            file_name(p),
            sanitize(&first_line(p))
        ));
    }
    loop {
        let Some(input) = ctx.ui.ask(&format!("Select idea [1-{}, q]: ", ideas.len())) else {
            return Err(CliError::usage("no idea selected"));
        };
        let input = input.trim();
        if input.eq_ignore_ascii_case("q") {
            return Ok(None);
        }
        match input.parse::<usize>() {
            Ok(n) if (1..=ideas.len()).contains(&n) => return Ok(Some(ideas[n - 1].clone())),
            _ => ctx.ui.info(&format!(
                "`{}` is not a number from 1 to {}; try again.",
                sanitize(input),
                ideas.len()
            )),
        }
    }
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn first_line(p: &Path) -> String {
    fs::read_to_string(p)
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| !l.trim().is_empty())
                .map(|l| l.trim_start_matches('#').trim().to_owned())
        })
        .unwrap_or_default()
}

/// A random key unique to this run (never reused even if the state database is lost): the
/// tracker's idempotency key and the commit trailer derive from it.
fn run_key() -> String {
    gavel_core::random_key()
}
