//! `STATE.yaml`: the one field every change command decides by (the phase), plus the counters
//! and the last verdict the loops need, kept in the change's folder.
//!
//! The format, version 1 (every key but the first four is optional):
//!
//! ```yaml
//! format: 1
//! change_id: add-login
//! phase: implementing            # proposed | challenged | rejected | implementing | complete | archived
//! updated_at: 2026-03-07T10:00:00Z
//! planning_iterations: 2         # challenge rounds run so far
//! implementation_iterations: 1   # review rounds run so far
//! last_verdict: NEEDS_FIX        # APPROVED | NEEDS_REVISION | REJECTED | NEEDS_FIX | MAJOR_ISSUES
//! ```
//!
//! The phases are the seed's six (WF-R1). A person edits this file by hand (a rejected change
//! goes back to `proposed` that way), so loading is strict: bad YAML, an unknown phase, an
//! unknown key or a bad value is an error naming the file and the line, and so is a
//! `change_id` that is not the folder's name. The file is read as [`super::read`] reads (a
//! regular file, capped), so a FIFO or a device put there is refused, never waited on. Saving
//! is atomic and
//! durable regardless of the `[storage] fsync` setting: the temp file and the folder are
//! synced, because a phase that flips back after a crash re-runs a whole loop.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_saphyr::Spanned;

use super::read::{ReadError, read_text};
use super::{ChangeDir, check_id};

/// The version of the `STATE.yaml` format this code reads and writes.
pub const STATE_FORMAT: u32 = 1;

/// Where a change is in its life (seed WF-R1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// A proposal exists; not yet challenged, or it needs revision.
    Proposed,
    /// The challenge passed (or the iteration limit was hit with minor issues).
    Challenged,
    /// The challenge rejected the plan; a person has to step in.
    Rejected,
    /// Code is being written or reviewed.
    Implementing,
    /// The implementation was approved; ready to archive.
    Complete,
    /// Merged into the living specs and moved to the archive.
    Archived,
}

/// The `gavel change` command that moves a change on from a phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NextCommand {
    /// `gavel change plan`: challenge (and re-propose) the plan.
    Plan,
    /// `gavel change impl`: implement and review.
    Impl,
    /// `gavel change archive`: merge the specs and archive.
    Archive,
}

impl NextCommand {
    /// The subcommand's name, for "run `gavel change impl`" hints.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Plan => "plan",
            Self::Impl => "impl",
            Self::Archive => "archive",
        }
    }
}

impl Phase {
    /// The phase's name as written in `STATE.yaml`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Proposed => "proposed",
            Self::Challenged => "challenged",
            Self::Rejected => "rejected",
            Self::Implementing => "implementing",
            Self::Complete => "complete",
            Self::Archived => "archived",
        }
    }

    /// Which command fits this phase, for "wrong phase" messages; `None` when no command
    /// does: a rejected change needs a person (edit the proposal, set `phase: proposed`), an
    /// archived one is done.
    pub fn next_command(self) -> Option<NextCommand> {
        match self {
            Self::Proposed => Some(NextCommand::Plan),
            Self::Challenged | Self::Implementing => Some(NextCommand::Impl),
            Self::Complete => Some(NextCommand::Archive),
            Self::Rejected | Self::Archived => None,
        }
    }
}

/// A reviewer's verdict as `STATE.yaml` records it: shared with a change run's state (see
/// [`crate::verdict::ChangeVerdict`]), so it lives with the other verdicts.
pub use crate::verdict::ChangeVerdict as Verdict;

/// The contents of `STATE.yaml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeState {
    /// The change's id; must match its folder's name.
    pub change_id: String,
    /// The phase every command decides by.
    pub phase: Phase,
    /// When the file was last written.
    pub updated_at: jiff::Timestamp,
    /// Challenge rounds run so far.
    pub planning_iterations: u32,
    /// Review rounds run so far.
    pub implementation_iterations: u32,
    /// The most recent verdict, if any.
    pub last_verdict: Option<Verdict>,
}

impl ChangeState {
    /// A fresh change in `proposed`.
    pub fn new(change_id: &str, now: jiff::Timestamp) -> Self {
        Self {
            change_id: change_id.to_owned(),
            phase: Phase::Proposed,
            updated_at: now,
            planning_iterations: 0,
            implementation_iterations: 0,
            last_verdict: None,
        }
    }
}

/// Errors reading or writing `STATE.yaml`.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// The file could not be read (missing, not a regular file, too large, not UTF-8).
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        #[source]
        source: io::Error,
    },
    /// The file is not a valid `STATE.yaml` (bad YAML, unknown phase or key, bad value).
    #[error("{}:{}: {message}", path.display(), line.map_or_else(|| "?".to_owned(), |l| l.to_string()))]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The 1-based line of the problem, when known.
        line: Option<u64>,
        /// What is wrong.
        message: String,
    },
}

