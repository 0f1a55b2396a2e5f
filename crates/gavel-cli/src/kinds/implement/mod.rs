//! The implementation workflow as the CLI drives it: its implementer, test and lint commands
//! and limits wired from `gavel.toml` (and the run's own commands on resume), pre-flight, and
//! what aborting a run also removes (its worktree and branch).

use gavel_workflows::caller::CallerSettings;
use gavel_workflows::implement::{
    CommandSettings, ImplementSettings, ImplementState, ImplementWorkflow, RunnerKind, WORKFLOW,
};

use super::{Resume, WorkflowKind, state_of};
use crate::context::Context;
use crate::driver::{self, GateMode};
use crate::error::CliError;
use crate::exit::Exit;
use crate::settings::Overrides;
use settings::{ImplementSettingsToml, Sandbox};

pub mod settings;

/// The implementation kind's own section.
static SECTIONS: [&super::section::SettingsSection; 1] = [&settings::SECTION];

/// The implementation workflow's entry in the registry.
pub struct ImplementKind;

/// The one instance.
pub static IMPLEMENT: ImplementKind = ImplementKind;

impl WorkflowKind for ImplementKind {
    fn name(&self) -> &'static str {
        WORKFLOW
    }

    fn roles(&self) -> &'static [&'static str] {
        &["implementer"]
    }

    fn settings_sections(&self) -> &'static [&'static super::section::SettingsSection] {
        &SECTIONS
    }

    /// `[roles]`; an implementer nothing sets is the drafter's provider.
    fn role_defaults(&self) -> super::RoleDefaults {
        super::RoleDefaults {
            falls_back: Some(("implementer", "drafter")),
            ..super::RoleDefaults::SHARED
        }
    }

    fn cli(&self) -> Option<super::CliCommand> {
        Some(super::CliCommand {
            name: "implement",
            about: "Implement an approved LLD test first in an isolated worktree: failing tests, code until they pass, lint, the diff gate and your approval, then a merge",
            args: <crate::commands::implement::ImplementArgs as clap::Args>::augment_args,
            run: |m, ctx| crate::commands::implement::cmd_implement(&super::parsed(m)?, ctx),
        })
    }

    fn doctor_roles(&self, _settings: &crate::settings::Settings) -> Option<super::DoctorRoles> {
        Some(super::DoctorRoles {
            author: "implementer",
            judge: None,
            required: true,
            section: "[roles]",
        })
    }

    fn resume(&self, req: Resume<'_>) -> Result<Exit, CliError> {
        let state: ImplementState = state_of(req.store, req.record.id)?;
        let mut ctx = req.ctx;
        ctx.settings.apply(&Overrides {
            state_dir: None,
            budget: req.budget,
            roles: pinned_roles(&state, req.roles),
            tracker: None,
        })?;
        let wf = workflow(&ctx, state.test_command.clone(), state.lint_command.clone())?;
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
        discard_after_abort(ctx, store, run)
    }
}

/// The roles a resumed implementation run is built with: the ones pinned in its state, then
/// `gavel resume --role` changes. A run started before gavel pinned its implementer takes the
/// configuration's (and its timeline says so).
pub fn pinned_roles(
    state: &ImplementState,
    changes: Vec<(String, String)>,
) -> Vec<(String, String)> {
    let mut roles = Vec::new();
    if let Some(p) = &state.implementer {
        roles.push(("implementer".to_owned(), p.clone()));
    }
    if let Some(c) = &state.change {
        roles.push(("reviewer".to_owned(), c.reviewer.clone()));
    }
    roles.extend(changes);
    roles
}

/// What `gavel abort` does for an implementation run (of an issue or a change): its worktree
/// and branch removed, its lineage kept in the person's checkout.
pub fn discard_after_abort(
    ctx: &Context,
    store: &dyn gavel_core::Store,
    run: gavel_core::RunId,
) -> Option<String> {
    let state: ImplementState = state_of(store, run).ok()?;
    let name = state.worktree_name();
    let branch = format!("gavel/{name}");
    let lineage_dir = ctx.settings.lineage_dir_for(WORKFLOW);
    let blob = |h: &gavel_core::ContentHash| store.get_blob(h).ok().flatten();
    let spares = ctx
        .settings
        .section::<ImplementSettingsToml>()
        .spare_worktrees;
    Some(
        match gavel_workflows::implement::discard_run(
            &ctx.settings.repo_root,
            &lineage_dir,
            &state,
            &blob,
            spares,
        ) {
            Ok(Some(kept)) => format!(
                "its worktree and branch {branch} were removed; its lineage is kept in {}",
                kept.display()
            ),
            Ok(None) => format!("its worktree and branch {branch} were removed"),
            Err(e) => format!("its worktree could not be removed ({e}); see `gavel doctor`"),
        },
    )
}

/// The workflow wired to this repository: `test`/`lint` are this invocation's commands (or the
/// run's own on resume), over `[implement]`.
pub fn workflow(
    ctx: &Context,
    test: Option<String>,
    lint: Option<String>,
) -> Result<ImplementWorkflow, CliError> {
    workflow_for(ctx, WORKFLOW, test, lint)
}

