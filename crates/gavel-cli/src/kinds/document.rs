//! The document workflow's kinds as the CLI drives them (brief → issue, issue → LLD): their
//! providers, tracker and settings wired from `gavel.toml`, and how a run of either is resumed
//! with the roles and tracker it started with. One implementation serves both kinds.

use gavel_tracker::TrackerRef;
use gavel_workflows::caller::CallerSettings;
use gavel_workflows::document::{DocKind, DocSettings, DocState, DocWorkflow, Roles};

use super::{Resume, WorkflowKind, state_of};
use crate::context::Context;
use crate::driver::{self, GateMode};
use crate::editor;
use crate::error::CliError;
use crate::exit::Exit;
use crate::settings::Overrides;

/// A document kind's entry in the registry: the kind, its subcommand, and what `gavel init`
/// writes for it.
pub struct DocumentKind(
    pub &'static DocKind,
    super::CliCommand,
    /// The built-in template and rubric texts.
    &'static str,
    &'static str,
    /// The folders it reads from and writes to.
    &'static [&'static str],
);

/// brief → issue.
pub static ISSUE: DocumentKind = DocumentKind(
    &gavel_workflows::issue::ISSUE,
    super::CliCommand {
        name: "issue",
        about: "Turn a brief into a filed issue: draft, human gate, review, human gate, file",
        args: <crate::commands::issue::IssueArgs as clap::Args>::augment_args,
        run: |m, ctx| crate::commands::issue::cmd_issue(&super::parsed(m)?, ctx),
    },
    gavel_workflows::issue::prompts::DEFAULT_TEMPLATE,
    gavel_workflows::issue::prompts::DEFAULT_RUBRIC,
    &[
        "ideas/active",
        "ideas/done",
        "docs/lineage/active",
        "docs/lineage/done",
    ],
);

/// issue → LLD.
pub static LLD: DocumentKind = DocumentKind(
    &gavel_workflows::lld::LLD,
    super::CliCommand {
        name: "lld",
        about: "Turn an issue into an approved low-level design: draft, human gate, review, human gate, commit docs/lld/active/LLD-N.md",
        args: <crate::commands::lld::LldArgs as clap::Args>::augment_args,
        run: |m, ctx| crate::commands::lld::cmd_lld(&super::parsed(m)?, ctx),
    },
    gavel_workflows::lld::prompts::DEFAULT_TEMPLATE,
    gavel_workflows::lld::prompts::DEFAULT_RUBRIC,
    &[gavel_workflows::lld::LLD_DIR],
);

impl WorkflowKind for DocumentKind {
    fn name(&self) -> &'static str {
        self.0.name
    }

    fn roles(&self) -> &'static [&'static str] {
        &["drafter", "reviewer"]
    }

    fn init_files(&self) -> Vec<(&'static str, String)> {
        vec![
            (self.0.template_path, self.2.to_owned()),
            (self.0.rubric_path, self.3.to_owned()),
        ]
    }

    fn init_dirs(&self) -> &'static [&'static str] {
        self.4
    }

    fn cli(&self) -> Option<super::CliCommand> {
        Some(self.1)
    }

    fn doctor_roles(&self, _settings: &crate::settings::Settings) -> Option<super::DoctorRoles> {
        Some(super::DoctorRoles {
            author: "drafter",
            judge: Some("reviewer"),
            required: true,
            section: "[roles]",
        })
    }

    fn resume(&self, req: Resume<'_>) -> Result<Exit, CliError> {
        let run = req.record.id;
        let state: DocState = state_of(req.store, run)?;
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
        let wf = workflow(&ctx, self.0, editor_program, state.tracker.as_ref())?;
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

/// A document workflow of `kind` wired to this repository: its roles' providers, its tracker
/// (the run's own when it has one, else `[tracker]`), and the live call display. Fails (a
/// usage error) on a role whose provider string is invalid, or a tracker that cannot be set up.
pub fn workflow(
    ctx: &Context,
    kind: &'static DocKind,
    editor_program: Option<String>,
    tracker: Option<&TrackerRef>,
) -> Result<DocWorkflow, CliError> {
    let s = &ctx.settings;
    let name = kind.name;
    let drafter = s.role(name, "drafter")?;
    let reviewer = s.role(name, "reviewer")?;
    Ok(DocWorkflow {
        kind,
        settings: DocSettings {
            repo_root: s.repo_root.clone(),
            lineage_dir: s.lineage_dir_for(name),
            ideas_dir: s.ideas_dir_for(name),
            template_path: s
                .template_for(name)
                .unwrap_or_else(|| kind.template_path.into()),
            max_iterations: s.max_iterations(name),
            editor_program,
            calls: CallerSettings {
                budget_override: s.budget_override,
                prices: s.prices.clone(),
                strict_models: s.strict_models,
                max_output_tokens: s.max_output_tokens,
                team_budget_micros: s.team_budget_micros,
            },
            roles: Roles {
                drafter: drafter.to_string(),
                reviewer: reviewer.to_string(),
            },
            drafter_reads_repo: s.drafter_reads_repo(name),
        },
        drafter: ctx.provider(&drafter),
        reviewer: ctx.provider(&reviewer),
        tracker: crate::tracker::build(s, tracker)?,
        observer: Some(std::sync::Arc::new(crate::spinner::Spinner::default())),
        preflight: Default::default(),
    })
}
