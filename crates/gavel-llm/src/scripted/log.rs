//! The scripted provider's call log (`<script>.calls.jsonl`) and recorded prompts: how the
//! tests prove that a resumed run never repeated a finished call.

use std::ffi::OsString;
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::provider::Role;

/// What happened to a call, as recorded in the call log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum CallEvent {
    /// The call began (written before any scripted delay).
    Start,
    /// The call returned an answer.
    Finish,
    /// The call returned a scripted failure.
    Fail,
}

/// One line of the call log: `{"role":"drafter","seq":0,"event":"start","pid":123}`.
///
/// A `Start` with no later `Finish` or `Fail` for the same `(role, seq)` is a call that was
/// cancelled or whose process died.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallLogEntry {
    pub role: Role,
    pub seq: u32,
    pub event: CallEvent,
    /// The process that made the call.
    pub pid: u32,
}

/// Why the call log could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CallLogError {
    #[error("cannot read call log {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot write call log {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("call log {} line {line} is not a call record", path.display())]
    Parse {
        path: PathBuf,
        line: usize,
        #[source]
        source: serde_json::Error,
    },
}

/// Where a recorded prompt goes (`record_prompts: true`): `<script>.prompts/{role}-{seq}.md`.
pub fn prompt_record_path(script: &Path, role: Role, seq: u32) -> PathBuf {
    let mut dir = OsString::from(script.as_os_str());
    dir.push(".prompts");
    PathBuf::from(dir).join(format!("{role}-{seq}.md"))
}

/// Where the call log of `script` lives: `<script>.calls.jsonl`.
pub fn call_log_path(script: &Path) -> PathBuf {
    let mut path = OsString::from(script.as_os_str());
    path.push(".calls.jsonl");
    PathBuf::from(path)
}

/// Reads every call logged for `script`, oldest first. No log yet means no calls: an empty list.
pub fn read_call_log(script: &Path) -> Result<Vec<CallLogEntry>, CallLogError> {
    let path = call_log_path(script);
    let contents = match fs::read_to_string(&path) {
        Ok(contents) => contents,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(CallLogError::Read { path, source }),
    };
    contents
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            serde_json::from_str(line).map_err(|source| CallLogError::Parse {
                path: path.clone(),
                line: i + 1,
                source,
            })
        })
        .collect()
}

/// Appends one event with a single `write_all` of a whole line in append mode, so lines from
/// concurrent processes never interleave.
pub(super) fn append_call_log(
    script: &Path,
    role: Role,
    seq: u32,
    event: CallEvent,
) -> Result<(), CallLogError> {
    let path = call_log_path(script);
    let entry = CallLogEntry {
        role,
        seq,
        event,
        pid: std::process::id(),
    };
    let write = || -> io::Result<()> {
        let mut line = serde_json::to_string(&entry).map_err(io::Error::other)?;
        line.push('\n');
        let mut file = OpenOptions::new().create(true).append(true).open(&path)?;
        file.write_all(line.as_bytes())?;
        file.flush()
    };
    write().map_err(|source| CallLogError::Write {
        path: path.clone(),
        source,
    })
}
