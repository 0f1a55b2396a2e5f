//! `[changes]`: where spec-driven changes live, their roles, and how many rounds their loops
//! get. The roles default to the seed's choice (Gemini plans, Codex challenges and reviews,
//! Claude implements); `[changes.roles]` sets them for every change workflow. The change
//! kinds register it ([`SECTION`]).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use crate::error::CliError;
use crate::kinds::section::{Raw, SectionInput, SectionValue, SettingsSection};

/// `[changes]`'s registration: the three change kinds, `gavel mcp`, the report and the viewer
/// read it.
pub static SECTION: SettingsSection = SettingsSection {
    table: "changes",
    reference: include_str!("reference.toml"),
    fields: crate::settings::reference::fields_of::<ChangesConfig>,
    load,
};

fn load(raw: Option<Raw<'_>>, input: &SectionInput<'_>) -> Result<Box<dyn SectionValue>, CliError> {
    let config: ChangesConfig = input.parse(raw)?;
    Ok(Box::new(config.resolve(input.relative)?))
}

impl SectionValue for ChangeSettings {
    fn roles(&self) -> Option<&BTreeMap<String, String>> {
        Some(&self.roles)
    }
}

/// `[changes]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ChangesConfig {
    /// Where changes live, repository-relative (`openspec`, OpenSpec's own layout).
    root: Option<String>,
    /// Role → provider string for the change workflows.
    #[serde(default)]
    roles: BTreeMap<String, String>,
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
    /// `[changes.roles]`: role → provider string for every change workflow.
    pub roles: BTreeMap<String, String>,
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
    fn resolve(
        &self,
        relative: &dyn Fn(&str, &str) -> Result<PathBuf, CliError>,
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
            roles: self.roles.clone(),
        })
    }
}
