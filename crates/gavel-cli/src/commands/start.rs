//! What starting a run takes, whatever its workflow: pre-flight before anything is written,
//! the commit and branch a worktree run starts from, the collision with an unfinished run or
//! an existing lineage folder (Resume / New / Abort), and the run's creation claiming its slug
//! atomically. Every command that starts a run goes through these.

use clap::ValueEnum;
use gavel_core::{Engine, EngineError, RunId, Store, StoreError, Workflow};
use gavel_workflows::git::Git;

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

/// The flags every document command takes for the run it starts.
#[derive(Debug, Clone, clap::Args)]
pub struct RunFlags {
    /// Override the drafter role (a provider string).
    #[arg(long, value_name = "PROVIDER")]
    pub drafter: Option<String>,
    /// Override the reviewer role (a provider string).
    #[arg(long, value_name = "PROVIDER")]
    pub reviewer: Option<String>,
    /// Stop before any model call that would take the run's spend over USD.
    #[arg(long, value_name = "USD")]
    pub budget: Option<f64>,
    /// The tracker to use, over gavel.toml's [tracker] kind.
    #[arg(long, value_enum, value_name = "KIND")]
    pub tracker: Option<TrackerArg>,
}

impl RunFlags {
    /// These flags as settings overrides.
    pub fn overrides(&self) -> crate::settings::Overrides {
        crate::settings::Overrides {
            state_dir: None,
            roles: [("drafter", &self.drafter), ("reviewer", &self.reviewer)]
                .into_iter()
                .filter_map(|(r, p)| p.clone().map(|p| (r.to_owned(), p)))
                .collect(),
            budget: self.budget,
            tracker: self.tracker.map(TrackerKind::from),
        }
    }
}

/// How a collision was answered.
pub enum Resolution {
    /// Start a new run under this slug.
    Start(String),
    /// Continue this unfinished run.
    Resume(RunId),
    /// Do nothing (the person said so).
    Abort,
}

/// A collision to answer: what collides, and what to say.
pub struct Clash<'a> {
    pub workflow: &'a str,
    pub slug: &'a str,
    /// Told to the person before the question.
    pub question: String,
    /// Without a terminal and without `--on-collision`.
    pub refused: CliError,
    /// Resume asked for, but no run is unfinished.
    pub no_run: CliError,
}

/// Answers a collision: `--on-collision`, else the question in a terminal, else the refusal.
/// New takes its slug from `new_slug` (asked for, or numbered).
pub fn resolve(
    ctx: &Context,
    store: &dyn Store,
    clash: Clash<'_>,
    flag: Option<Collision>,
    new_slug: impl FnOnce() -> Result<String, CliError>,
) -> Result<Resolution, CliError> {
    let choice = match flag {
        Some(c) => c,
        None if ctx.ui.interactive() => ask_collision(ctx, &clash.question)?,
        None => return Err(clash.refused),
    };
    Ok(match choice {
        Collision::Abort => {
            ctx.ui.info("aborted; nothing was changed");
            Resolution::Abort
        }
        Collision::Resume => {
            let run = resumable_run(store, clash.workflow, clash.slug)?.ok_or(clash.no_run)?;
            ctx.ui.info(&format!("resuming run {run} ({})", clash.slug));
            Resolution::Resume(run)
        }
        Collision::New => Resolution::Start(new_slug()?),
    })
}

/// Continues `run` (the Resume answer to a collision).
pub fn resume(run: RunId, ctx: Context) -> Result<crate::exit::Exit, CliError> {
    crate::commands::resume::cmd_resume(&crate::commands::resume::ResumeArgs::of(run), ctx)
}

/// Pre-flight's verdict: every problem is listed, and nothing has been written.
pub fn preflight(problems: Vec<String>) -> Result<(), CliError> {
    if problems.is_empty() {
        return Ok(());
    }
    Err(CliError::error(format!(
        "pre-flight failed:\n  - {}",
        problems.join("\n  - ")
    ))
    .hint("nothing was written; fix these, then run the same command again"))
}

/// The commit and branch a worktree run starts from and merges into: the checkout's `HEAD`,
/// which must be a commit on a branch.
pub fn base(git: &Git) -> Result<(String, String), CliError> {
    let commit = git
        .head()
        .map_err(|e| CliError::error(e.to_string()))?
        .ok_or_else(|| CliError::usage("the repository has no commit to start from"))?;
    let branch = git
        .run(&["symbolic-ref", "--quiet", "--short", "HEAD"])
        .map(|b| b.trim().to_owned())
        .map_err(|_| {
            CliError::usage("your checkout is on a detached HEAD")
                .hint("switch to the branch the work should be merged into")
        })?;
    Ok((commit, branch))
}

/// The budget a new run starts with: `--budget`, else gavel.toml's.
pub fn budget(ctx: &Context) -> Option<u64> {
    ctx.settings.budget_override.or(ctx.settings.budget_micros)
}

/// Creates the run at `first` node, claiming `slug`; `raced` is the hint when another
/// process claimed it a moment ago.
pub fn start<W: Workflow>(
    ctx: &Context,
    store: &dyn Store,
    wf: &W,
    state: &W::State,
    slug: &str,
    first: &str,
    raced: &str,
) -> Result<RunId, CliError> {
    let engine = Engine::new(store, wf, ctx.clock.as_ref(), ctx.holder());
    match engine.start_claiming_slug(slug, state, first) {
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
        .runs_with_slug(slug, Some(workflow))?
        .into_iter()
        .rev()
        .find(|r| !r.status.is_terminal())
        .map(|r| r.id))
}

/// Asks Resume / New / Abort after telling the person `what` collides.
fn ask_collision(ctx: &Context, what: &str) -> Result<Collision, CliError> {
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
