//! `gavel change impl ID`: implement a challenged change with the implementation workflow
//! (worktree, test first, the real test runner, lint), then the reviewer's structured review,
//! the diff gate and a typed `approve` to merge (seed 003, WF-R4). Decides by the phase alone:
//! `challenged` or `implementing`. Everything is checked before anything is written: the
//! phase, `tasks.md` (its layers; a task no layer fits is reported, never dropped), the plan
//! committed (the worktree is made from HEAD), the test command, pre-flight of both roles.

use clap::Args;
use gavel_workflows::change::ChangeDir;
use gavel_workflows::change::implement::{ChangeTarget, ImplementState, node};
use gavel_workflows::change::read::{is_present, read_text, read_text_optional};
use gavel_workflows::change::state::{Phase, load_state};
use gavel_workflows::change::tasks::parse_tasks;

use super::archive::refuse_unfinished;
use crate::context::Context;
use crate::driver::{self, GateMode};
use crate::error::CliError;
use crate::exit::Exit;
use crate::kinds::ChangeSettings;
use crate::ui::sanitize;

#[derive(Debug, Args)]
pub struct ImplArgs {
    /// The change's id (`[a-z0-9-]`, at most 64 characters).
    pub id: String,
    /// The test command, over [implement] test (e.g. "pytest -q", "cargo test").
    #[arg(long, value_name = "CMD")]
    pub test_cmd: Option<String>,
    /// The lint command, over [implement] lint.
    #[arg(long, value_name = "CMD")]
    pub lint_cmd: Option<String>,
    /// Override the implementer role (a provider string).
    #[arg(long, value_name = "PROVIDER")]
    pub implementer: Option<String>,
    /// Override the reviewer role (a provider string).
    #[arg(long, value_name = "PROVIDER")]
    pub reviewer: Option<String>,
    /// A budget for this run, in USD.
    #[arg(long, value_name = "USD")]
    pub budget: Option<f64>,
}

