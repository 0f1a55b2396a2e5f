//! `gavel change plan ID [DESCRIPTION]`: start a plan run, deciding by `STATE.yaml`'s phase
//! alone (seed 003, WF-R1): a new change is proposed from DESCRIPTION; a `proposed` one is
//! challenged (a change another tool began gets its missing files first); a `rejected` one is
//! challenged again once its proposal was edited; later phases name the command that fits.
//! Everything is checked before anything is written.

use clap::Args;
use gavel_workflows::change::ChangeDir;
use gavel_workflows::change::plan::{PlanState, WORKFLOW, edited_since_rejection, node};
use gavel_workflows::change::read::is_present;
use gavel_workflows::change::state::{ChangeState, Phase, load_state};

use super::archive::refuse_unfinished;
use crate::context::Context;
use crate::driver::{self, GateMode};
use crate::error::CliError;
use crate::exit::Exit;
use crate::kinds::ChangeSettings;
use crate::ui::sanitize;

#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The change's id (`[a-z0-9-]`, at most 64 characters).
    pub id: String,
    /// What the change should do (needed for a new change).
    pub description: Option<String>,
    /// Override the planner role (a provider string).
    #[arg(long, value_name = "PROVIDER")]
    pub planner: Option<String>,
    /// Override the challenger role (a provider string).
    #[arg(long, value_name = "PROVIDER")]
    pub challenger: Option<String>,
    /// A budget for this run, in USD.
    #[arg(long, value_name = "USD")]
    pub budget: Option<f64>,
}

pub fn cmd_plan(args: &PlanArgs, mut ctx: Context) -> Result<Exit, CliError> {
    super::apply_flags(
        &mut ctx,
        &[("planner", &args.planner), ("challenger", &args.challenger)],
        args.budget,
    )?;
    let root = ctx
        .settings
        .repo_root
        .join(&ctx.settings.section::<ChangeSettings>().root);
    let dir = ChangeDir::new(root, &args.id).map_err(|e| CliError::usage(e.to_string()))?;
    let id = args.id.as_str();
    let (state, start, mut notes) = decide(&dir, args.description.is_some(), ctx.clock.now())?;
    let Some(start) = start else {
        ctx.ui.out(&format!(
            "the plan of `{id}` is complete (phase challenged); next: gavel change impl {id}"
        ));
        return Ok(Exit::Success);
    };
    if start == node::PROPOSAL && args.description.is_none() {
        return Err(CliError::usage(format!(
            "`{id}` is a new change, and a new change needs a description"
        ))
        .hint(format!(
            "gavel change plan {id} \"what the change should do\""
        )));
    }
    let wf = crate::kinds::change_plan_workflow(&ctx)?;
    let problems: Vec<String> = [("planner", &wf.planner), ("challenger", &wf.challenger)]
        .iter()
        .filter_map(|(r, p)| {
            p.preflight()
                .err()
                .map(|e| format!("{r} {}: {e}", p.describe()))
        })
        .collect();
    if !problems.is_empty() {
        return Err(CliError::error(format!(
            "pre-flight failed:\n  - {}",
            problems.join("\n  - ")
        ))
        .hint("nothing was written; fix these, then run the same command again"));
    }
    let store = ctx.open_store()?;
    refuse_unfinished(&*store, id)?;
    if let Some(w) = gavel_workflows::roles::same_model_warning(
        "challenger",
        &wf.challenger.describe(),
        "planner",
        &wf.planner.describe(),
    ) {
        ctx.ui.info(&format!("warning: {w}"));
        notes.push(w);
    }
    let mut s = PlanState::new(
        gavel_core::random_key(),
        &ctx.settings
            .section::<ChangeSettings>()
            .root
            .to_string_lossy(),
        &state,
        args.description.clone(),
        ctx.settings.section::<ChangeSettings>().planning_iterations,
        (
            ctx.settings.role(WORKFLOW, "planner")?.to_string(),
            ctx.settings.role(WORKFLOW, "challenger")?.to_string(),
        ),
        &ctx.clock.now_rfc3339(),
    );
    s.start_notes = notes;
    s.file_counter = gavel_workflows::lineage::highest_number(&dir.dir().join("lineage"));
    s.spend.budget_micros = crate::commands::start::budget(&ctx);
    let run = crate::commands::start::start(
        &ctx,
        &*store,
        &wf,
        &s,
        id,
        start,
        "another `gavel change plan` of this change started a moment ago; see `gavel runs`",
    )?;
    ctx.ui.info(&format!(
        "run {run} started: plan change `{id}` (from {start}; up to {} challenge round(s))",
        s.max_iterations
    ));
    driver::drive(&ctx, &*store, &wf, run, None, GateMode::for_ui(&ctx))
}

