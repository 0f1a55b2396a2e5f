//! The `github` tracker: issues and labels through GitHub's REST API.
//!
//! Filing never files twice. Every body ends with a hidden marker holding the run's
//! idempotency key (`<!-- gavel-key: KEY -->`). Before creating an issue, and again before
//! any retry, gavel lists the repository's issues created by the token's user since the run
//! started (state all, every page) and returns the one carrying the marker. The search API is
//! not used for this: its index lags, so an issue created a second ago may not be found. A
//! kill -9 between GitHub's answer and the checkpoint therefore still leaves one issue: the
//! resumed filing step finds it. The issue creation itself is never retried blindly.
//!
//! Client choice: reqwest (blocking), already in the build through genai, with typed serde
//! reads of the few fields gavel uses. octocrab was the first candidate; its typed calls drop
//! the response headers that the rate-limit policy needs (`x-ratelimit-reset`,
//! `retry-after`), and its retry layer resends any request on a 5xx or a dropped connection,
//! an issue creation included, which is how duplicates are made. See ARCHITECTURE.md.

pub mod auth;
mod client;
pub mod remote;

use std::sync::Mutex;

use serde_json::{Value, json};

pub use self::auth::{NoToken, Token, TokenLookup, find_token};
pub use self::client::RetryPolicy;
use self::client::{ApiError, Client};
use super::{FiledIssue, NewIssue, TrackedIssue, Tracker, TrackerError, TrackerRef};

/// The colour of labels gavel creates (GitHub's light grey); change it on GitHub afterwards.
pub const DEFAULT_LABEL_COLOR: &str = "ededed";

/// Where the tracker files.
#[derive(Debug, Clone)]
pub struct GitHubConfig {
    /// The REST API base (`https://api.github.com`, `https://HOST/api/v3`).
    pub api_url: String,
    /// `owner/name`.
    pub repo: String,
    /// The web host issue URLs are on (`github.com`).
    pub web_host: String,
    pub policy: RetryPolicy,
}

/// Issues on GitHub.
pub struct GitHubTracker {
    config: GitHubConfig,
    /// The HTTP client, or why there is none (no token): reported by [`Tracker::check`] and
    /// by every call, never at construction, so a run can still be shown or aborted.
    client: Result<Client, String>,
    /// The token's user, once asked.
    login: Mutex<Option<Option<String>>>,
}

impl std::fmt::Debug for GitHubTracker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitHubTracker")
            .field("repo", &self.config.repo)
            .field("api_url", &self.config.api_url)
            .finish_non_exhaustive()
    }
}

impl GitHubTracker {
    pub fn new(config: GitHubConfig, token: Result<Token, NoToken>) -> Self {
        let client = token.map_err(|e| e.to_string()).and_then(|t| {
            Client::new(&config.api_url, t, config.policy).map_err(|e| e.to_string())
        });
        Self {
            config,
            client,
            login: Mutex::new(None),
        }
    }

    fn repo(&self) -> &str {
        &self.config.repo
    }

    /// Where it files.
    pub fn config(&self) -> &GitHubConfig {
        &self.config
    }

    fn client(&self) -> Result<&Client, TrackerError> {
        self.client.as_ref().map_err(|why| TrackerError::Rejected {
            tracker: self.describe(),
            message: why.clone(),
        })
    }

    /// The token's user (`GET /user`), asked once. `None` for a GitHub App installation token
    /// (GitHub Actions' `GITHUB_TOKEN`), which has no user: GitHub answers 403, and the issues
    /// are then looked through without the `creator` filter.
    fn login(&self) -> Result<Option<String>, TrackerError> {
        let mut cached = self.login.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(login) = cached.as_ref() {
            return Ok(login.clone());
        }
        let login = match self.client()?.get("/user") {
            Ok(reply) => Some(
                reply.body["login"]
                    .as_str()
                    .ok_or_else(|| self.unreadable("GET /user", "no login"))?
                    .to_owned(),
            ),
            Err(e) if is_app_token_refusal(&e) => None,
            Err(e) => return Err(self.error("asking GitHub who the token belongs to", &e)),
        };
        *cached = Some(login.clone());
        Ok(login)
    }

