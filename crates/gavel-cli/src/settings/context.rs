//! `[context]`: what `--context` files may be given to a model (the token budget and extra
//! deny patterns), checked when gavel.toml is read.

use std::path::Path;

use gavel_context::ContextSettings;
use serde::Deserialize;

use crate::error::CliError;

/// `[context]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ContextConfig {
    /// The most tokens (o200k) all context files together may have.
    max_tokens: Option<u64>,
    /// `.gitignore`-style patterns of files never to send, over the built-in secret names.
    #[serde(default)]
    deny: Vec<String>,
}

impl ContextConfig {
    pub(super) fn resolve(&self, file: &Path) -> Result<ContextSettings, CliError> {
        let defaults = ContextSettings::default();
        let max_tokens = match self.max_tokens {
            Some(0) => {
                return Err(CliError::error(format!(
                    "{}: [context] max_tokens must be at least 1",
                    file.display()
                )));
            }
            Some(n) => n,
            None => defaults.max_tokens,
        };
        Ok(ContextSettings {
            max_tokens,
            deny: self.deny.clone(),
            ..defaults
        })
    }
}
