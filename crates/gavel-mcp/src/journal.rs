//! The record of finished tool calls, by MCP request id, so a repeated call (a resumed run
//! replaying its agent's session) returns the recorded result instead of writing again.
//!
//! A JSON lines file: one `{"id", "tool", "result"}` object per finished call, appended and
//! fsync'd before the result is returned. A torn last line (a crash mid-append) is skipped.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::McpError;

/// A journal file.
#[derive(Debug, Clone)]
pub struct Journal {
    path: PathBuf,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    id: Value,
    tool: String,
    result: Value,
}

impl Journal {
    pub fn new(path: PathBuf) -> Self {
        Self { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The recorded result of the call `id` to `tool`, if there is one.
    pub fn lookup(&self, id: &Value, tool: &str) -> Result<Option<Value>, McpError> {
        let text = match fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(McpError::Io {
                    action: "read",
                    path: self.path.clone(),
                    source,
                });
            }
        };
        Ok(text
            .lines()
            .filter_map(|line| serde_json::from_str::<Entry>(line).ok())
            .find(|e| &e.id == id && e.tool == tool)
            .map(|e| e.result))
    }

    /// Appends the result of the call `id` to `tool`, and syncs it to disk.
    pub fn record(&self, id: Value, tool: &str, result: Value) -> Result<(), McpError> {
        let entry = Entry {
            id,
            tool: tool.to_owned(),
            result,
        };
        let mut line = serde_json::to_string(&entry).map_err(|source| McpError::Journal {
            path: self.path.clone(),
            source,
        })?;
        line.push('\n');
        // A torn last line (a crash mid-append) must not swallow this entry.
        if fs::read(&self.path).is_ok_and(|b| !b.is_empty() && !b.ends_with(b"\n")) {
            line.insert(0, '\n');
        }
        let io = |action, source| McpError::Io {
            action,
            path: self.path.clone(),
            source,
        };
        if let Some(parent) = self.path.parent().filter(|p| !p.as_os_str().is_empty()) {
            fs::create_dir_all(parent).map_err(|e| io("create the folder of", e))?;
        }
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .map_err(|e| io("open", e))?;
        file.write_all(line.as_bytes())
            .map_err(|e| io("append to", e))?;
        file.sync_all().map_err(|e| io("sync", e))
    }
}