/// The change's state, the node to start at (`None`: planning is complete), and what to note
/// in the timeline, by the phase alone.
fn decide(
    dir: &ChangeDir,
    has_description: bool,
    now: jiff::Timestamp,
) -> Result<(ChangeState, Option<&'static str>, Vec<String>), CliError> {
    let id = dir.id();
    if !is_present(&dir.state()) {
        if !is_present(&dir.proposal()) {
            if dir.dir().exists() && !has_description {
                return Err(CliError::usage(format!(
                    "change `{id}` has no proposal.md and no STATE.yaml"
                ))
                .hint(format!(
                    "gavel change plan {id} \"what the change should do\""
                )));
            }
            return Ok((
                ChangeState::new(id, now),
                Some(node::PROPOSAL),
                vec![format!("new change `{id}`")],
            ));
        }
        return Ok((
            ChangeState::new(id, now),
            Some(first_missing(dir)),
            vec!["no STATE.yaml: a change begun elsewhere, taken as proposed".to_owned()],
        ));
    }
    let state = load_state(dir).map_err(|e| {
        CliError::usage(sanitize(&e.to_string()))
            .hint("fix STATE.yaml (or remove it); nothing was written")
    })?;
    let mut notes = vec![format!(
        "STATE.yaml at the start: phase {}, {} challenge round(s) so far",
        state.phase.as_str(),
        state.planning_iterations
    )];
    match state.phase {
        Phase::Proposed => Ok((state, Some(first_missing(dir)), notes)),
        Phase::Challenged => Ok((state, None, notes)),
        Phase::Rejected => match edited_since_rejection(dir) {
            Some(true) => {
                notes.push("the proposal was edited since the rejection: back to proposed".into());
                let mut state = state;
                state.phase = Phase::Proposed;
                Ok((state, Some(first_missing(dir)), notes))
            }
            Some(false) => Err(CliError::usage(format!(
                "change `{id}` was rejected, and its proposal has not changed since"
            ))
            .hint(format!(
                "read the findings at the end of {}, edit the proposal, then run `gavel change plan {id}` again",
                dir.proposal().display()
            ))),
            None => Err(CliError::usage(format!(
                "change `{id}` is rejected, and gavel has no record of what was rejected"
            ))
            .hint("edit the proposal, then set `phase: proposed` in its STATE.yaml and run this again")),
        },
        other => Err(CliError::usage(format!(
            "change `{id}` is `{}`: planning is over",
            other.as_str()
        ))
        .hint(match other.next_command() {
            Some(c) => format!("gavel change {} {id}", c.as_str()),
            None => "`gavel change status` shows where it is".to_owned(),
        })),
    }
}

/// Where a proposed change's plan goes on: the first missing file's step, else the challenge.
fn first_missing(dir: &ChangeDir) -> &'static str {
    let has_specs = std::fs::read_dir(dir.specs_dir())
        .map(|mut e| e.any(|e| e.is_ok_and(|e| e.path().join("spec.md").is_file())))
        .unwrap_or(false);
    if !is_present(&dir.proposal()) {
        node::PROPOSAL
    } else if !has_specs {
        node::SPECS
    } else if !is_present(&dir.tasks()) {
        node::TASKS
    } else {
        node::CHALLENGE
    }
}
