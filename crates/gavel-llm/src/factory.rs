//! Building the provider for a provider string, with the timeouts, key variables, CLI logins
//! and working folder from gavel's settings.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::cli::{CliProvider, CliSettings, Login};
use crate::credentials::RotationState;
use crate::http::{HttpProvider, HttpSettings};
use crate::provider::{Provider, UnavailableProvider};
use crate::scripted::ScriptedProvider;
use crate::spec::ProviderSpec;

/// What every provider is built with.
#[derive(Debug, Clone)]
pub struct ProviderSettings {
    /// No output (CLI) or no bytes (HTTP) for this long: the call fails, transiently.
    pub idle_timeout: Duration,
    /// The longest one call may take.
    pub total_timeout: Duration,
    /// Key variables by provider kind (`anthropic`, `google`, `openai`, `openai-compatible`),
    /// replacing the vendors' usual names; several rotate (see [`crate::credentials`]).
    pub key_env: BTreeMap<String, Vec<String>>,
    /// Logins by CLI kind (`claude`, `gemini`, `codex`), rotated the same way.
    pub logins: BTreeMap<String, Vec<Login>>,
    /// Where agent CLIs run.
    pub cli_workdir: Option<PathBuf>,
    /// More of gavel's variables the agent CLIs may see (`[implement] pass_env`).
    pub pass_env: Vec<String>,
    /// Which credential of each kind last answered, shared by every provider built with these
    /// settings.
    pub rotation: RotationState,
}

impl Default for ProviderSettings {
    fn default() -> Self {
        Self {
            idle_timeout: Duration::from_secs(120),
            total_timeout: Duration::from_secs(600),
            key_env: BTreeMap::new(),
            logins: BTreeMap::new(),
            cli_workdir: None,
            pass_env: Vec::new(),
            rotation: RotationState::default(),
        }
    }
}

/// The provider for `spec`. A relative script path is resolved against `base_dir`.
pub fn build_with(
    spec: &ProviderSpec,
    base_dir: &Path,
    settings: &ProviderSettings,
) -> Box<dyn Provider> {
    let cli = CliSettings {
        idle_timeout: settings.idle_timeout,
        total_timeout: settings.total_timeout,
        env: Vec::new(),
        env_remove: Vec::new(),
        pass_env: settings.pass_env.clone(),
        workdir: settings.cli_workdir.clone(),
        logins: settings
            .logins
            .get(spec.kind())
            .cloned()
            .unwrap_or_default(),
        rotation: settings.rotation.clone(),
    };
    match spec {
        ProviderSpec::Scripted { path } => {
            Box::new(ScriptedProvider::new(base_dir.join(path)).labelled(spec.to_string()))
        }
        ProviderSpec::Codex { model } => Box::new(CliProvider::codex(model.clone(), cli)),
        ProviderSpec::Claude { model } => Box::new(CliProvider::claude(model.clone(), cli)),
        ProviderSpec::Gemini { model } => Box::new(CliProvider::gemini(model.clone(), cli)),
        _ => {
            let http = HttpSettings {
                idle_timeout: settings.idle_timeout,
                total_timeout: settings.total_timeout,
                key_env: settings
                    .key_env
                    .get(spec.kind())
                    .cloned()
                    .unwrap_or_default(),
            };
            match HttpProvider::new(spec, http) {
                Some(p) => Box::new(p.with_rotation(settings.rotation.clone())),
                None => Box::new(UnavailableProvider::new(spec.clone())),
            }
        }
    }
}
