//! The fake of GitHub's REST API: tokens, repositories, labels, issues and pull requests held
//! in memory, and the [`GitHub`] handle tests use to set them up and to look at what clients
//! did.
//!
//! gavel files issues on GitHub (or GitHub Enterprise, under `/api/v3`), so its tests need a
//! GitHub that answers like the real one, fails like the real one (rate limits, 5xx, a reply
//! lost after the work was done, a slow reply) and lets a test check what was really created.
//! The state lives next to the vendor fakes' state, behind the same lock; `routes` answers
//! the requests (`issues` the issue endpoints), `pages` paginates them, `wire` renders
//! GitHub's JSON and `faults` decides which requests fail.

mod faults;
mod issues;
mod pages;
pub(crate) mod routes;
mod wire;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_faults;
#[cfg(test)]
mod tests_issues;

use std::collections::HashMap;

use crate::server::Shared;

pub use faults::{Fault, FaultKind};

/// What the users of a repository may do there, as GitHub's repository roles (each includes the
/// ones before it: `Read` is GitHub's "pull", `Write` its "push").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Permission {
    None,
    Read,
    Triage,
    Write,
    Maintain,
    Admin,
}

impl Permission {
    /// Parses GitHub's names (`read`/`pull`, `triage`, `write`/`push`, `maintain`, `admin`,
    /// `none`).
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name.to_ascii_lowercase().as_str() {
            "none" => Self::None,
            "read" | "pull" => Self::Read,
            "triage" => Self::Triage,
            "write" | "push" => Self::Write,
            "maintain" => Self::Maintain,
            "admin" => Self::Admin,
            _ => return None,
        })
    }
}

/// A repository to serve. The permission applies to every token's user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeRepo {
    /// `owner/name`
    pub full_name: String,
    pub private: bool,
    pub has_issues: bool,
    pub archived: bool,
    pub permission: Permission,
}

impl FakeRepo {
    /// A public repository with issues, not archived, where users are admins.
    pub fn new(full_name: &str) -> Self {
        Self {
            full_name: full_name.to_owned(),
            private: false,
            has_issues: true,
            archived: false,
            permission: Permission::Admin,
        }
    }
}

/// A label as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeLabel {
    pub name: String,
    /// Six hex digits, no `#`.
    pub color: String,
    pub description: Option<String>,
}

/// An issue or pull request as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeIssue {
    pub number: u64,
    pub title: String,
    /// Empty when the issue has none.
    pub body: String,
    /// Label names.
    pub labels: Vec<String>,
    pub assignees: Vec<String>,
    /// `open` or `closed`.
    pub state: String,
    /// The author's login.
    pub user: String,
    /// `YYYY-MM-DDTHH:MM:SSZ`
    pub created_at: String,
    pub updated_at: String,
    pub is_pull: bool,
}

/// A token's owner and, for a classic token, its scopes.
#[derive(Debug, Clone)]
pub(crate) struct Token {
    pub login: String,
    /// `Some("repo, read:org")` for a classic token, `None` for a fine-grained one.
    pub scopes: Option<String>,
}

