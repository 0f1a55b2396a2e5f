//! The brief → issue workflow as the CLI drives it: its providers, tracker and settings wired
//! from `gavel.toml`, and how a run of it is resumed with the roles it started with.

use gavel_workflows::caller::CallerSettings;
use gavel_workflows::issue::{
    IssueSettings, IssueState, IssueWorkflow, Roles, TEMPLATE_PATH, WORKFLOW,
};
use gavel_workflows::tracker::TrackerRef;

use super::{Resume, WorkflowKind, state_of};
use crate::context::Context;
use crate::driver::{self, GateMode};
use crate::editor;
use crate::error::CliError;
use crate::exit::Exit;
use crate::settings::Overrides;

/// The issue workflow's entry in the registry.
pub struct IssueKind;

/// The one instance.
pub static ISSUE: IssueKind = IssueKind;

impl WorkflowKind for IssueKind {
    fn name(&self) -> &'static str {
        WORKFLOW
    }

    fn roles(&self) -> &'static [&'static str] {
        &["drafter", "reviewer"]
    }

    fn resume(&self, req: Resume<'_>) -> Result<Exit, CliError> {
        let run = req.record.id;
        let state: IssueState = state_of(req.store, run)?;
        // The run's own roles, then --role changes; gavel.toml only for runs started by a
        // gavel that did not save them.
        let mut roles: Vec<(String, String)> = match &state.roles {
            Some(r) => vec![
                ("drafter".into(), r.drafter.clone()),
                ("reviewer".into(), r.reviewer.clone()),
            ],
            None => Vec::new(),
        };
        roles.extend(req.roles);
        let mut ctx = req.ctx;
        ctx.settings.apply(&Overrides {
            state_dir: None,
            budget: req.budget,
            roles,
            tracker: None,
        })?;
        let editor_program = if state.auto || !ctx.ui.interactive() {
            None
        } else {
            editor::resolve()?.into_iter().next()
        };
        let wf = workflow(&ctx, editor_program, state.tracker.as_ref())?;
        driver::drive(
            &ctx,
            req.store,
            &wf,
            run,
            req.answer,
            GateMode::for_ui(&ctx),
        )
    }
}

/// The issue workflow wired to this repository: its roles' providers, its tracker (the run's
/// own when it has one, else `[tracker]`), and the live call display. Fails (a usage error) on
/// a role whose provider string is invalid, or a tracker that cannot be set up.
pub fn workflow(
    ctx: &Context,
    editor_program: Option<String>,
    tracker: Option<&TrackerRef>,
) -> Result<IssueWorkflow, CliError> {
    let s = &ctx.settings;
    let drafter = s.role(WORKFLOW, "drafter")?;
    let reviewer = s.role(WORKFLOW, "reviewer")?;
    Ok(IssueWorkflow {
        kind: &gavel_workflows::issue::ISSUE,
        settings: IssueSettings {
            repo_root: s.repo_root.clone(),
            lineage_dir: s.lineage_dir_for(WORKFLOW),
            ideas_dir: s.ideas_dir_for(WORKFLOW),
            template_path: s
                .template_for(WORKFLOW)
                .unwrap_or_else(|| TEMPLATE_PATH.into()),
            max_iterations: s.max_iterations(WORKFLOW),
            editor_program,
            calls: CallerSettings {
                budget_override: s.budget_override,
                prices: s.prices.clone(),
                strict_models: s.strict_models,
                max_output_tokens: s.max_output_tokens,
            },
            roles: Roles {
                drafter: drafter.to_string(),
                reviewer: reviewer.to_string(),
            },
            drafter_reads_repo: false,
        },
        drafter: ctx.provider(&drafter),
        reviewer: ctx.provider(&reviewer),
        tracker: crate::tracker::build(s, tracker)?,
        observer: Some(std::sync::Arc::new(crate::spinner::Spinner::default())),
    })
}
