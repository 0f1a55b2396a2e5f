//! The registry of workflow kinds: the one place the CLI maps a run's `workflow` name to the
//! code that can drive it.
//!
//! `resume`, `abort`, `show`, `runs` and the driver never name a workflow. A run record carries
//! its workflow's name; [`find`] returns the kind that knows how to build that workflow (its
//! providers, tracker, settings) from the run's own stored state and drive it. Adding a
//! workflow adds a module here and a line to [`KINDS`].

mod change;
mod document;
mod implement;
pub mod section;

use gavel_core::{GateAnswer, RunRecord};

use crate::error::CliError;
use crate::exit::Exit;

pub use change::settings::ChangeSettings;
use change::{CHANGE_ARCHIVE, CHANGE_IMPL, CHANGE_PLAN};
pub use change::{impl_workflow as change_impl_workflow, plan_workflow as change_plan_workflow};
pub use document::{ISSUE, LLD, workflow as doc_workflow};
pub use implement::settings::ImplementSettingsToml;
pub use implement::{IMPLEMENT, preflight as implement_preflight, workflow as implement_workflow};
use section::SettingsSection;

/// The brief → issue workflow wired to this repository (see [`doc_workflow`]).
pub fn issue_workflow(
    ctx: &crate::context::Context,
    editor_program: Option<String>,
    tracker: Option<&gavel_tracker::TrackerRef>,
) -> Result<gavel_workflows::document::DocWorkflow, CliError> {
    doc_workflow(ctx, &gavel_workflows::issue::ISSUE, editor_program, tracker)
}

/// What `gavel resume` hands a kind: the run, the answer to its gate (already checked against
/// the gate), and the person's changes for the rest of the run.
pub struct Resume<'a> {
    /// The repository's settings, resolved once; the kind applies the run's own on top.
    pub ctx: crate::context::Context,
    pub store: &'a dyn gavel_core::Store,
    pub record: &'a RunRecord,
    pub answer: Option<GateAnswer>,
    /// A new budget in USD (`--budget`).
    pub budget: Option<f64>,
    /// `--role ROLE=PROVIDER` changes, in the order given.
    pub roles: Vec<(String, String)>,
}

/// The roles `gavel doctor` checks for a kind: the one that writes and the one that judges
/// (two roles on one model get a warning).
pub struct DoctorRoles {
    pub author: &'static str,
    pub judge: Option<&'static str>,
    /// Whether they count towards "ready" (a change workflow's only once there are changes).
    pub required: bool,
    /// The gavel.toml section that sets them, for the fix.
    pub section: &'static str,
}

/// Where a kind's roles come from when neither the command line nor its own
/// `[workflows.NAME.roles]` sets them.
#[derive(Clone, Copy)]
pub struct RoleDefaults {
    /// The settings section whose `roles` table applies instead of `[roles]` (`changes`: the
    /// spec-driven change workflows' `[changes.roles]`).
    pub table: Option<&'static str>,
    /// The built-in provider of a role nothing sets.
    pub builtin: fn(&str) -> Option<&'static str>,
    /// `(role, other)`: `role` takes `other`'s provider when nothing sets it.
    pub falls_back: Option<(&'static str, &'static str)>,
}

impl RoleDefaults {
    /// `[roles]`, then the built-in drafter and reviewer.
    pub const SHARED: RoleDefaults = RoleDefaults {
        table: None,
        builtin: |role| match role {
            "drafter" => Some(crate::settings::DEFAULT_DRAFTER),
            "reviewer" => Some(crate::settings::DEFAULT_REVIEWER),
            _ => None,
        },
        falls_back: None,
    };

    /// `[changes.roles]`, then the seed's defaults for the change workflows.
    pub const CHANGES: RoleDefaults = RoleDefaults {
        table: Some(change::settings::SECTION.table),
        builtin: change::settings::default_role,
        falls_back: None,
    };
}

/// Where `workflow`'s roles come from ([`RoleDefaults::SHARED`] for a name no kind has).
pub fn role_defaults(workflow: &str) -> RoleDefaults {
    KINDS
        .iter()
        .find(|k| k.name() == workflow)
        .map_or(RoleDefaults::SHARED, |k| k.role_defaults())
}

/// A workflow's own subcommand: its name, its one-line help, its arguments (a clap `Args`
/// type's `augment_args`) and what runs it with the repository's context.
#[derive(Clone, Copy)]
pub struct CliCommand {
    pub name: &'static str,
    pub about: &'static str,
    pub args: fn(clap::Command) -> clap::Command,
    pub run: fn(&clap::ArgMatches, crate::context::Context) -> Result<Exit, CliError>,
}