    fn unreadable(&self, what: &str, why: &str) -> TrackerError {
        TrackerError::Unreachable {
            tracker: self.describe(),
            message: format!("{what}: GitHub's answer could not be read ({why})"),
        }
    }

    /// A tracker error for a failed request, with what to do about it.
    fn error(&self, doing: &str, e: &ApiError) -> TrackerError {
        let tracker = self.describe();
        let repo = self.repo();
        let token = self
            .client
            .as_ref()
            .map_or_else(|_| "the token".to_owned(), |c| c.token().to_string());
        if e.is_transient() {
            let hint = match e {
                ApiError::Status { rate: Some(_), .. } => {
                    "; choose Retry once the limit has passed"
                }
                _ => "; Retry tries again",
            };
            return TrackerError::Unreachable {
                tracker,
                message: format!("{doing}: {e}{hint}"),
            };
        }
        let hint = match e.status() {
            Some(401) => format!(
                "GitHub refused {token}: it is wrong, expired or revoked; run `gh auth login` or set GH_TOKEN to a valid token"
            ),
            Some(403) => format!(
                "{token} may not do this in {repo}: it needs write access to the repository (classic token: the `repo` scope, `gh auth refresh -s repo`; fine-grained token: Issues read and write on {repo})"
            ),
            Some(404) => format!(
                "{repo} was not found at {}, or {token} cannot see it; check [tracker] repo (or the origin remote) and that the token has access to the repository",
                self.config.api_url
            ),
            Some(410) => format!(
                "issues are disabled in {repo}; turn on Issues in the repository's settings"
            ),
            Some(422) => "GitHub found the request invalid".into(),
            _ => String::new(),
        };
        let message = if hint.is_empty() {
            format!("{doing}: {e}")
        } else {
            format!("{doing}: {e}; {hint}")
        };
        TrackerError::Rejected { tracker, message }
    }

    /// The issue carrying `marker` among those the token's user created since `since`.
    fn find_marked(
        &self,
        marker: &str,
        since: Option<&str>,
    ) -> Result<Option<Value>, TrackerError> {
        let mut path = format!(
            "/repos/{}/issues?state=all&sort=created&direction=asc&per_page=100",
            self.repo()
        );
        if let Some(login) = self.login()? {
            path.push_str(&format!("&creator={}", encode(&login)));
        }
        if let Some(since) = since {
            path.push_str(&format!("&since={}", encode(since)));
        }
        let issues = self
            .client()?
            .get_all(&path)
            .map_err(|e| self.error("looking for an issue this run already filed", &e))?;
        Ok(issues.into_iter().find(|i| {
            i.get("pull_request").is_none_or(Value::is_null)
                && i["body"].as_str().is_some_and(|b| b.contains(marker))
        }))
    }

    fn filed(&self, issue: &Value, now: &str, found: bool) -> Result<FiledIssue, TrackerError> {
        let number = issue["number"]
            .as_u64()
            .ok_or_else(|| self.unreadable("the filed issue", "no number"))?;
        Ok(FiledIssue {
            number,
            url: issue["html_url"].as_str().unwrap_or_default().to_owned(),
            created_at: issue["created_at"].as_str().unwrap_or(now).to_owned(),
            paths: Vec::new(),
            found_existing: found,
        })
    }
}

/// GitHub's answer to `GET /user` with an installation token (a 403 that is not a rate limit).
fn is_app_token_refusal(e: &ApiError) -> bool {
    matches!(
        e,
        ApiError::Status {
            status: 403,
            rate: None,
            ..
        }
    )
}

/// The hidden marker that carries a run's key in an issue body.
pub fn marker(key: &str) -> String {
    format!("<!-- gavel-key: {key} -->")
}

/// A body without gavel's key marker (readers of the issue have no use for it).
fn strip_marker(body: &str) -> String {
    let kept: Vec<&str> = body
        .lines()
        .filter(|l| {
            let l = l.trim();
            !(l.starts_with("<!-- gavel-key: ") && l.ends_with("-->"))
        })
        .collect();
    kept.join("\n").trim_end().to_owned()
}

