//! Arguments, then `gavel.toml`, then the environment, resolved into one [`Settings`] value
//! before any command runs. The engine and workflows never see clap types or raw config.

mod context;
mod credentials;
pub(crate) mod reference;
pub mod storage;
mod tracker;
mod workflows;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Component, Path, PathBuf};

use gavel_llm::{Login, ProviderSpec, VALID_FORMS};
use serde::Deserialize;

use self::context::ContextConfig;
use self::credentials::{KeysConfig, LoginsConfig};
use self::storage::StorageConfig;
use self::tracker::TrackerConfig;
pub use self::tracker::{TrackerKind, TrackerSettings};
use self::workflows::{WorkflowConfig, WorkflowPaths};
use crate::error::CliError;
use crate::kinds::section::{SectionInput, SectionValue};

/// The config file's name, at the repository root.
pub const CONFIG_FILE: &str = "gavel.toml";

/// Default roles written by `gavel init`.
pub const DEFAULT_DRAFTER: &str = "claude:sonnet";
pub const DEFAULT_REVIEWER: &str = "gemini:2.5-pro";
pub const DEFAULT_MAX_ITERATIONS: u32 = 20;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    strict_models: Option<bool>,
    #[serde(default)]
    roles: RolesConfig,
    #[serde(default)]
    timeouts: TimeoutsConfig,
    #[serde(default)]
    keys: KeysConfig,
    #[serde(default)]
    logins: LoginsConfig,
    #[serde(default)]
    prices: std::collections::BTreeMap<String, gavel_llm::Price>,
    #[serde(default)]
    diff_gate: DiffGateConfig,
    #[serde(default)]
    limits: LimitsConfig,
    #[serde(default)]
    tracker: TrackerConfig,
    #[serde(default)]
    paths: PathsConfig,
    #[serde(default)]
    storage: StorageConfig,
    /// `[workflows.NAME]`: settings of one workflow, over the global ones.
    #[serde(default)]
    workflows: BTreeMap<String, WorkflowConfig>,
    #[serde(default)]
    context: ContextConfig,
}

