//! The tracker a run files to, built from `[tracker]` (and `--tracker`), or, for a resumed
//! run, from the tracker it started with.
//!
//! For GitHub this resolves the repository (`[tracker] repo`, else the `origin` remote), the
//! API URL (`[tracker] api_url`, else the one the remote's host serves) and the token
//! (`GH_TOKEN`, `GITHUB_TOKEN`, `gh auth token`). A missing token is not an error here: the
//! tracker reports it at pre-flight, with what to do.

use gavel_tracker::github::remote::{self, RemoteRepo};
use gavel_tracker::github::{GitHubConfig, GitHubTracker, TokenLookup, find_token};
use gavel_tracker::local::LocalTracker;
use gavel_tracker::{Tracker, TrackerRef};
use gavel_workflows::git::Git;

use crate::error::CliError;
use crate::settings::{Settings, TrackerKind};

/// The tracker for a run: `saved` (the run's own) wins over the settings.
pub fn build(
    settings: &Settings,
    saved: Option<&TrackerRef>,
) -> Result<Box<dyn Tracker>, CliError> {
    let kind = match saved {
        Some(r) => TrackerKind::parse(&r.kind).ok_or_else(|| {
            CliError::error(format!(
                "the run files to a `{}` tracker, which this gavel does not know",
                r.kind
            ))
            .hint("a newer gavel may know it; nothing was changed")
        })?,
        None => settings.tracker.kind,
    };
    Ok(match kind {
        TrackerKind::Local => Box::new(LocalTracker::new(
            &settings.repo_root,
            &settings.tracker.dir,
        )),
        TrackerKind::GitHub => {
            let config = github_config(settings, saved.and_then(|r| r.repo.as_deref()))?;
            let lookup = TokenLookup {
                env: &|name: &str| std::env::var(name).ok(),
                gh: gavel_llm::which::find_program("gh"),
                host: config.web_host.clone(),
            };
            let token = find_token(&lookup);
            Box::new(GitHubTracker::new(config, token))
        }
    })
}

/// The GitHub repository, API and web host for this clone.
fn github_config(settings: &Settings, saved_repo: Option<&str>) -> Result<GitHubConfig, CliError> {
    let t = &settings.tracker;
    let (repo, remote) = match saved_repo.map(str::to_owned).or_else(|| t.repo.clone()) {
        Some(repo) => (repo, origin(settings).ok()),
        None => {
            let origin = origin(settings)?;
            (origin.repo.clone(), Some(origin))
        }
    };
    let web_host = match (&t.api_url, &remote) {
        (_, Some(r)) => r.host.clone(),
        (Some(api), None) => remote::host_of_api(api),
        (None, None) => "github.com".into(),
    };
    let api_url = t
        .api_url
        .clone()
        .unwrap_or_else(|| remote::api_url_for(&web_host));
    Ok(GitHubConfig {
        api_url,
        repo,
        web_host,
        policy: t.policy,
    })
}

/// The `origin` remote's repository.
fn origin(settings: &Settings) -> Result<RemoteRepo, CliError> {
    let git = Git::at(&settings.repo_root);
    let url = git.origin_url().map_err(|_| {
            CliError::error("the GitHub tracker needs a repository, and this clone has no `origin` remote")
                .hint("set [tracker] repo = \"owner/name\" in gavel.toml, or add the remote: git remote add origin https://github.com/OWNER/NAME.git")
        })?;
    remote::parse_remote(&url)
        .map_err(|e| CliError::error(e).hint("set [tracker] repo = \"owner/name\" in gavel.toml"))
}
