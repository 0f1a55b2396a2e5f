//! The one change folder a server may write in, and atomic writes into it.
//!
//! The folder is checked once (absolute, not a symbolic link, a folder) and canonicalized;
//! every write goes to a file name the server fixes, is refused when that name is a symbolic
//! link, and lands through a temporary file in the same folder and a rename, so a reader never
//! sees half a review.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::McpError;

/// Checks a change id: `[a-z0-9-]`, 1 to 64 characters.
pub fn validate_change_id(id: &str) -> Result<(), McpError> {
    let ok = !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(McpError::InvalidChangeId(id.to_owned()))
    }
}

/// A checked, canonical change folder.
#[derive(Debug, Clone)]
pub struct ChangeDir {
    root: PathBuf,
}

impl ChangeDir {
    /// Opens `path`: absolute, an existing folder, and not itself a symbolic link.
    pub fn open(path: &Path) -> Result<Self, McpError> {
        if !path.is_absolute() {
            return Err(McpError::RelativeChangeDir(path.to_owned()));
        }
        let meta = fs::symlink_metadata(path).map_err(|source| McpError::Io {
            action: "inspect",
            path: path.to_owned(),
            source,
        })?;
        if meta.file_type().is_symlink() {
            return Err(McpError::Symlink(path.to_owned()));
        }
        if !meta.is_dir() {
            return Err(McpError::NotADir(path.to_owned()));
        }
        let root = path.canonicalize().map_err(|source| McpError::Io {
            action: "resolve",
            path: path.to_owned(),
            source,
        })?;
        Ok(Self { root })
    }

    /// The canonical folder.
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// `name` in the folder, refused when it is a symbolic link (a missing file is fine).
    fn target(&self, name: &'static str) -> Result<PathBuf, McpError> {
        let root_meta = fs::symlink_metadata(&self.root).map_err(|source| McpError::Io {
            action: "inspect",
            path: self.root.clone(),
            source,
        })?;
        if root_meta.file_type().is_symlink() {
            return Err(McpError::Symlink(self.root.clone()));
        }
        let path = self.root.join(name);
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => Err(McpError::Symlink(path)),
            _ => Ok(path),
        }
    }

    /// Reads `name` if it exists (not following a symbolic link).
    pub fn read(&self, name: &'static str) -> Result<Option<String>, McpError> {
        let path = self.target(name)?;
        match fs::read_to_string(&path) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(McpError::Io {
                action: "read",
                path,
                source,
            }),
        }
    }

    /// Replaces `name` with `contents` atomically (temporary file, fsync, rename).
    pub fn write(&self, name: &'static str, contents: &str) -> Result<PathBuf, McpError> {
        let path = self.target(name)?;
        let io = |action, source| McpError::Io {
            action,
            path: path.clone(),
            source,
        };
        let mut tmp = tempfile::Builder::new()
            .prefix(".gavel-mcp-")
            .tempfile_in(&self.root)
            .map_err(|e| io("create a temporary file for", e))?;
        tmp.write_all(contents.as_bytes())
            .map_err(|e| io("write", e))?;
        tmp.as_file().sync_all().map_err(|e| io("sync", e))?;
        tmp.persist(&path).map_err(|e| io("replace", e.error))?;
        Ok(path)
    }
}
