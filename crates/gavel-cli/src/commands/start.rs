//! What starting a document run takes, whatever its kind: pre-flight before anything is
//! written, the collision with an unfinished run or an existing lineage folder (Resume / New /
//! Abort), and the run's creation claiming its slug atomically.

use clap::ValueEnum;
use gavel_core::{Engine, EngineError, RunId, Store, StoreError};
use gavel_workflows::document::{DocState, DocWorkflow};

use crate::context::Context;
use crate::error::CliError;
use crate::settings::TrackerKind;
use crate::ui::sanitize;

/// The answers to a slug collision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Collision {
    /// Continue the existing run with this slug.
    Resume,
    /// Start a new run under another slug (asked for in a terminal).
    New,
    /// Do nothing.
    Abort,
}

/// The trackers `--tracker` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TrackerArg {
    /// Markdown files in the repository ([tracker] dir).
    Local,
    /// GitHub issues ([tracker] repo, or the origin remote).
    Github,
}

impl From<TrackerArg> for TrackerKind {
    fn from(t: TrackerArg) -> Self {
        match t {
            TrackerArg::Local => TrackerKind::Local,
            TrackerArg::Github => TrackerKind::GitHub,
        }
    }
}

/// Runs pre-flight; every problem is listed, and nothing has been written.
pub fn preflight(wf: &DocWorkflow) -> Result<(), CliError> {
    let problems = wf.preflight_problems();
    if problems.is_empty() {
        return Ok(());
    }
    Err(CliError::error(format!(
        "pre-flight failed:\n  - {}",
        problems.join("\n  - ")
    ))
    .hint("nothing was written; fix these, then run the same command again"))
}

/// Creates the run at the kind's first node, claiming `slug`; `raced` is the hint when another
/// process claimed it a moment ago.
pub fn start(
    ctx: &Context,
    store: &dyn Store,
    wf: &DocWorkflow,
    state: &DocState,
    slug: &str,
    raced: &str,
) -> Result<RunId, CliError> {
    let engine = Engine::new(store, wf, ctx.clock.as_ref(), ctx.holder());
    match engine.start_claiming_slug(slug, state, wf.kind.load_node) {
        Ok(run) => Ok(run),
        Err(EngineError::Store(e @ StoreError::SlugTaken { .. })) => {
            Err(CliError::usage(e.to_string()).hint(raced))
        }
        Err(e) => Err(e.into()),
    }
}

/// Describes why `slug` is taken, if it is.
pub fn collision(
    ctx: &Context,
    store: &dyn Store,
    workflow: &str,
    slug: &str,
) -> Result<Option<String>, CliError> {
    if let Some(run) = resumable_run(store, workflow, slug)? {
        return Ok(Some(format!("run {run} is using it")));
    }
    let folder = ctx
        .settings
        .lineage_dir_for(workflow)
        .join("active")
        .join(slug);
    if ctx.settings.repo_root.join(&folder).exists() {
        return Ok(Some(format!("{} exists", folder.display())));
    }
    Ok(None)
}

pub fn resumable_run(
    store: &dyn Store,
    workflow: &str,
    slug: &str,
) -> Result<Option<RunId>, CliError> {
    Ok(store
        .runs()?
        .into_iter()
        .rev()
        .find(|r| r.workflow == workflow && r.slug == slug && !r.status.is_terminal())
        .map(|r| r.id))
}

/// Asks Resume / New / Abort after telling the person `what` collides.
pub fn ask_collision(ctx: &Context, what: &str) -> Result<Collision, CliError> {
    ctx.ui.info(what);
    loop {
        let Some(input) = ctx.ui.ask("[R]esume existing / [N]ew name / [A]bort? ") else {
            return Ok(Collision::Abort);
        };
        match input.trim().to_ascii_lowercase().as_str() {
            "r" | "resume" => return Ok(Collision::Resume),
            "n" | "new" => return Ok(Collision::New),
            "a" | "abort" => return Ok(Collision::Abort),
            other => ctx.ui.info(&format!(
                "`{}` is not one of R, N, A; try again.",
                sanitize(other)
            )),
        }
    }
}