/// [`workflow`] with the implementer of `workflow_name`'s roles (`implement`, `change-impl`).
pub fn workflow_for(
    ctx: &Context,
    workflow_name: &str,
    test: Option<String>,
    lint: Option<String>,
) -> Result<ImplementWorkflow, CliError> {
    let s = &ctx.settings;
    let i = s.section::<ImplementSettingsToml>();
    let test = test.or_else(|| i.test.clone()).ok_or_else(|| {
        CliError::usage("no test command").hint(
            "pass --test-cmd \"pytest -q\" (or cargo test, node --test, go test ./...), or set [implement] test in gavel.toml",
        )
    })?;
    let runner = i.runner.unwrap_or_else(|| RunnerKind::detect(&test));
    let spec = s.role(workflow_name, "implementer")?;
    let agent = gavel_llm::tools::cli_tool(spec.kind()).is_some();
    // Landlock confines the agent's edits and every test and lint run (untrusted code).
    let confine = if i.sandbox == Sandbox::Landlock {
        let program = std::env::current_exe().map_err(|e| {
            CliError::error(format!(
                "cannot find gavel's own program to confine the agent with: {e}"
            ))
        })?;
        Some(gavel_exec::confine::Launcher {
            program,
            args: vec!["__confine".into()],
        })
    } else {
        None
    };
    let mut globs = i.test_files.clone().unwrap_or_else(|| {
        runner
            .test_globs()
            .iter()
            .map(|g| (*g).to_owned())
            .collect()
    });
    // The runner's configuration decides what the tests do (a conftest.py hook can rewrite
    // every outcome): it counts as test files whatever `[implement] test_files` says.
    globs.extend(runner.config_globs().iter().map(|g| (*g).to_owned()));
    Ok(ImplementWorkflow {
        settings: ImplementSettings {
            repo_root: s.repo_root.clone(),
            lineage_dir: s.lineage_dir_for(WORKFLOW),
            test: CommandSettings {
                command: test,
                timeout: i.timeout,
            },
            runner,
            test_globs: globs,
            lint: lint
                .or_else(|| i.lint.clone())
                .map(|command| CommandSettings {
                    command,
                    timeout: i.timeout,
                }),
            scaffold_retries: i.retries,
            implement_retries: i.retries,
            agent,
            confine,
            calls: CallerSettings {
                budget_override: s.budget_override,
                prices: s.prices.clone(),
                strict_models: s.strict_models,
                max_output_tokens: s.max_output_tokens,
                team_budget_micros: s.team_budget_micros,
            },
            implementer: spec.to_string(),
            reviewer: None,
            audit_log: s.audit_log.clone(),
            output_limit: 256 * 1024,
            pass_env: i.pass_env.clone(),
            test_network: i.test_network,
            spare_worktrees: i.spare_worktrees,
            bypass_attempts: {
                let names: Vec<String> = std::env::vars_os()
                    .filter_map(|(k, _)| k.into_string().ok())
                    .collect();
                gavel_diffgate::bypass_variables(names.iter().map(String::as_str))
            },
        },
        implementer: ctx.provider(&spec),
        stage: Box::new(gavel_workflows::implement::Issue),
        observer: Some(std::sync::Arc::new(crate::spinner::Spinner::default())),
        carry: Default::default(),
    })
}

/// What must hold before a run starts: the implementer, the test command's program, and, for
/// an agent CLI, the operating system's confinement (or an explicit `sandbox = "none"`).
pub fn preflight(ctx: &Context, wf: &ImplementWorkflow) -> Vec<String> {
    let mut problems = Vec::new();
    if let Err(e) = wf.implementer.preflight() {
        problems.push(format!("implementer {}: {e}", wf.implementer.describe()));
    }
    let program = shell_words::split(&wf.settings.test.command)
        .ok()
        .and_then(|w| w.into_iter().find(|w| !w.contains('=')));
    if let Some(p) = program
        && gavel_llm::which::find_program(&p).is_none()
    {
        problems.push(format!(
            "the test command's program `{p}` is not on PATH ([implement] test or --test-cmd)"
        ));
    }
    if ctx.settings.section::<ImplementSettingsToml>().sandbox == Sandbox::Landlock {
        // The box built for real once, as every step will build it.
        let boxed = gavel_exec::confine::support().and_then(|_| {
            let dir =
                tempfile::tempdir().map_err(|e| gavel_exec::confine::ConfineError::Rules {
                    message: format!("cannot make a folder to try the box in: {e}"),
                })?;
            match &wf.settings.confine {
                Some(launcher) => gavel_exec::confine::probe(launcher, dir.path()),
                None => Ok(()),
            }
        });
        if let Err(e) = boxed {
            problems.push(format!(
                "the model's code and tests cannot be boxed: {e}; gavel will not run them unboxed unless [implement] sandbox = \"none\" is set"
            ));
        }
    }
    problems
}
