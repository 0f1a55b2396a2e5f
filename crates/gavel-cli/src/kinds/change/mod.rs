//! The spec-driven change workflows as the CLI drives them: `change-plan` with its planner
//! and challenger (a resume keeps the run's own), `change-impl` (the implementation workflow
//! with a reviewer), and `change-archive`, which has no model
//! role and needs only the repository it runs in.

use gavel_workflows::caller::CallerSettings;
use gavel_workflows::change::archive::{ArchiveWorkflow, WORKFLOW};
use gavel_workflows::change::implement::{
    self, CodeReviewer, ImplementState, ImplementWorkflow, McpLaunch,
};
use gavel_workflows::change::plan::{self, PlanSettings, PlanState, PlanWorkflow};

use super::section::SettingsSection;
use super::{Resume, WorkflowKind, state_of};
use crate::context::Context;
use crate::driver::{self, GateMode};
use crate::error::CliError;
use crate::exit::Exit;
use crate::settings::Overrides;
use settings::ChangeSettings;

pub mod settings;

/// The change kinds' own section, and `change impl`'s two (it runs `[implement]`'s tests).
static CHANGE_SECTIONS: [&SettingsSection; 1] = [&settings::SECTION];
static IMPL_SECTIONS: [&SettingsSection; 2] =
    [&settings::SECTION, &super::implement::settings::SECTION];

/// `gavel change archive`'s entry in the registry.
pub struct ArchiveKind;

/// The one instance.
pub static CHANGE_ARCHIVE: ArchiveKind = ArchiveKind;

impl WorkflowKind for ArchiveKind {
    fn settings_sections(&self) -> &'static [&'static SettingsSection] {
        &CHANGE_SECTIONS
    }

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
    fn settings_sections(&self) -> &'static [&'static SettingsSection] {
        &CHANGE_SECTIONS
    }

    fn name(&self) -> &'static str {
        plan::WORKFLOW
    }

    fn roles(&self) -> &'static [&'static str] {
        &["planner", "challenger"]
    }

    /// `gavel change` (list, status, plan, impl, archive) serves all three phases; the plan
    /// kind registers it.
    fn cli(&self) -> Option<super::CliCommand> {
        Some(super::CliCommand {
            name: "change",
            about: "Spec-driven changes (OpenSpec's layout): list, status, plan, impl, archive",
            args: <crate::commands::change::ChangeArgs as clap::Args>::augment_args,
            run: |m, ctx| crate::commands::change::cmd_change(&super::parsed(m)?, ctx),
        })
    }

    fn role_defaults(&self) -> super::RoleDefaults {
        super::RoleDefaults::CHANGES
    }

    fn doctor_roles(&self, settings: &crate::settings::Settings) -> Option<super::DoctorRoles> {
        Some(super::DoctorRoles {
            author: "planner",
            judge: Some("challenger"),
            required: has_changes(settings),
            section: "[changes.roles]",
        })
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
            retries: s.section::<ChangeSettings>().retries,
            roles: (planner.to_string(), challenger.to_string()),
            calls: CallerSettings {
                budget_override: s.budget_override,
                prices: s.prices.clone(),
                strict_models: s.strict_models,
                max_output_tokens: s.max_output_tokens,
                team_budget_micros: s.team_budget_micros,
            },
        },
        planner: ctx.provider(&planner),
        challenger: ctx.provider(&challenger),
        observer: Some(std::sync::Arc::new(crate::spinner::Spinner::default())),
    })
}

/// `gavel change impl`'s entry in the registry: the implementation workflow with a reviewer.
pub struct ImplKind;

/// The one instance.
pub static CHANGE_IMPL: ImplKind = ImplKind;

impl WorkflowKind for ImplKind {
    fn settings_sections(&self) -> &'static [&'static SettingsSection] {
        &IMPL_SECTIONS
    }

    fn name(&self) -> &'static str {
        implement::WORKFLOW
    }

    fn roles(&self) -> &'static [&'static str] {
        &["implementer", "reviewer"]
    }

    fn role_defaults(&self) -> super::RoleDefaults {
        super::RoleDefaults::CHANGES
    }

    fn doctor_roles(&self, settings: &crate::settings::Settings) -> Option<super::DoctorRoles> {
        Some(super::DoctorRoles {
            author: "implementer",
            judge: Some("reviewer"),
            required: has_changes(settings),
            section: "[changes.roles]",
        })
    }

    fn resume(&self, req: Resume<'_>) -> Result<Exit, CliError> {
        let state: ImplementState = state_of(req.store, req.record.id)?;
        let mut ctx = req.ctx;
        ctx.settings.apply(&Overrides {
            state_dir: None,
            budget: req.budget,
            roles: super::implement::pinned_roles(&state, req.roles),
            tracker: None,
        })?;
        let wf = impl_workflow(&ctx, state.test_command.clone(), state.lint_command.clone())?;
        driver::drive(
            &ctx,
            req.store,
            &wf,
            req.record.id,
            req.answer,
            GateMode::for_ui(&ctx),
        )
    }

    fn after_abort(
        &self,
        ctx: &Context,
        store: &dyn gavel_core::Store,
        run: gavel_core::RunId,
    ) -> Option<String> {
        super::implement::discard_after_abort(ctx, store, run)
    }
}

/// The implementation workflow for a change: the `change-impl` implementer, and the reviewer,
/// which gets gavel's MCP server when it is an agent CLI.
pub fn impl_workflow(
    ctx: &Context,
    test: Option<String>,
    lint: Option<String>,
) -> Result<ImplementWorkflow, CliError> {
    let mut wf = super::implement::workflow_for(ctx, implement::WORKFLOW, test, lint)?;
    let spec = ctx.settings.role(implement::WORKFLOW, "reviewer")?;
    let mcp = if gavel_llm::tools::cli_tool(spec.kind()).is_some() {
        let program = std::env::current_exe().map_err(|e| {
            CliError::error(format!(
                "cannot find gavel's own program to serve the reviewer's MCP tools: {e}"
            ))
        })?;
        Some(McpLaunch {
            program,
            args: vec!["mcp".into()],
        })
    } else {
        None
    };
    wf.settings.reviewer = Some(spec.to_string());
    wf.stage = Box::new(CodeReviewer {
        provider: ctx.provider(&spec),
        mcp,
    });
    Ok(wf)
}

/// Whether the repository has spec-driven changes: only then do their roles count towards
/// `gavel doctor`'s "ready".
fn has_changes(s: &crate::settings::Settings) -> bool {
    s.repo_root
        .join(&s.section::<ChangeSettings>().root)
        .join("changes")
        .is_dir()
}