/// The earliest time an issue of a run can have been updated: the run's start, less a day for
/// a clock that differs from GitHub's. `None` when the start cannot be read (then every issue
/// of the user is looked at).
fn since(run_started_at: &str) -> Option<String> {
    let start: jiff::Timestamp = run_started_at.parse().ok()?;
    let earlier = start
        .checked_sub(jiff::SignedDuration::from_hours(24))
        .ok()?;
    Some(earlier.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
}

/// Percent-encodes a query value.
fn encode(value: &str) -> String {
    let mut out = String::new();
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

impl Tracker for GitHubTracker {
    fn describe(&self) -> String {
        if self.config.api_url.trim_end_matches('/') == "https://api.github.com" {
            format!("github ({})", self.config.repo)
        } else {
            format!("github ({} at {})", self.config.repo, self.config.api_url)
        }
    }

    fn reference(&self) -> TrackerRef {
        TrackerRef {
            kind: "github".into(),
            repo: Some(self.config.repo.clone()),
        }
    }

    fn check(&self) -> Result<(), TrackerError> {
        let client = self.client()?;
        let scopes = match client.get("/user") {
            Ok(user) => {
                if let Some(login) = user.body["login"].as_str() {
                    *self.login.lock().unwrap_or_else(|p| p.into_inner()) =
                        Some(Some(login.to_owned()));
                }
                client::header(&user.headers, "x-oauth-scopes")
            }
            // An installation token: no user, no scopes; the repository checks below decide.
            Err(e) if is_app_token_refusal(&e) => None,
            Err(e) => return Err(self.error("checking the GitHub token", &e)),
        };
        let repo = client
            .get(&format!("/repos/{}", self.repo()))
            .map_err(|e| self.error(&format!("looking up {}", self.repo()), &e))?
            .body;
        let rejected = |message: String| TrackerError::Rejected {
            tracker: self.describe(),
            message,
        };
        if repo["has_issues"] == Value::Bool(false) {
            return Err(rejected(format!(
                "issues are disabled in {}; turn on Issues in the repository's settings",
                self.repo()
            )));
        }
        if repo["archived"] == Value::Bool(true) {
            return Err(rejected(format!(
                "{} is archived (read-only); gavel cannot file issues in it",
                self.repo()
            )));
        }
        if let Some(scopes) = scopes {
            let has = |s: &str| scopes.split(',').any(|x| x.trim() == s);
            let private = repo["private"] != Value::Bool(false);
            if !has("repo") && (private || !has("public_repo")) {
                let shown = if scopes.trim().is_empty() {
                    "none"
                } else {
                    scopes.trim()
                };
                return Err(rejected(format!(
                    "{} is a classic token without the `repo` scope (it has: {shown}), so it cannot create issues in {}; run `gh auth refresh -s repo` or create a token with the `repo` scope",
                    client.token(),
                    self.repo()
                )));
            }
        }
        let p = &repo["permissions"];
        if p.is_object()
            && !["admin", "maintain", "push", "triage"]
                .iter()
                .any(|k| p[*k] == Value::Bool(true))
        {
            return Err(rejected(format!(
                "{} can read {} but not label issues in it (read access only); gavel needs triage or write access",
                client.token(),
                self.repo()
            )));
        }
        Ok(())
    }

    fn ensure_labels(&self, labels: &[String]) -> Result<Vec<String>, TrackerError> {
        if labels.is_empty() {
            return Ok(Vec::new());
        }
        let client = self.client()?;
        let existing = client
            .get_all(&format!("/repos/{}/labels?per_page=100", self.repo()))
            .map_err(|e| self.error("listing the labels", &e))?;
        let known: Vec<String> = existing
            .iter()
            .filter_map(|l| l["name"].as_str().map(str::to_lowercase))
            .collect();
        let mut created = Vec::new();
        for label in labels {
            if known.contains(&label.to_lowercase()) {
                continue;
            }
            let body = json!({"name": label, "color": DEFAULT_LABEL_COLOR, "description": "created by gavel"});
            match client.post(&format!("/repos/{}/labels", self.repo()), &body, true) {
                Ok(_) => created.push(label.clone()),
                // Someone (or this run's earlier attempt) created it in between.
                Err(ApiError::Status {
                    status: 422, codes, ..
                }) if codes.iter().any(|c| c == "already_exists") => {}
                Err(e) => return Err(self.error(&format!("creating the label `{label}`"), &e)),
            }
        }
        Ok(created)
    }

    fn create_issue(&self, issue: &NewIssue, now: &str) -> Result<FiledIssue, TrackerError> {
        issue.check(self.describe())?;
        let client = self.client()?;
        let marker = marker(&issue.idempotency_key);
        let since = since(&issue.run_started_at);
        let body = format!("{}\n\n{marker}\n", issue.body.trim_end());
        let request = json!({"title": issue.title, "body": body, "labels": issue.labels});
        let policy = self.config.policy;
        let mut attempt = 0u32;
        loop {
            if let Some(found) = self.find_marked(&marker, since.as_deref())? {
                return self.filed(&found, now, true);
            }
            let err = match client.post(&format!("/repos/{}/issues", self.repo()), &request, false)
            {
                Ok(reply) => return self.filed(&reply.body, now, false),
                Err(e) => e,
            };
            // GitHub may have created it without the answer arriving: look before retrying.
            if !(err.maybe_done() || err.is_transient()) || attempt >= policy.retries {
                return Err(self.error("filing the issue", &err));
            }
            tracing::info!(attempt, error = %err, "issue creation failed; looking for the issue before retrying");
            std::thread::sleep(policy.base_delay.saturating_mul(1 << attempt.min(16)));
            attempt += 1;
        }
    }

    fn get_issue(&self, reference: &str) -> Result<TrackedIssue, TrackerError> {
        let parsed = super::reference::parse(reference)?;
        if let Some(host) = &parsed.host
            && host != &self.config.web_host
        {
            return Err(TrackerError::BadReference {
                message: format!(
                    "`{reference}` is on {host}, but the tracker is {} (on {})",
                    self.describe(),
                    self.config.web_host
                ),
            });
        }
        let repo = parsed.repo.as_deref().unwrap_or(self.repo());
        let n = parsed.number;
        let not_found = |message: String| TrackerError::NotFound {
            tracker: self.describe(),
            message,
        };
        let issue = match self.client()?.get(&format!("/repos/{repo}/issues/{n}")) {
            Ok(reply) => reply.body,
            Err(e) if e.status() == Some(404) => {
                return Err(not_found(format!(
                    "there is no issue #{n} in {repo} (or the token cannot see it)"
                )));
            }
            Err(e) if e.status() == Some(410) => {
                return Err(not_found(format!("issues are disabled in {repo}")));
            }
            Err(e) => return Err(self.error(&format!("reading {repo}#{n}"), &e)),
        };
        if issue.get("pull_request").is_some_and(|p| !p.is_null()) {
            return Err(TrackerError::BadReference {
                message: format!("{repo}#{n} is a pull request, not an issue"),
            });
        }
        let labels = issue["labels"]
            .as_array()
            .map(|ls| {
                ls.iter()
                    .filter_map(|l| l["name"].as_str().or(l.as_str()).map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        Ok(TrackedIssue {
            number: issue["number"].as_u64().unwrap_or(n),
            title: issue["title"].as_str().unwrap_or_default().to_owned(),
            body: strip_marker(issue["body"].as_str().unwrap_or_default()),
            labels,
            state: issue["state"].as_str().unwrap_or("open").to_owned(),
            url: issue["html_url"].as_str().unwrap_or_default().to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_search_window_starts_a_day_before_the_run() {
        assert_eq!(
            since("2026-11-23T10:00:00Z").as_deref(),
            Some("2026-11-22T10:00:00Z")
        );
        assert_eq!(since("not a time"), None);
        assert_eq!(encode("a b&c/ü"), "a%20b%26c%2F%C3%BC");
        assert_eq!(marker("gavel-k1"), "<!-- gavel-key: gavel-k1 -->");
        assert_eq!(
            strip_marker("# T\n\nbody\n\n<!-- gavel-key: gavel-k1 -->\n"),
            "# T\n\nbody"
        );
    }
}
