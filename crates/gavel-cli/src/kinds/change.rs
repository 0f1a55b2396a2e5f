//! The spec-driven change workflows as the CLI drives them: `change-plan` with its planner
//! and challenger (a resume keeps the run's own), and `change-archive`, which has no model
//! role and needs only the repository it runs in.

use gavel_workflows::caller::CallerSettings;
use gavel_workflows::change::archive::{ArchiveWorkflow, WORKFLOW};
use gavel_workflows::change::plan::{self, PlanSettings, PlanState, PlanWorkflow};

use super::{Resume, WorkflowKind, state_of};
use crate::context::Context;
use crate::driver::{self, GateMode};
use crate::error::CliError;
use crate::exit::Exit;
use crate::settings::Overrides;

/// `gavel change archive`'s entry in the registry.
pub struct ArchiveKind;

/// The one instance.
pub static CHANGE_ARCHIVE: ArchiveKind = ArchiveKind;

impl WorkflowKind for ArchiveKind {
    fn name(&self) -> &'static str {
        WORKFLOW
    }

    fn roles(&self) -> &'static [&'static str] {
        &[]
    }

    fn resume(&self, req: Resume<'_>) -> Result<Exit, CliError> {
        let wf = ArchiveWorkflow {
            repo_root: req.ctx.settings.repo_root.clone(),
        };
        driver::drive(
            &req.ctx,
            req.store,
            &wf,
            req.record.id,
            req.answer,
            GateMode::for_ui(&req.ctx),
        )
    }
}

/// `gavel change plan`'s entry in the registry.
pub struct PlanKind;

/// The one instance.
pub static CHANGE_PLAN: PlanKind = PlanKind;

impl WorkflowKind for PlanKind {
    fn name(&self) -> &'static str {
        plan::WORKFLOW
    }

    fn roles(&self) -> &'static [&'static str] {
        &["planner", "challenger"]
    }

    fn resume(&self, req: Resume<'_>) -> Result<Exit, CliError> {
        let state: PlanState = state_of(req.store, req.record.id)?;
        // The run's own roles, then --role changes.
        let mut roles = vec![
            ("planner".to_owned(), state.planner.clone()),
            ("challenger".to_owned(), state.challenger.clone()),
        ];
        roles.extend(req.roles);
        let mut ctx = req.ctx;
        ctx.settings.apply(&Overrides {
            state_dir: None,
            budget: req.budget,
            roles,
            tracker: None,
        })?;
        let wf = plan_workflow(&ctx)?;
        driver::drive(
            &ctx,
            req.store,
            &wf,
            req.record.id,
            req.answer,
            GateMode::for_ui(&ctx),
        )
    }
}

/// The plan workflow wired to this repository: its planner and challenger from the roles.
pub fn plan_workflow(ctx: &Context) -> Result<PlanWorkflow, CliError> {
    let s = &ctx.settings;
    let planner = s.role(plan::WORKFLOW, "planner")?;
    let challenger = s.role(plan::WORKFLOW, "challenger")?;
    Ok(PlanWorkflow {
        settings: PlanSettings {
            repo_root: s.repo_root.clone(),
            retries: s.changes.retries,
            calls: CallerSettings {
                budget_override: s.budget_override,
                prices: s.prices.clone(),
                strict_models: s.strict_models,
                max_output_tokens: s.max_output_tokens,
            },
        },
        planner: ctx.provider(&planner),
        challenger: ctx.provider(&challenger),
        observer: Some(std::sync::Arc::new(crate::spinner::Spinner::default())),
    })
}
