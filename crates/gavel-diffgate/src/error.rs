//! The one error type of the diff gate, with a variant per failing step so the CLI can tell a
//! missing `git` from a broken repository from an unwritable audit log.

use std::path::PathBuf;

/// Why analysing, reporting or auditing the staged changes failed. Every failure means the gate
/// fails closed: nothing may be committed.
#[derive(Debug, thiserror::Error)]
pub enum DiffGateError {
    /// `git` could not be started at all (not installed, or `repo` does not exist).
    #[error("could not run `{command}` in {repo}")]
    SpawnGit {
        command: String,
        repo: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Talking to a running `git` failed (its output could not be read or its input written).
    #[error("lost the connection to `{command}`")]
    GitIo {
        command: String,
        #[source]
        source: std::io::Error,
    },
    /// `repo` is not inside a git repository or worktree.
    #[error("{repo} is not inside a git repository")]
    NotARepository { repo: PathBuf },
    /// `git` ran and reported failure.
    #[error("`{command}` failed ({status}): {stderr}")]
    GitFailed {
        command: String,
        status: String,
        stderr: String,
    },
    /// `git` printed something this crate does not understand.
    #[error("unexpected output from `{command}`: {detail}")]
    UnexpectedOutput { command: String, detail: String },
    /// A blob the diff refers to is not in the object database.
    #[error("the original of {path} (object {oid}) is missing from the repository")]
    MissingObject { path: String, oid: String },
    /// The index has unresolved merge conflicts.
    #[error("{path} has unresolved merge conflicts; resolve them and stage the result first")]
    Unmerged { path: String },
    /// The audit log could not be written.
    #[error("could not append to the audit log {path}")]
    WriteAudit {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The audit event could not be encoded as JSON.
    #[error("could not encode the audit event")]
    EncodeAudit(#[source] serde_json::Error),
}