impl Token {
    /// Whether a classic token has scope `name` (fine-grained tokens have no scopes to check).
    pub fn has_scope(&self, name: &str) -> bool {
        self.scopes
            .as_deref()
            .is_some_and(|s| s.split(',').any(|scope| scope.trim() == name))
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Label {
    pub id: u64,
    pub name: String,
    pub color: String,
    pub description: Option<String>,
}

#[derive(Debug, Clone)]
pub(crate) struct Issue {
    pub id: u64,
    pub number: u64,
    pub title: String,
    pub body: Option<String>,
    pub labels: Vec<String>,
    pub assignees: Vec<String>,
    pub open: bool,
    pub user: String,
    /// Unix seconds.
    pub created_at: i64,
    pub updated_at: i64,
    pub closed_at: Option<i64>,
    pub is_pull: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct Repo {
    pub id: u64,
    pub config: FakeRepo,
    pub labels: Vec<Label>,
    pub issues: Vec<Issue>,
    pub created_at: i64,
}

impl Repo {
    pub fn owner(&self) -> &str {
        self.config
            .full_name
            .split_once('/')
            .map_or(self.config.full_name.as_str(), |(o, _)| o)
    }

    pub fn name(&self) -> &str {
        self.config
            .full_name
            .split_once('/')
            .map_or(self.config.full_name.as_str(), |(_, n)| n)
    }

    pub fn label(&self, name: &str) -> Option<&Label> {
        self.labels
            .iter()
            .find(|l| l.name.eq_ignore_ascii_case(name))
    }

    pub fn issue_mut(&mut self, number: u64) -> Option<&mut Issue> {
        self.issues.iter_mut().find(|i| i.number == number)
    }
}

/// The fake GitHub's data, under the server's lock. Not `Debug`: it holds the tokens.
#[derive(Default)]
pub(crate) struct State {
    pub tokens: HashMap<String, Token>,
    /// Login to user id.
    pub users: HashMap<String, u64>,
    pub repos: Vec<Repo>,
    pub faults: Vec<Fault>,
    /// Requests counted against each token's rate limit (key `""`: unauthenticated).
    pub used: HashMap<String, u64>,
    /// The end of the current rate-limit window (unix seconds; 0 until the first request).
    pub reset: i64,
    last_id: u64,
    /// Numbers the `x-github-request-id` of each answer.
    pub requests: u64,
}

impl State {
    pub fn next_id(&mut self) -> u64 {
        self.last_id += 1;
        self.last_id
    }

    /// The id of user `login`, given one on first sight.
    pub fn user_id(&mut self, login: &str) -> u64 {
        if let Some(id) = self.users.get(login) {
            return *id;
        }
        let id = self.next_id();
        self.users.insert(login.to_owned(), id);
        id
    }

    /// The repository `owner/name` (GitHub compares them without case).
    pub fn repo_mut(&mut self, full_name: &str) -> Option<&mut Repo> {
        self.repos
            .iter_mut()
            .find(|r| r.config.full_name.eq_ignore_ascii_case(full_name))
    }

    /// Adds a label unless one of that name exists; returns its name as stored.
    pub fn add_label(
        &mut self,
        repo: &str,
        name: &str,
        color: &str,
        description: Option<String>,
    ) -> Option<String> {
        let id = self.next_id();
        let repo = self.repo_mut(repo)?;
        if let Some(existing) = repo.label(name) {
            return Some(existing.name.clone());
        }
        repo.labels.push(Label {
            id,
            name: name.to_owned(),
            color: color.to_owned(),
            description,
        });
        Some(name.to_owned())
    }

    /// Files an issue (or a pull request) under the repository's next number.
    pub fn file(&mut self, repo: &str, mut issue: Issue) -> Option<u64> {
        issue.id = self.next_id();
        self.user_id(&issue.user);
        let repo = self.repo_mut(repo)?;
        issue.number = repo.issues.iter().map(|i| i.number).max().unwrap_or(0) + 1;
        let number = issue.number;
        repo.issues.push(issue);
        Some(number)
    }
}

/// Unix seconds now.
pub(crate) fn now() -> i64 {
    jiff::Timestamp::now().as_second()
}

/// A handle on the fake GitHub of a [`crate::FakeServer`], from [`crate::FakeServer::github`].
pub struct GitHub<'a> {
    shared: &'a Shared,
}

impl<'a> GitHub<'a> {
    pub(crate) fn new(shared: &'a Shared) -> Self {
        Self { shared }
    }

    fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        f(&mut self.shared.lock().github)
    }

    /// Accepts `token` as user `login`'s. `scopes` (`Some("repo, read:org")`) makes it a classic
    /// token, whose scopes every answer names in `x-oauth-scopes` and which cannot write without
    /// `repo` (or `public_repo`, on a public repository); `None` makes it a fine-grained token.
    pub fn add_token(&self, token: &str, login: &str, scopes: Option<&str>) {
        self.with(|st| {
            st.user_id(login);
            st.tokens.insert(
                token.to_owned(),
                Token {
                    login: login.to_owned(),
                    scopes: scopes.map(str::to_owned),
                },
            );
        });
    }

    /// Serves `repo` (replacing one of the same name).
    pub fn add_repo(&self, repo: FakeRepo) {
        self.with(|st| {
            let id = st.next_id();
            if let Some((owner, _)) = repo.full_name.split_once('/') {
                st.user_id(owner);
            }
            st.repos
                .retain(|r| !r.config.full_name.eq_ignore_ascii_case(&repo.full_name));
            st.repos.push(Repo {
                id,
                config: repo,
                labels: Vec::new(),
                issues: Vec::new(),
                created_at: now(),
            });
        });
    }

    /// Adds label `name` (color `ededed`, GitHub's for labels made on the fly) to `repo`.
    /// Nothing happens for an unknown repository or an existing label.
    pub fn add_label(&self, repo: &str, name: &str) {
        self.with(|st| st.add_label(repo, name, "ededed", None));
    }

    /// The labels of `repo`, in the order they were made.
    pub fn labels(&self, repo: &str) -> Vec<FakeLabel> {
        self.with(|st| {
            st.repo_mut(repo)
                .map(|r| {
                    r.labels
                        .iter()
                        .map(|l| FakeLabel {
                            name: l.name.clone(),
                            color: l.color.clone(),
                            description: l.description.clone(),
                        })
                        .collect()
                })
                .unwrap_or_default()
        })
    }

    fn file(&self, repo: &str, login: &str, title: &str, body: &str, is_pull: bool) -> u64 {
        let t = now();
        let issue = Issue {
            id: 0,
            number: 0,
            title: title.to_owned(),
            body: Some(body.to_owned()).filter(|b| !b.is_empty()),
            labels: Vec::new(),
            assignees: Vec::new(),
            open: true,
            user: login.to_owned(),
            created_at: t,
            updated_at: t,
            closed_at: None,
            is_pull,
        };
        self.with(|st| st.file(repo, issue)).unwrap_or(0)
    }

    /// Files an open issue by `login`; returns its number (0 for an unknown repository).
    pub fn add_issue(&self, repo: &str, login: &str, title: &str, body: &str) -> u64 {
        self.file(repo, login, title, body, false)
    }

    /// Opens a pull request by `login` (numbered with the issues, as on GitHub); returns its
    /// number (0 for an unknown repository).
    pub fn add_pull(&self, repo: &str, login: &str, title: &str) -> u64 {
        self.file(repo, login, title, "", true)
    }

    /// Closes issue or pull request `number` (as completed).
    pub fn close(&self, repo: &str, number: u64) {
        self.with(|st| {
            if let Some(issue) = st.repo_mut(repo).and_then(|r| r.issue_mut(number)) {
                let t = now();
                issue.open = false;
                issue.closed_at = Some(t);
                issue.updated_at = t;
            }
        });
    }

    /// Moves issue `number`'s times (created, updated, closed) `secs` seconds into the past, so
    /// `since` and the sort orders can be tried without waiting.
    pub fn backdate(&self, repo: &str, number: u64, secs: i64) {
        self.with(|st| {
            if let Some(issue) = st.repo_mut(repo).and_then(|r| r.issue_mut(number)) {
                issue.created_at -= secs;
                issue.updated_at -= secs;
                issue.closed_at = issue.closed_at.map(|t| t - secs);
            }
        });
    }

    /// The issues and pull requests of `repo`, by number.
    pub fn issues(&self, repo: &str) -> Vec<FakeIssue> {
        self.with(|st| {
            let Some(r) = st.repo_mut(repo) else {
                return Vec::new();
            };
            let mut out: Vec<FakeIssue> = r
                .issues
                .iter()
                .map(|i| FakeIssue {
                    number: i.number,
                    title: i.title.clone(),
                    body: i.body.clone().unwrap_or_default(),
                    labels: i.labels.clone(),
                    assignees: i.assignees.clone(),
                    state: if i.open { "open" } else { "closed" }.to_owned(),
                    user: i.user.clone(),
                    created_at: wire::time(i.created_at),
                    updated_at: wire::time(i.updated_at),
                    is_pull: i.is_pull,
                })
                .collect();
            out.sort_by_key(|i| i.number);
            out
        })
    }

    /// Makes requests fail (see [`Fault`]); faults are tried in the order added.
    pub fn fault(&self, fault: Fault) {
        self.with(|st| st.faults.push(fault));
    }
}