pub fn cmd_impl(args: &ImplArgs, mut ctx: Context) -> Result<Exit, CliError> {
    super::apply_flags(
        &mut ctx,
        &[
            ("implementer", &args.implementer),
            ("reviewer", &args.reviewer),
        ],
        args.budget,
    )?;
    let id = args.id.as_str();
    let root_rel = ctx.settings.section::<ChangeSettings>().root.clone();
    let root = ctx.settings.repo_root.join(&root_rel);
    let dir = ChangeDir::new(root, id).map_err(|e| CliError::usage(e.to_string()))?;
    if !is_present(&dir.state()) {
        return Err(CliError::usage(format!(
            "change `{id}` has no STATE.yaml: it has not been planned"
        ))
        .hint(format!(
            "gavel change plan {id} \"what the change should do\""
        )));
    }
    let state = load_state(&dir).map_err(|e| {
        CliError::usage(sanitize(&e.to_string())).hint("fix STATE.yaml; nothing was written")
    })?;
    if !matches!(state.phase, Phase::Challenged | Phase::Implementing) {
        return Err(CliError::usage(format!(
            "change `{id}` is `{}`, and only a challenged (or implementing) change is implemented",
            state.phase.as_str()
        ))
        .hint(match state.phase.next_command() {
            Some(c) => format!("gavel change {} {id}", c.as_str()),
            None => "`gavel change status` shows where it is".to_owned(),
        }));
    }
    let tasks_text =
        read_text(&dir.tasks()).map_err(|e| CliError::usage(sanitize(&e.to_string())))?;
    let tasks = parse_tasks(&tasks_text, id).map_err(|e| CliError::usage(e.to_string()))?;
    for i in &tasks.unclassified {
        if let Some(t) = tasks.tasks.get(*i) {
            ctx.ui.info(&format!(
                "note: task `{}` (tasks.md line {}) has no layer (Data, Logic, Integration, Testing); it is implemented all the same",
                sanitize(&t.text),
                t.line
            ));
        }
    }
    let git = gavel_workflows::git::Git::at(&ctx.settings.repo_root);
    let folder = ctx.rel(&dir.dir()).to_string_lossy().into_owned();
    let dirty = git
        .run(&[
            "status",
            "--porcelain",
            "--untracked-files=all",
            "--",
            &folder,
        ])
        .map_err(|e| CliError::error(e.to_string()))?;
    if !dirty.trim().is_empty() {
        return Err(CliError::usage(format!(
            "the plan of `{id}` has changes that are not committed ({folder}); the implementation starts from your last commit"
        ))
        .hint(format!("commit it first: git add {folder} && git commit -m \"plan {id}\"")));
    }
    let wf =
        crate::kinds::change_impl_workflow(&ctx, args.test_cmd.clone(), args.lint_cmd.clone())?;
    let mut problems = crate::kinds::implement_preflight(&ctx, &wf);
    problems.extend(wf.stage.preflight());
    crate::commands::start::preflight(problems)?;
    let (base_commit, base_branch) = crate::commands::start::base(&git)?;
    let store = ctx.open_store()?;
    refuse_unfinished(&*store, id)?;
    let reviewer = ctx
        .settings
        .role(gavel_workflows::change::implement::WORKFLOW, "reviewer")?;
    let implementer = ctx
        .settings
        .role(gavel_workflows::change::implement::WORKFLOW, "implementer")?;
    if let Some(w) = gavel_workflows::roles::same_model_warning(
        "reviewer",
        &reviewer.to_string(),
        "implementer",
        &implementer.to_string(),
    ) {
        ctx.ui.info(&format!("warning: {w}"));
    }
    let (title, plan) = plan_text(&dir, &tasks_text)?;
    let mut s = ImplementState::new(
        gavel_core::random_key(),
        0,
        title,
        ctx.rel(&dir.proposal()).to_string_lossy().into_owned(),
        plan,
        base_commit,
        base_branch.clone(),
        false,
        ctx.clock.now_rfc3339(),
    );
    s.spend.budget_micros = crate::commands::start::budget(&ctx);
    s.implementer = Some(wf.settings.implementer.clone());
    s.test_command = Some(wf.settings.test.command.clone());
    s.lint_command = wf.settings.lint.as_ref().map(|l| l.command.clone());
    s.change = Some(ChangeTarget {
        id: id.to_owned(),
        changes_root: root_rel.to_string_lossy().into_owned(),
        reviewer: reviewer.to_string(),
        max_rounds: state.implementation_iterations
            + ctx
                .settings
                .section::<ChangeSettings>()
                .implementation_iterations,
        rounds: state.implementation_iterations,
        planning_iterations: state.planning_iterations,
        reviewer_calls: 0,
        verdict: state.last_verdict,
        review_artifact: None,
        tasks_checked: false,
        checkout_state: None,
        review_attempts: 0,
        stop_reason: None,
        start_note: Some(format!(
            "STATE.yaml at the start: phase {}, {} review round(s) so far",
            state.phase.as_str(),
            state.implementation_iterations
        )),
    });
    let run = crate::commands::start::start(
        &ctx,
        &*store,
        &wf,
        &s,
        id,
        node::LOAD,
        "another `gavel change impl` of this change started a moment ago; see `gavel runs`",
    )?;
    ctx.ui.info(&format!(
        "run {run} started: implement change `{id}` ({} open task(s)) on branch gavel/change-{id} (merged into {base_branch} after the review and your approval)",
        tasks.open_tasks().len()
    ));
    driver::drive(&ctx, &*store, &wf, run, None, GateMode::for_ui(&ctx))
}

/// The change's title (from `# Change: TITLE`, else its id) and the plan the implementer
/// works from: the proposal's body, the delta specs, the tasks.
fn plan_text(dir: &ChangeDir, tasks: &str) -> Result<(String, String), CliError> {
    let refused = |e: &dyn std::fmt::Display| {
        CliError::usage(sanitize(&e.to_string())).hint("nothing was written")
    };
    let proposal = read_text_optional(&dir.proposal())
        .map_err(|e| refused(&e))?
        .unwrap_or_default();
    let body = gavel_workflows::change::plan::files::split_proposal(&proposal).0;
    let title = body
        .lines()
        .find_map(|l| l.strip_prefix("# "))
        .map(|t| t.trim_start_matches("Change:").trim().to_owned())
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| dir.id().to_owned());
    let mut plan = format!("### proposal.md\n\n{}\n", body.trim_end());
    let specs = gavel_workflows::change::plan::files::read_specs(dir).map_err(|e| refused(&e))?;
    for (cap, text) in specs {
        plan.push_str(&format!(
            "\n### specs/{cap}/spec.md\n\n{}\n",
            text.trim_end()
        ));
    }
    plan.push_str(&format!(
        "\n### tasks.md (implement the unchecked ones)\n\n{}\n",
        tasks.trim_end()
    ));
    Ok((title, plan))
}
