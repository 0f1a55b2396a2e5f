//! Issue trackers behind one trait.
//!
//! Only gavel files issues, never a model. A tracker creates labels and issues; every creation
//! carries an idempotency key (one per run), and a tracker must return the existing issue when
//! it sees a key again, so a crash between filing and journaling can never file twice. Later
//! workflows read an issue back ([`Tracker::get_issue`]) by any [`reference`] form.
//!
//! Two trackers: [`local::LocalTracker`] (Markdown files in the repository) and
//! [`github::GitHubTracker`] (GitHub's REST API). Nothing GitHub-specific leaves the `github`
//! module: callers see this trait, [`TrackerError`] and [`TrackedIssue`].

pub mod github;
pub mod local;
pub mod reference;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use reference::IssueRef;

/// An issue to file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewIssue {
    pub title: String,
    pub body: String,
    pub labels: Vec<String>,
    /// Unique per run; a second create with the same key returns the first issue.
    pub idempotency_key: String,
    /// The slug of the run, for file names.
    pub slug: String,
    /// When the run started (RFC 3339): an issue carrying the key cannot be older, so a
    /// tracker that has to search for it need not look further back.
    pub run_started_at: String,
}

impl NewIssue {
    /// Refuses what no tracker can file (an empty title), naming `tracker`.
    pub fn check(&self, tracker: String) -> Result<(), TrackerError> {
        if self.title.trim().is_empty() {
            return Err(TrackerError::Rejected {
                tracker,
                message: "the issue has no title".into(),
            });
        }
        Ok(())
    }
}

/// A filed issue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FiledIssue {
    pub number: u64,
    pub url: String,
    pub created_at: String,
    /// Repository-relative files the tracker wrote that belong in the run's commit.
    #[serde(default)]
    pub paths: Vec<PathBuf>,
    /// The issue was already there with this run's key (an earlier attempt filed it and its
    /// answer was lost, or the run was killed before it was recorded): found, not filed again.
    #[serde(default)]
    pub found_existing: bool,
}

/// An issue as read back from a tracker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrackedIssue {
    pub number: u64,
    pub title: String,
    pub body: String,
    pub labels: Vec<String>,
    /// `open` or `closed`.
    pub state: String,
    pub url: String,
}

impl TrackedIssue {
    /// Whether the issue is closed.
    pub fn is_closed(&self) -> bool {
        self.state.eq_ignore_ascii_case("closed")
    }
}

/// Which tracker a run files to, saved in the run so that a resumed run files where it
/// started whatever `gavel.toml` or the remote say by then.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrackerRef {
    /// `local` or `github`.
    pub kind: String,
    /// The repository (`owner/name`) for GitHub; `None` for the local tracker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
}

/// Why a tracker call failed. Every message names what was tried and, where there is one,
/// what to do; none ever contains a credential.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrackerError {
    /// The tracker could not be reached or did not answer usefully (network, server errors,
    /// rate limits): trying again later may work.
    #[error("tracker {tracker} is not reachable: {message}")]
    Unreachable { tracker: String, message: String },
    /// The tracker answered and refused (credentials, permissions, invalid input).
    #[error("{tracker} refused the request: {message}")]
    Rejected { tracker: String, message: String },
    /// The issue asked for does not exist, or is not an issue.
    #[error("{tracker}: {message}")]
    NotFound { tracker: String, message: String },
    /// An issue reference that no tracker form matches, or that this tracker cannot use.
    #[error("{message}")]
    BadReference { message: String },
}

/// An issue tracker.
pub trait Tracker: Send + Sync {
    /// A short name for messages (`local (docs/issues)`, `github (octo/app)`).
    fn describe(&self) -> String;
    /// What a resumed run needs to find this tracker again.
    fn reference(&self) -> TrackerRef;
    /// Checks that the tracker can be used, before any model call.
    fn check(&self) -> Result<(), TrackerError>;
    /// Creates the labels that do not exist yet; returns the ones it created.
    fn ensure_labels(&self, labels: &[String]) -> Result<Vec<String>, TrackerError>;
    /// Files an issue (or returns the one already filed with the same key).
    fn create_issue(&self, issue: &NewIssue, now: &str) -> Result<FiledIssue, TrackerError>;
    /// Reads an issue back: `12`, `#12`, `owner/name#12` or an issue URL (see [`reference`]).
    fn get_issue(&self, reference: &str) -> Result<TrackedIssue, TrackerError>;
}
