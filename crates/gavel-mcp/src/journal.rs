//! The record of finished tool calls, by MCP request id, so a repeated call (a resumed run
//! replaying its agent's session) returns the recorded result instead of writing again.
//!
//! A JSON lines file: one `{"id", "tool", "result"}` object per finished call, appended and
//! fsync'd before the result is returned. A torn last line (a crash mid-append) is skipped.
//! A server's journal lies inside its change folder ([`Journal::inside`]): the one path it is
//! given besides the folder must not let it write anywhere else. The file is read and appended
//! as a regular file only, and read up to [`MAX_FILE_BYTES`].

use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::McpError;
use crate::fsafe::{ChangeDir, MAX_FILE_BYTES, open_regular, read_regular};

/// A journal file.
#[derive(Debug, Clone)]
pub struct Journal {
    path: PathBuf,
    /// The change folder it must stay in, checked again before each use.
    root: Option<PathBuf>,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    id: Value,
    tool: String,
    result: Value,
}

impl Journal {
    /// A journal at `path`, wherever it is (for gavel's own use; a server's journal is made by
    /// [`Journal::inside`]).
    pub fn new(path: PathBuf) -> Self {
        Self { path, root: None }
    }

    /// A journal at `given`, which must name a file inside `dir`: an absolute path whose folder
    /// exists and resolves inside the change folder, with no `..` and no symbolic link for
    /// the file itself.
    pub fn inside(dir: &ChangeDir, given: &Path) -> Result<Self, McpError> {
        let root = dir.path();
        let outside = || McpError::JournalOutside {
            given: given.to_owned(),
            root: root.to_owned(),
        };
        if !given.is_absolute() || given.components().any(|c| c == Component::ParentDir) {
            return Err(outside());
        }
        let (Some(parent), Some(name)) = (given.parent(), given.file_name()) else {
            return Err(outside());
        };
        let parent = parent.canonicalize().map_err(|_| outside())?;
        if !parent.starts_with(root) {
            return Err(outside());
        }
        let journal = Self {
            path: parent.join(name),
            root: Some(root.to_owned()),
        };
        // A file there must be a regular one now, not only when it is first written.
        open_regular(&journal.path, OpenOptions::new().read(true))?;
        Ok(journal)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Checks again that the journal's folder resolves inside the change folder (a folder
    /// swapped for a symbolic link since the server started is refused).
    fn still_inside(&self) -> Result<(), McpError> {
        let Some(root) = &self.root else {
            return Ok(());
        };
        let inside = self
            .path
            .parent()
            .and_then(|p| p.canonicalize().ok())
            .is_some_and(|p| p.starts_with(root));
        if inside {
            Ok(())
        } else {
            Err(McpError::JournalOutside {
                given: self.path.clone(),
                root: root.clone(),
            })
        }
    }

    /// The recorded result of the call `id` to `tool`, if there is one.
    pub fn lookup(&self, id: &Value, tool: &str) -> Result<Option<Value>, McpError> {
        self.still_inside()?;
        let Some(text) = read_regular(&self.path, MAX_FILE_BYTES)? else {
            return Ok(None);
        };
        Ok(text
            .lines()
            .filter_map(|line| serde_json::from_str::<Entry>(line).ok())
            .find(|e| &e.id == id && e.tool == tool)
            .map(|e| e.result))
    }

    /// The recorded result of the first call to `tool`, whatever its request id.
    pub fn first_result(&self, tool: &str) -> Result<Option<Value>, McpError> {
        self.still_inside()?;
        let Some(text) = read_regular(&self.path, MAX_FILE_BYTES)? else {
            return Ok(None);
        };
        Ok(text
            .lines()
            .filter_map(|line| serde_json::from_str::<Entry>(line).ok())
            .find(|e| e.tool == tool)
            .map(|e| e.result))
    }

    /// Appends the result of the call `id` to `tool`, and syncs it to disk.
    pub fn record(&self, id: Value, tool: &str, result: Value) -> Result<(), McpError> {
        self.still_inside()?;
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
        let io = |action, source| McpError::Io {
            action,
            path: self.path.clone(),
            source,
        };
        let mut file = open_regular(
            &self.path,
            OpenOptions::new().read(true).append(true).create(true),
        )?
        .ok_or_else(|| io("open", std::io::ErrorKind::NotFound.into()))?;
        let len = file.metadata().map_err(|e| io("inspect", e))?.len();
        if len > MAX_FILE_BYTES {
            return Err(McpError::TooLarge {
                path: self.path.clone(),
                cap: MAX_FILE_BYTES,
            });
        }
        // A torn last line (a crash mid-append) must not swallow this entry.
        if len > 0 {
            let mut last = [0u8; 1];
            file.seek(SeekFrom::End(-1))
                .and_then(|_| file.read_exact(&mut last))
                .map_err(|e| io("read", e))?;
            if last[0] != b'\n' {
                line.insert(0, '\n');
            }
        }
        file.write_all(line.as_bytes())
            .map_err(|e| io("append to", e))?;
        file.sync_all().map_err(|e| io("sync", e))
    }
}
