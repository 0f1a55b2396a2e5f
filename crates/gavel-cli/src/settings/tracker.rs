//! `[tracker]`: where approved issues are filed and read back from, checked when gavel.toml
//! is read, so a bad kind, repository or API URL stops every command before anything runs.

use std::path::{Path, PathBuf};
use std::time::Duration;

use gavel_tracker::github::RetryPolicy;
use serde::Deserialize;

use crate::error::CliError;

/// `[tracker]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TrackerConfig {
    kind: Option<String>,
    /// The local tracker's folder.
    dir: Option<String>,
    /// GitHub: `owner/name` (default: from the `origin` remote).
    repo: Option<String>,
    /// GitHub: the REST API base (GitHub Enterprise: `https://HOST/api/v3`).
    api_url: Option<String>,
    /// GitHub: the longest one request may take.
    timeout_secs: Option<u64>,
    /// GitHub: retries of a request that failed in a way that may pass.
    retries: Option<u32>,
    /// GitHub: the first backoff (doubles).
    retry_delay_ms: Option<u64>,
}

/// The trackers gavel has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrackerKind {
    Local,
    GitHub,
}

impl TrackerKind {
    pub const NAMES: &'static str = "\"local\", \"github\"";

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "local" => Some(Self::Local),
            "github" => Some(Self::GitHub),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Local => "local",
            Self::GitHub => "github",
        }
    }
}

/// `[tracker]`, checked.
#[derive(Debug, Clone)]
pub struct TrackerSettings {
    pub kind: TrackerKind,
    /// The local tracker's folder, repository-relative.
    pub dir: PathBuf,
    /// GitHub's `owner/name` when configured.
    pub repo: Option<String>,
    /// GitHub's API base when configured.
    pub api_url: Option<String>,
    pub policy: RetryPolicy,
}

impl TrackerConfig {
    /// Checks the section; `file` names gavel.toml in messages.
    pub(super) fn resolve(
        &self,
        file: &Path,
        relative: impl Fn(&str, &str) -> Result<PathBuf, CliError>,
    ) -> Result<TrackerSettings, CliError> {
        let bad = |what: String| CliError::error(format!("{}: {what}", file.display()));
        let kind = match self.kind.as_deref() {
            None => TrackerKind::Local,
            Some(k) => TrackerKind::parse(k).ok_or_else(|| {
                bad(format!(
                    "[tracker] kind {k:?} is not supported (valid: {})",
                    TrackerKind::NAMES
                ))
            })?,
        };
        if let Some(repo) = &self.repo {
            gavel_tracker::reference::check_repo(repo)
                .map_err(|e| bad(format!("[tracker] repo: {e}")))?;
        }
        if let Some(url) = &self.api_url
            && !(url.starts_with("https://") || url.starts_with("http://"))
        {
            return Err(bad(format!(
                "[tracker] api_url {url:?} must be an http(s) URL, like https://ghe.example.com/api/v3"
            )));
        }
        let defaults = RetryPolicy::default();
        let timeout = match self.timeout_secs {
            Some(0) => return Err(bad("[tracker] timeout_secs must be at least 1".into())),
            Some(s) => Duration::from_secs(s),
            None => defaults.timeout,
        };
        Ok(TrackerSettings {
            kind,
            dir: relative("tracker.dir", self.dir.as_deref().unwrap_or("docs/issues"))?,
            repo: self.repo.clone(),
            api_url: self.api_url.clone(),
            policy: RetryPolicy {
                retries: self.retries.unwrap_or(defaults.retries),
                base_delay: self
                    .retry_delay_ms
                    .map_or(defaults.base_delay, Duration::from_millis),
                max_wait: defaults.max_wait,
                timeout,
            },
        })
    }
}
