//! `[changes]`: where spec-driven changes live, their roles, and how many rounds their loops
//! get. The roles default to the seed's choice (Gemini plans, Codex challenges and reviews,
//! Claude implements); `[changes.roles]` sets them for every change workflow.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use crate::error::CliError;

/// `[changes]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ChangesConfig {
    /// Where changes live, repository-relative (`openspec`, OpenSpec's own layout).
    root: Option<String>,
    /// Role → provider string for the change workflows.
    #[serde(default)]
    pub(super) roles: BTreeMap<String, String>,
    /// Challenge rounds of `gavel change plan` (default 3).
    planning_iterations: Option<u32>,
    /// Review rounds of `gavel change impl` (default 3).
    implementation_iterations: Option<u32>,
    /// Extra attempts of a model step whose answer was refused (default 2).
    retries: Option<u32>,
}

/// `[changes]`, resolved.
#[derive(Debug, Clone)]
pub struct ChangeSettings {
    /// Repository-relative.
    pub root: PathBuf,
    pub planning_iterations: u32,
    pub implementation_iterations: u32,
    pub retries: u32,
}

/// The seed's default provider for a change workflow's `role`.
pub fn default_role(role: &str) -> Option<&'static str> {
    match role {
        "planner" => Some("gemini:2.5-pro"),
        "challenger" | "reviewer" => Some("codex:gpt-5-codex"),
        "implementer" => Some("claude:sonnet"),
        _ => None,
    }
}

impl ChangesConfig {
    pub(super) fn resolve(
        &self,
        relative: impl Fn(&str, &str) -> Result<PathBuf, CliError>,
    ) -> Result<ChangeSettings, CliError> {
        let root = relative(
            "changes.root",
            self.root
                .as_deref()
                .unwrap_or(gavel_workflows::change::DEFAULT_ROOT),
        )?;
        let at_least_one = |key: &str, v: Option<u32>, default: u32| {
            let n = v.unwrap_or(default);
            if n == 0 {
                Err(CliError::usage(format!(
                    "[changes] {key} must be at least 1"
                )))
            } else {
                Ok(n)
            }
        };
        Ok(ChangeSettings {
            root,
            planning_iterations: at_least_one(
                "planning_iterations",
                self.planning_iterations,
                gavel_workflows::change::plan::DEFAULT_PLANNING_ITERATIONS,
            )?,
            implementation_iterations: at_least_one(
                "implementation_iterations",
                self.implementation_iterations,
                3,
            )?,
            retries: self.retries.unwrap_or(2),
        })
    }
}
