//! `[implement]`: how `gavel implement` runs the project's tests and lint in the worktree,
//! how often a step may be retried, and how agent CLIs are confined. Checked when gavel.toml
//! is read; the implementation kinds register it ([`SECTION`]).

use std::path::Path;
use std::time::Duration;

use gavel_workflows::implement::RunnerKind;
use serde::Deserialize;

use crate::error::CliError;
use crate::kinds::section::{Raw, SectionInput, SectionValue, SettingsSection};

/// `[implement]`'s registration: `gavel implement` and `gavel change impl` read it.
pub static SECTION: SettingsSection = SettingsSection {
    table: "implement",
    reference: include_str!("reference.toml"),
    fields: crate::settings::reference::fields_of::<ImplementConfig>,
    load,
};

fn load(raw: Option<Raw<'_>>, input: &SectionInput<'_>) -> Result<Box<dyn SectionValue>, CliError> {
    let config: ImplementConfig = input.parse(raw)?;
    Ok(Box::new(config.resolve(input.path)?))
}

impl SectionValue for ImplementSettingsToml {}

/// `[implement]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ImplementConfig {
    /// The test command (shell words, run without a shell), e.g. `pytest -q`.
    test: Option<String>,
    /// The lint command; absent: the lint step is skipped (and recorded as skipped).
    lint: Option<String>,
    /// How the test command's exit is read: pytest, cargo, node, go, generic (default:
    /// detected from the command).
    runner: Option<String>,
    /// Test files, over the runner's conventions (gitignore-style globs).
    test_files: Option<Vec<String>>,
    /// The longest a test or lint run may take.
    timeout_secs: Option<u64>,
    /// Retries of the scaffold step and of the implementation step, each.
    retries: Option<u32>,
    /// `landlock` (default) or `none`.
    sandbox: Option<String>,
    /// More variables the tests, lint and agent CLIs may see, beyond the box's allowlist:
    /// names, or prefixes ending in `*` (gavel's own secrets are refused; a key, token or
    /// password variable reaches an agent CLI only, never a test).
    pass_env: Option<Vec<String>>,
    /// Whether tests and lint may use the network (default: no, only their own loopback).
    test_network: Option<bool>,
    /// How many finished runs' worktrees are kept for the next run to start from.
    spare_worktrees: Option<u32>,
}

/// The most spare worktrees `[implement] spare_worktrees` may keep.
const MAX_SPARES: u32 = 8;

/// How agent CLIs are confined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sandbox {
    /// Landlock: writes only in the worktree, a private temp folder and the CLI's state.
    Landlock,
    /// No confinement (set explicitly; an edit step otherwise refuses to start without one).
    None,
}

/// `[implement]`, checked.
#[derive(Debug, Clone)]
pub struct ImplementSettingsToml {
    pub test: Option<String>,
    pub lint: Option<String>,
    pub runner: Option<RunnerKind>,
    pub test_files: Option<Vec<String>>,
    pub timeout: Duration,
    pub retries: u32,
    pub sandbox: Sandbox,
    /// Checked `pass_env` patterns (empty: the allowlist alone).
    pub pass_env: Vec<String>,
    pub test_network: bool,
    pub spare_worktrees: usize,
}

impl ImplementConfig {
    fn resolve(&self, file: &Path) -> Result<ImplementSettingsToml, CliError> {
        let bad = |what: String| CliError::error(format!("{}: [implement] {what}", file.display()));
        let runner = match self.runner.as_deref() {
            None => None,
            Some(r) => Some(RunnerKind::parse(r).ok_or_else(|| {
                bad(format!(
                    "runner {r:?} is not one of \"pytest\", \"cargo\", \"node\", \"go\", \"generic\""
                ))
            })?),
        };
        let sandbox = match self.sandbox.as_deref() {
            None | Some("landlock") => Sandbox::Landlock,
            Some("none") => Sandbox::None,
            Some(other) => {
                return Err(bad(format!(
                    "sandbox {other:?} is not \"landlock\" or \"none\""
                )));
            }
        };
        for (key, cmd) in [("test", &self.test), ("lint", &self.lint)] {
            if let Some(c) = cmd
                && shell_words::split(c).map_or(true, |w| w.is_empty())
            {
                return Err(bad(format!("{key} {c:?} is not a command")));
            }
        }
        let pass_env = self.pass_env.clone().unwrap_or_default();
        for pattern in &pass_env {
            let name = pattern.strip_suffix('*').unwrap_or(pattern);
            let valid =
                !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
            if !valid {
                return Err(bad(format!(
                    "pass_env {pattern:?} is not a variable name (letters, digits and `_`, or a prefix ending in `*`)"
                )));
            }
            if let Some(why) = gavel_exec::sandbox_env::gavels_own(name) {
                return Err(bad(format!("pass_env {pattern:?} cannot be passed: {why}")));
            }
        }
        Ok(ImplementSettingsToml {
            test: self.test.clone(),
            lint: self.lint.clone(),
            runner,
            test_files: self.test_files.clone(),
            timeout: match self.timeout_secs {
                Some(0) => return Err(bad("timeout_secs must be at least 1".into())),
                Some(s) => Duration::from_secs(s),
                None => Duration::from_secs(300),
            },
            retries: self.retries.unwrap_or(3),
            sandbox,
            pass_env,
            test_network: self.test_network.unwrap_or(false),
            spare_worktrees: match self.spare_worktrees {
                None => 1,
                Some(n) if n <= MAX_SPARES => n as usize,
                Some(n) => {
                    return Err(bad(format!(
                        "spare_worktrees = {n} is more than {MAX_SPARES} (each is a whole checkout)"
                    )));
                }
            },
        })
    }
}