impl CliCommand {
    /// The clap subcommand.
    pub fn command(&self) -> clap::Command {
        // `about` last: a flattened group's doc would otherwise become the command's.
        (self.args)(clap::Command::new(self.name)).about(self.about)
    }
}

/// A kind of workflow the CLI can drive.
pub trait WorkflowKind: Sync {
    /// The name stored with its runs (`issue`).
    fn name(&self) -> &'static str;

    /// The role names its runs have (`drafter`, `reviewer`), for checking `--role`.
    fn roles(&self) -> &'static [&'static str];

    /// Continues a run of this kind from its stored state.
    fn resume(&self, req: Resume<'_>) -> Result<Exit, CliError>;

    /// The subcommand that starts runs of this kind, if it has one of its own (the change
    /// workflow's three phases share `gavel change`, which its plan kind registers).
    fn cli(&self) -> Option<CliCommand> {
        None
    }

    /// Where its roles come from when nothing more specific sets them.
    fn role_defaults(&self) -> RoleDefaults {
        RoleDefaults::SHARED
    }

    /// The `gavel.toml` tables of its own family that it reads (kinds of one family name the
    /// same section; the registry keeps each once).
    fn settings_sections(&self) -> &'static [&'static SettingsSection] {
        &[]
    }

    /// What `gavel init` writes for this kind, each only where no file is: (path relative to
    /// the repository, text).
    fn init_files(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }

    /// The folders `gavel init` makes for this kind (each with a `.gitkeep`).
    fn init_dirs(&self) -> &'static [&'static str] {
        &[]
    }

    /// The roles `gavel doctor` checks for this kind, if it has any of its own.
    fn doctor_roles(&self, _settings: &crate::settings::Settings) -> Option<DoctorRoles> {
        None
    }

    /// Cleans up after `gavel abort` stopped a run (a worktree, a branch); says what it did.
    fn after_abort(
        &self,
        _ctx: &crate::context::Context,
        _store: &dyn gavel_core::Store,
        _run: gavel_core::RunId,
    ) -> Option<String> {
        None
    }
}

/// Every kind this gavel knows, in the order `gavel init` and `gavel doctor` list them.
static KINDS: &[&dyn WorkflowKind] = &[
    &ISSUE,
    &LLD,
    &CHANGE_PLAN,
    &CHANGE_IMPL,
    &IMPLEMENT,
    &CHANGE_ARCHIVE,
];

/// `A` read from its subcommand's matches (which clap has already checked against `A`).
pub(crate) fn parsed<A: clap::FromArgMatches>(m: &clap::ArgMatches) -> Result<A, CliError> {
    A::from_arg_matches(m).map_err(|e| CliError::usage(e.to_string()))
}

/// The workflows' own subcommands, in the registry's order.
pub fn cli_commands() -> impl Iterator<Item = CliCommand> {
    KINDS.iter().filter_map(|k| k.cli())
}

/// The workflows' own `gavel.toml` sections, each once, in the registry's order.
pub fn sections() -> Vec<&'static SettingsSection> {
    let mut out: Vec<&'static SettingsSection> = Vec::new();
    for s in KINDS.iter().flat_map(|k| k.settings_sections()) {
        if !out.iter().any(|o| o.table == s.table) {
            out.push(s);
        }
    }
    out
}

/// Every kind this gavel knows (`gavel init` and `gavel doctor` loop over them).
pub fn all() -> &'static [&'static dyn WorkflowKind] {
    KINDS
}

/// The kind that drives runs of `workflow`, or an error naming it.
pub fn find(workflow: &str) -> Result<&'static dyn WorkflowKind, CliError> {
    KINDS
        .iter()
        .copied()
        .find(|k| k.name() == workflow)
        .ok_or_else(|| {
            CliError::error(format!(
                "runs of the `{workflow}` workflow cannot be driven by this gavel"
            ))
            .hint(format!(
                "this gavel knows: {}; a newer gavel may know it",
                KINDS
                    .iter()
                    .map(|k| k.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })
}

/// A run's state as its workflow's type; a state that does not parse is an error that names
/// the run, never a default.
pub fn state_of<T: serde::de::DeserializeOwned>(
    store: &dyn gavel_core::Store,
    run: gavel_core::RunId,
) -> Result<T, CliError> {
    let head = store
        .head(run)?
        .ok_or_else(|| CliError::error(format!("run {run} has no checkpoint")))?;
    serde_json::from_slice(&head.state).map_err(|e| {
        CliError::error(format!("the state of run {run} cannot be read: {e}"))
            .hint("it may have been written by a newer gavel; nothing was changed")
    })
}