/// The on-disk shape, with locations for the values checked after parsing.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StateFile {
    format: Spanned<u32>,
    change_id: Spanned<String>,
    phase: Phase,
    updated_at: Spanned<String>,
    #[serde(default)]
    planning_iterations: u32,
    #[serde(default)]
    implementation_iterations: u32,
    #[serde(default)]
    last_verdict: Option<Verdict>,
}

#[derive(Serialize)]
struct StateOut<'a> {
    format: u32,
    change_id: &'a str,
    phase: Phase,
    updated_at: String,
    planning_iterations: u32,
    implementation_iterations: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_verdict: Option<Verdict>,
}

/// Parses `STATE.yaml` text; `path` is only used in errors.
pub fn parse_state(path: &Path, text: &str) -> Result<ChangeState, StateError> {
    parse_in_folder(path, text, None)
}

/// Parses `STATE.yaml` text of the change in the folder `folder` (when given): its
/// `change_id` must be the folder's name.
fn parse_in_folder(
    path: &Path,
    text: &str,
    folder: Option<&str>,
) -> Result<ChangeState, StateError> {
    let invalid = |line: Option<u64>, message: String| StateError::Invalid {
        path: path.to_owned(),
        line,
        message,
    };
    let file: StateFile = serde_saphyr::from_str(text).map_err(|e| {
        let line = e.location().map(|l| l.line()).filter(|&l| l > 0);
        invalid(line, e.to_string())
    })?;
    if file.format.value != STATE_FORMAT {
        return Err(invalid(
            Some(file.format.referenced.line()),
            format!(
                "unsupported format {} (this gavel reads {STATE_FORMAT})",
                file.format.value
            ),
        ));
    }
    check_id(&file.change_id.value)
        .map_err(|e| invalid(Some(file.change_id.referenced.line()), e.to_string()))?;
    if let Some(folder) = folder
        && file.change_id.value != folder
    {
        return Err(invalid(
            Some(file.change_id.referenced.line()),
            format!(
                "change_id `{}` is not the name of the change's folder `{folder}`",
                file.change_id.value
            ),
        ));
    }
    let updated_at = file
        .updated_at
        .value
        .parse::<jiff::Timestamp>()
        .map_err(|e| {
            invalid(
                Some(file.updated_at.referenced.line()),
                format!("updated_at is not an RFC 3339 timestamp: {e}"),
            )
        })?;
    Ok(ChangeState {
        change_id: file.change_id.value,
        phase: file.phase,
        updated_at,
        planning_iterations: file.planning_iterations,
        implementation_iterations: file.implementation_iterations,
        last_verdict: file.last_verdict,
    })
}

/// Renders the state as `STATE.yaml` text.
pub fn render_state(state: &ChangeState) -> String {
    let out = StateOut {
        format: STATE_FORMAT,
        change_id: &state.change_id,
        phase: state.phase,
        updated_at: state.updated_at.to_string(),
        planning_iterations: state.planning_iterations,
        implementation_iterations: state.implementation_iterations,
        last_verdict: state.last_verdict,
    };
    // Serializing plain strings, numbers and unit enums cannot fail; fall back to a
    // hand-written document rather than panic if it ever does.
    serde_saphyr::to_string(&out).unwrap_or_else(|_| {
        format!(
            "format: {STATE_FORMAT}\nchange_id: {}\nphase: {}\nupdated_at: {}\n",
            state.change_id,
            state.phase.as_str(),
            out.updated_at
        )
    })
}

/// Loads the `STATE.yaml` of the change `dir`, validating it (its `change_id` included).
pub fn load_state(dir: &ChangeDir) -> Result<ChangeState, StateError> {
    let path = dir.state();
    let text = read_text(&path)?;
    parse_in_folder(&path, &text, Some(dir.id()))
}

/// Writes `STATE.yaml` to `path` atomically and durably: a temp file in the same folder,
/// fsynced, renamed over the target, then the folder fsynced. The temp file never stays
/// behind, even when a step fails.
pub fn save_state(path: &Path, state: &ChangeState) -> Result<(), StateError> {
    write_durable(path, render_state(state).as_bytes()).map_err(|source| StateError::Io {
        path: path.to_owned(),
        source,
    })
}

fn write_durable(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = parent.join(format!(".{name}.gavel-tmp-{}", std::process::id()));
    let result = (|| {
        let mut file = File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
        return result;
    }
    // Persist the rename itself; not every filesystem can sync a folder, which is fine.
    if let Ok(dir) = File::open(parent) {
        let _ = dir.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests;