/// `[roles]`: role name → provider string, for every workflow that has the role.
type RolesConfig = BTreeMap<String, String>;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct LimitsConfig {
    max_iterations: Option<u32>,
    budget_usd: Option<f64>,
    max_output_tokens: Option<u32>,
    retries: Option<u32>,
    retry_delay_ms: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct DiffGateConfig {
    approval_timeout_secs: Option<u64>,
    audit_log: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct TimeoutsConfig {
    idle_secs: Option<u64>,
    total_secs: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PathsConfig {
    lineage: Option<String>,
    ideas: Option<String>,
}

/// Everything a command needs to know about where and how to run.
#[derive(Debug, Clone)]
pub struct Settings {
    pub repo_root: PathBuf,
    pub state_dir: PathBuf,
    /// Role providers as written: `--role`/`--drafter`-style overrides of this invocation,
    /// `[workflows.NAME.roles]`, `[roles]`, then the built-in defaults. Parsed only when a
    /// workflow asks for one ([`Settings::role`]), so a bad role never stops `runs`, `show` or
    /// `abort`.
    roles: RoleTable,
    /// `[workflows.NAME]` max_iterations over `[limits]`'s, per workflow.
    max_iterations: BTreeMap<String, u32>,
    default_max_iterations: u32,
    /// `[workflows.NAME]` lineage, ideas and template, over the global ones.
    workflow_paths: BTreeMap<String, WorkflowPaths>,
    /// `[workflows.NAME] drafter_reads_repo`, per workflow.
    drafter_reads_repo: BTreeMap<String, bool>,
    /// `[context]`: what context files may be given to a model.
    pub context: gavel_context::ContextSettings,
    /// The workflows' own sections (`[implement]`, `[changes]`), checked, by table name
    /// ([`Settings::section`]).
    sections: Sections,
    /// `[tracker]`, with `--tracker` applied.
    pub tracker: TrackerSettings,
    pub lineage_dir: PathBuf,
    pub ideas_dir: PathBuf,
    pub strict_models: bool,
    /// The default budget of new runs (micro-USD), and `--budget` for this invocation.
    pub budget_micros: Option<u64>,
    pub budget_override: Option<u64>,
    pub max_output_tokens: u32,
    pub retry: gavel_llm::RetryPolicy,
    pub idle_timeout: std::time::Duration,
    pub total_timeout: std::time::Duration,
    /// `[keys]`: the variables holding API keys, per HTTP provider kind, in rotation order.
    pub key_env: BTreeMap<String, Vec<String>>,
    /// `[logins]`: the logins per agent CLI kind, in rotation order.
    pub logins: BTreeMap<String, Vec<Login>>,
    pub prices: gavel_llm::PriceTable,
    /// How long `gavel diff-gate` waits for `approve` before it rejects.
    pub approval_timeout: std::time::Duration,
    /// Where the diff gate appends its decisions, relative to `repo_root` (default
    /// [`gavel_diffgate::DEFAULT_AUDIT_LOG`], a file the team commits).
    pub audit_log: PathBuf,
    /// Sync every artifact and every checkpoint to disk (survives power loss, not only kill -9).
    pub fsync: bool,
    /// Where runs are kept: the SQLite file, or a shared PostgreSQL database.
    pub backend: storage::Backend,
    /// `[storage] project`: this clone's project in a shared store (default: the origin remote).
    pub project: Option<String>,
    /// `[storage] team_budget_usd`: the store's monthly budget, over every run in it.
    pub team_budget_micros: Option<u64>,
}

/// Overrides from the command line.
#[derive(Debug, Default, Clone)]
pub struct Overrides {
    pub state_dir: Option<PathBuf>,
    /// Role → provider for this invocation (`--drafter`, `--reviewer`, `gavel resume --role`).
    pub roles: Vec<(String, String)>,
    /// `--budget USD`.
    pub budget: Option<f64>,
    /// `--tracker KIND`.
    pub tracker: Option<TrackerKind>,
}

impl Settings {
    /// Reads `gavel.toml` at `repo_root` (defaults when absent) and applies `overrides`.
    pub fn load(repo_root: &Path, overrides: &Overrides) -> Result<Self, CliError> {
        let path = repo_root.join(CONFIG_FILE);
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => {
                return Err(CliError::error(format!(
                    "cannot read {}: {e}",
                    path.display()
                )));
            }
        };
        let (config, sections) = parse(&path, &text)?;
        let roles = RoleTable {
            overrides: overrides.roles.clone(),
            per_workflow: {
                let mut m: BTreeMap<String, BTreeMap<String, String>> = config
                    .workflows
                    .iter()
                    .map(|(w, c)| (w.clone(), c.roles.clone()))
                    .collect();
                // A kind whose roles come from a section's `roles` table ([changes.roles])
                // takes them below its own [workflows.NAME.roles].
                for kind in crate::kinds::all() {
                    let table = kind.role_defaults().table;
                    let Some(shared) = table.and_then(|t| sections.get(t)?.roles()) else {
                        continue;
                    };
                    let roles = m.entry(kind.name().to_owned()).or_default();
                    for (r, p) in shared {
                        roles.entry(r.clone()).or_insert_with(|| p.clone());
                    }
                }
                m
            },
            global: config.roles.clone(),
        };
        let default_max_iterations = config
            .limits
            .max_iterations
            .unwrap_or(DEFAULT_MAX_ITERATIONS);
        let mut max_iterations = BTreeMap::new();
        for (w, c) in &config.workflows {
            if let Some(n) = c.max_iterations {
                max_iterations.insert(w.clone(), n);
            }
        }
        let workflow_paths = workflows::paths(&config.workflows, relative)?;
        let drafter_reads_repo = workflows::drafter_reads_repo(&config.workflows);
        if default_max_iterations == 0 || max_iterations.values().any(|n| *n == 0) {
            return Err(CliError::error(format!(
                "{}: max_iterations must be at least 1",
                path.display()
            )));
        }
        let tracker = config.tracker.resolve(&path, relative)?;
        let context = config.context.resolve(&path)?;
        let money = usd;
        let budget_micros = config
            .limits
            .budget_usd
            .map(|v| money("[limits] budget_usd", v))
            .transpose()?;
        let budget_override = overrides.budget.map(|v| money("--budget", v)).transpose()?;
        let defaults = gavel_llm::RetryPolicy::default();
        let retry = gavel_llm::RetryPolicy {
            max_retries: config.limits.retries.unwrap_or(defaults.max_retries),
            base_delay: config
                .limits
                .retry_delay_ms
                .map_or(defaults.base_delay, std::time::Duration::from_millis),
            max_delay: defaults.max_delay,
        };
        let secs = |v: Option<u64>, default: u64, key: &str| match v {
            Some(0) => Err(CliError::error(format!(
                "{}: {key} must be at least 1",
                path.display()
            ))),
            Some(n) => Ok(std::time::Duration::from_secs(n)),
            None => Ok(std::time::Duration::from_secs(default)),
        };
        let idle_timeout = secs(config.timeouts.idle_secs, 120, "idle_secs")?;
        let total_timeout = secs(config.timeouts.total_secs, 600, "total_secs")?;
        let prices = gavel_llm::PriceTable::default().with(config.prices);
        let state_dir = match &overrides.state_dir {
            Some(dir) if dir.is_absolute() => dir.clone(),
            Some(dir) => std::env::current_dir()
                .map(|c| c.join(dir))
                .unwrap_or_else(|_| dir.clone()),
            None => repo_root.join(".gavel"),
        };
        Ok(Self {
            repo_root: repo_root.to_path_buf(),
            state_dir,
            roles,
            max_iterations,
            default_max_iterations,
            workflow_paths,
            drafter_reads_repo,
            context,
            sections,
            tracker,
            lineage_dir: relative(
                "paths.lineage",
                config.paths.lineage.as_deref().unwrap_or("docs/lineage"),
            )?,
            ideas_dir: relative(
                "paths.ideas",
                config.paths.ideas.as_deref().unwrap_or("ideas"),
            )?,
            strict_models: config.strict_models.unwrap_or(false),
            budget_micros,
            budget_override,
            max_output_tokens: config
                .limits
                .max_output_tokens
                .unwrap_or(gavel_llm::DEFAULT_MAX_OUTPUT_TOKENS),
            retry,
            idle_timeout,
            total_timeout,
            key_env: credentials::key_env(&config.keys)?,
            logins: credentials::logins(
                &config.logins,
                std::env::var_os("HOME").map(PathBuf::from).as_deref(),
            )?,
            prices,
            approval_timeout: secs(
                config.diff_gate.approval_timeout_secs,
                1800,
                "approval_timeout_secs",
            )?,
            audit_log: relative(
                "diff_gate.audit_log",
                config
                    .diff_gate
                    .audit_log
                    .as_deref()
                    .unwrap_or(gavel_diffgate::DEFAULT_AUDIT_LOG),
            )?,
            fsync: config.storage.fsync.unwrap_or(false),
            backend: config
                .storage
                .backend(std::env::var(storage::DATABASE_URL_ENV).ok())?,
            project: config.storage.project()?,
            team_budget_micros: config
                .storage
                .team_budget_usd
                .map(|v| usd("[storage] team_budget_usd", v))
                .transpose()?,
        })
    }

    /// Applies a command's own flags (roles, budget) to settings resolved once for the whole
    /// invocation. `state_dir` is the global flag and is resolved by [`Settings::load`].
    pub fn apply(&mut self, o: &Overrides) -> Result<(), CliError> {
        self.roles.overrides.extend(o.roles.iter().cloned());
        if let Some(v) = o.budget {
            self.budget_override = Some(usd("--budget", v)?);
        }
        if let Some(kind) = o.tracker {
            self.tracker.kind = kind;
        }
        Ok(())
    }

    /// The checked value of a workflow's own section, by its type (`ImplementSettingsToml`
    /// for `[implement]`); every registered section has one, defaults when the file has none.
    ///
    /// # Panics
    /// When no registered section has the type `T`: a kind asking for a section it did not
    /// register (a programming error the tests catch, not something a user can cause).
    pub fn section<T: SectionValue>(&self) -> &T {
        self.sections
            .0
            .values()
            .find_map(|v| (v.as_ref() as &dyn std::any::Any).downcast_ref::<T>())
            .unwrap_or_else(|| {
                panic!(
                    "no registered settings section holds a {}",
                    std::any::type_name::<T>()
                )
            })
    }

    /// The state database's path.
    pub fn db_path(&self) -> PathBuf {
        self.state_dir.join("state.db")
    }

    /// The provider for `role` of `workflow`: this invocation's override, else
    /// `[workflows.WORKFLOW.roles]`, else the shared table and the built-in defaults the
    /// workflow's kind names ([`crate::kinds::RoleDefaults`]): `[roles]` and the built-in
    /// drafter and reviewer (the implementer takes the drafter's), or, for the change
    /// workflows, `[changes.roles]` and the seed's defaults (`kinds/change/settings.rs`), never
    /// `[roles]`, whose reviewer is the document workflows'. A bad string is a usage error
    /// naming the role.
    pub fn role(&self, workflow: &str, role: &str) -> Result<ProviderSpec, CliError> {
        let defaults = crate::kinds::role_defaults(workflow);
        let t = &self.roles;
        let own = t
            .overrides
            .iter()
            .rev()
            .find(|(r, _)| r == role)
            .map(|(_, p)| p.as_str())
            .or_else(|| {
                t.per_workflow
                    .get(workflow)
                    .and_then(|m| m.get(role))
                    .map(String::as_str)
            });
        let value = if defaults.table.is_some() {
            own.or_else(|| (defaults.builtin)(role))
        } else {
            if own.is_none()
                && !t.global.contains_key(role)
                && let Some((_, other)) = defaults.falls_back.filter(|(r, _)| *r == role)
            {
                return self.role(workflow, other);
            }
            own.or_else(|| t.global.get(role).map(String::as_str))
                .or_else(|| (defaults.builtin)(role))
        }
        .ok_or_else(|| {
            CliError::usage(format!("no provider is set for the {role} role")).hint(format!(
                "set [workflows.{workflow}.roles] {role} = \"PROVIDER\" in gavel.toml"
            ))
        })?;
        // The error already lists the valid forms ([`gavel_llm::SpecError`] always does), so
        // no hint repeats them.
        value
            .parse::<ProviderSpec>()
            .map_err(|e| CliError::usage(format!("the {role} role is invalid: {e}")))
    }
}

/// An amount of USD as micro-USD, or a usage error naming `what`.
fn usd(what: &str, v: f64) -> Result<u64, CliError> {
    gavel_llm::price::usd_to_micros(v).ok_or_else(|| {
        CliError::usage(format!(
            "{what} must be a non-negative amount of USD, not {v}"
        ))
    })
}

/// Where role providers come from, most specific first.
#[derive(Debug, Clone, Default)]
struct RoleTable {
    overrides: Vec<(String, String)>,
    per_workflow: BTreeMap<String, BTreeMap<String, String>>,
    global: BTreeMap<String, String>,
}

/// The workflows' sections, checked (table name → value).
#[derive(Debug, Clone, Default)]
struct Sections(BTreeMap<&'static str, std::sync::Arc<dyn SectionValue>>);

impl Sections {
    fn get(&self, table: &str) -> Option<&dyn SectionValue> {
        self.0.get(table).map(|v| v.as_ref())
    }
}

/// `gavel.toml`'s text read into the shared settings and each registered workflow section.
/// The sections' tables are taken out first, so the shared types refuse any other key they do
/// not know, and every error names its line.
fn parse(path: &Path, text: &str) -> Result<(ConfigFile, Sections), CliError> {
    let invalid = |e: toml::de::Error| self::invalid(path, text, &e);
    let doc = toml::de::DeTable::parse(text).map_err(invalid)?;
    let span = doc.span();
    let mut table = doc.into_inner();
    let mut raws = Vec::new();
    for s in crate::kinds::sections() {
        let key = table.keys().find(|k| k.get_ref() == s.table).cloned();
        raws.push((s, key.and_then(|k| table.remove(&k))));
    }
    // serde would refuse an unknown key too, but list only the shared keys as the known ones.
    let shared = reference::fields_of::<ConfigFile>();
    if let Some(key) = table
        .keys()
        .find(|k| !shared.contains(&k.get_ref().as_ref()))
    {
        let known: Vec<String> = shared
            .iter()
            .copied()
            .chain(raws.iter().map(|(s, _)| s.table))
            .map(|k| format!("`{k}`"))
            .collect();
        return Err(invalid_at(
            path,
            text,
            Some(key.span()),
            &format!(
                "unknown field `{}`, expected one of {}",
                key.get_ref(),
                known.join(", ")
            ),
        ));
    }
    let config = ConfigFile::deserialize(toml::de::Deserializer::from(toml::Spanned::new(
        span, table,
    )))
    .map_err(invalid)?;
    let input = SectionInput {
        path,
        text,
        relative: &relative,
    };
    let mut sections = Sections::default();
    for (s, raw) in raws {
        let value = (s.load)(raw, &input)?;
        sections.0.insert(s.table, std::sync::Arc::from(value));
    }
    Ok((config, sections))
}

/// The error for a `gavel.toml` that does not read: the line (and so the key) it is about,
/// and where the keys are described.
pub(crate) fn invalid(path: &Path, text: &str, e: &toml::de::Error) -> CliError {
    invalid_at(path, text, e.span(), e.message())
}

/// [`invalid`] for a `message` about the text at `span`.
fn invalid_at(
    path: &Path,
    text: &str,
    span: Option<std::ops::Range<usize>>,
    message: &str,
) -> CliError {
    let at = span
        .and_then(|span| {
            let line = text.get(..span.start)?.matches('\n').count();
            let shown = text.lines().nth(line)?.trim();
            Some(format!(" (line {}: `{shown}`)", line + 1))
        })
        .unwrap_or_default();
    CliError::error(format!(
        "{} is not valid{at}: {}",
        path.display(),
        message.trim()
    ))
    .hint("see the book's configuration chapter (docs/configuration.md, docs/reference/configuration.md)")
}

/// A repository-relative folder that stays inside the repository.
fn relative(key: &str, value: &str) -> Result<PathBuf, CliError> {
    let p = PathBuf::from(value);
    let escapes = p.is_absolute()
        || p.components().any(|c| matches!(c, Component::ParentDir))
        || value.trim().is_empty();
    if escapes {
        return Err(CliError::error(format!(
            "{key} = {value:?} must be a relative path inside the repository"
        )));
    }
    Ok(p)
}

/// The text `gavel init` writes.
pub fn default_config_text() -> String {
    let audit_log = gavel_diffgate::DEFAULT_AUDIT_LOG;
    format!(
        r#"# gavel configuration. See the book's configuration chapter (docs/configuration.md).

# Fail a call when another model answers than the one requested (default: warn).
strict_models = false

[roles]
# Provider strings: {VALID_FORMS}
drafter = "{DEFAULT_DRAFTER}"
reviewer = "{DEFAULT_REVIEWER}"

[limits]
# The most drafts one run writes before it halts.
max_iterations = {DEFAULT_MAX_ITERATIONS}
# budget_usd = 5.0          # default budget of a run (override with --budget)
# max_output_tokens = 8192  # output cap of every model call
# retries = 3               # retries of a transiently failed call
# retry_delay_ms = 2000     # first backoff (doubles, with jitter; retry-after wins)

[timeouts]
idle_secs = 120             # no output from a model call for this long: killed, retried
total_secs = 600            # longest a model call may take

[diff_gate]
approval_timeout_secs = 1800  # no `approve` within this long: the diff gate rejects
# Every decision of the diff gate, one JSON line each. Commit it: it is the team's audit trail.
audit_log = "{audit_log}"

[tracker]
kind = "local"              # or "github"
dir = "docs/issues"         # the local tracker's folder
# repo = "owner/name"       # github: default from the origin remote
# api_url = "https://ghe.example.com/api/v3"  # github: GitHub Enterprise Server

[paths]
lineage = "docs/lineage"
ideas = "ideas"

[storage]
# Every checkpoint and artifact survives a killed gavel (kill -9) either way. true also syncs
# each to disk, so an OS crash or power loss loses nothing either (about 10 ms more per run).
fsync = false
# Keep runs in a PostgreSQL database the team shares (GAVEL_DATABASE_URL wins over this; put
# the password there or in PGPASSWORD, never in this file):
# url = "postgres://gavel@db.example:5432/gavel"
# project = "github.com/octo/app"   # default: this clone's origin remote
# reconnect_secs = 30       # how long a call waits for a server that went away (a restart)
# team_budget_usd = 200.0   # what every run in the store may spend per calendar month (UTC)
"#
    )
}

#[cfg(test)]
mod tests;
