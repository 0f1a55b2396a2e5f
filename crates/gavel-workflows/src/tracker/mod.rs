//! Issue trackers behind one trait.
//!
//! Only gavel files issues, never a model. A tracker creates labels and issues; every creation
//! carries an idempotency key (one per run), and a tracker must return the existing issue when
//! it sees a key again, so a crash between filing and journaling can never file twice. This
//! issue ships the [`local::LocalTracker`] (Markdown files in the repository); GitHub comes later.

pub mod local;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

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
}

/// Why a tracker call failed.
#[derive(Debug, thiserror::Error)]
pub enum TrackerError {
    #[error("tracker {tracker} is not reachable: {message}")]
    Unreachable { tracker: String, message: String },
    #[error("{tracker} refused the request: {message}")]
    Rejected { tracker: String, message: String },
}

/// An issue tracker.
pub trait Tracker: Send + Sync {
    /// A short name for messages (`local (docs/issues)`).
    fn describe(&self) -> String;
    /// Checks that the tracker can be used, before any model call.
    fn check(&self) -> Result<(), TrackerError>;
    /// Creates the labels that do not exist yet; returns the ones it created.
    fn ensure_labels(&self, labels: &[String]) -> Result<Vec<String>, TrackerError>;
    /// Files an issue (or returns the one already filed with the same key).
    fn create_issue(&self, issue: &NewIssue, now: &str) -> Result<FiledIssue, TrackerError>;
}
