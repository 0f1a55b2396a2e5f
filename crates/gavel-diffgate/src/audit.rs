//! The gate's audit trail (LLD #171 requirement 7): every decision, with its time and the
//! flagged files, appended as one JSON line to a log file that survives the process (by
//! default [`DEFAULT_AUDIT_LOG`](crate::DEFAULT_AUDIT_LOG), a file a team commits), and handed
//! back to the caller so a workflow can keep a copy in its lineage (see the crate docs).

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::DiffGateError;

/// What the gate decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Decision {
    /// A person typed the approval.
    Approved,
    /// A person rejected the changes, or did not answer in time (`reason` says which).
    Rejected,
    /// Review was required but nobody could be asked (no terminal): the gate failed fast.
    AbortedNonInteractive,
}

/// One audit record: `{"timestamp":..., "decision":"APPROVED", "flagged_files":[...],
/// "files_changed":3, "repo":"...", "reason":..., "bypass_attempted":true,
/// "bypass_attempts":["--yes","GAVEL_AUTO_APPROVE"]}` (`reason` only when set,
/// `bypass_attempts` only when not empty). Fields are only ever added, with defaults, so older
/// lines still parse.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditEvent {
    /// When the decision was made, RFC 3339 (the caller's clock).
    pub timestamp: String,
    pub decision: Decision,
    /// The flagged paths (`old -> new` for renames), in report order.
    pub flagged_files: Vec<String>,
    /// How many files were staged.
    pub files_changed: usize,
    /// The repository the gate looked at.
    pub repo: String,
    /// Why, when the decision alone does not say (e.g. "timed out after 30 minutes").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Someone tried to skip or pre-answer the gate (a `--yes`-style flag, a `GAVEL_*`
    /// variable; see [`bypass_variables`](crate::bypass_variables)). The decision is still only
    /// a person's. Always written (`false` in lines from before the field existed); written as
    /// `true` whenever `bypass_attempts` is not empty.
    #[serde(default)]
    pub bypass_attempted: bool,
    /// What was tried: flag names (`--yes`) and variable names (`GAVEL_AUTO_APPROVE`), never a
    /// variable's value.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bypass_attempts: Vec<String>,
    /// Which diff was decided: the tree the staged changes make (`git write-tree`), so a team
    /// can tell that what was approved is what was committed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<String>,
    /// Who decided: git's `user.name <user.email>` in the repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
}

/// The staged tree of `repo` and who its git says the person is: the `tree` and `by` of an
/// [`AuditEvent`]. Either is `None` when git cannot say (no identity configured).
pub fn decided_by(repo: &gavel_exec::git::Git) -> (Option<String>, Option<String>) {
    let text = |args: &[&str]| {
        crate::git::output(repo, args)
            .ok()
            .map(|b| String::from_utf8_lossy(&b).trim().to_owned())
            .filter(|s| !s.is_empty())
    };
    let tree = text(&["write-tree"]);
    let by = match (
        text(&["config", "user.name"]),
        text(&["config", "user.email"]),
    ) {
        (Some(name), Some(email)) => Some(format!("{name} <{email}>")),
        (Some(name), None) => Some(name),
        (None, Some(email)) => Some(format!("<{email}>")),
        (None, None) => None,
    };
    (tree, by)
}

/// Appends `event` to the JSON-lines file at `path`, creating the file and its parent
/// directories, and returns the exact line written (the JSON object and its `\n`). The line goes
/// out in one `write` on a file opened with `O_APPEND`, so concurrent gates never interleave
/// their lines, and is flushed to disk before this returns: an approval is not recorded until
/// it is durable.
///
/// A workflow that runs the gate writes the returned line, byte for byte, into its lineage
/// folder (the crate docs' "audit record" contract); nothing is returned unless the team's log
/// has the line, so the copy never claims a decision the log lacks.
pub fn append_audit(path: &Path, event: &AuditEvent) -> Result<String, DiffGateError> {
    let mut line = if event.bypass_attempts.is_empty() || event.bypass_attempted {
        serde_json::to_string(event)
    } else {
        // A named attempt is an attempt, whatever the caller set.
        serde_json::to_string(&AuditEvent {
            bypass_attempted: true,
            ..event.clone()
        })
    }
    .map_err(DiffGateError::EncodeAudit)?;
    line.push('\n');
    let failed = |source| DiffGateError::WriteAudit {
        path: path.to_path_buf(),
        source,
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(failed)?;
    }
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(failed)?;
    file.write_all(line.as_bytes()).map_err(failed)?;
    file.flush().map_err(failed)?;
    file.sync_data().map_err(failed)?;
    Ok(line)
}
