//! The one change folder a server may write in, atomic writes into it, and reads that take
//! only regular files.
//!
//! The folder is checked once (absolute, not a symbolic link, a folder) and canonicalized;
//! every write goes to a file name the server fixes, is refused when that name is a symbolic
//! link, and lands through a temporary file in the same folder and a rename, so a reader never
//! sees half a review. A replaced file keeps its permissions; a new one gets 0666 less the
//! umask, as git gives the files it creates. Every read ([`read_regular`]) opens without
//! following a symbolic link and without blocking (a FIFO would hang the open), checks through
//! the opened handle that it holds a regular file, and reads at most a cap: a FIFO named
//! `tasks.md` once hung every command, and a symbolic link to `/dev/zero` grew a process to
//! 23 GB.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

use crate::McpError;

/// The most bytes read from one file of a change folder (or from a journal): far more than a
/// review, a proposal or a task list holds, and little enough that no file can exhaust memory.
pub const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;

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

/// Opens `path` as a regular file, or says why not: `Ok(None)` when it does not exist. The last
/// component is not followed when it is a symbolic link, and a FIFO cannot block the open
/// (`O_NONBLOCK`; it is refused by the check on the opened handle).
pub(crate) fn open_regular(
    path: &Path,
    options: &mut OpenOptions,
) -> Result<Option<File>, McpError> {
    let opened = options
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path);
    let file = match opened {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(McpError::Symlink(path.to_owned()));
        }
        Err(source) => {
            return Err(McpError::Io {
                action: "open",
                path: path.to_owned(),
                source,
            });
        }
    };
    let kind = file
        .metadata()
        .map_err(|source| McpError::Io {
            action: "inspect",
            path: path.to_owned(),
            source,
        })?
        .file_type();
    let not = |kind: &'static str| {
        Err(McpError::NotAFile {
            path: path.to_owned(),
            kind,
        })
    };
    if kind.is_file() {
        Ok(Some(file))
    } else if kind.is_dir() {
        not("folder")
    } else if kind.is_fifo() {
        not("FIFO")
    } else if kind.is_socket() {
        not("socket")
    } else if kind.is_char_device() || kind.is_block_device() {
        not("device")
    } else {
        not("special file")
    }
}

/// Reads `path` if it exists: a regular file (not through a symbolic link) of at most `cap`
/// bytes, as UTF-8.
pub(crate) fn read_regular(path: &Path, cap: u64) -> Result<Option<String>, McpError> {
    let Some(file) = open_regular(path, OpenOptions::new().read(true))? else {
        return Ok(None);
    };
    let io = |source| McpError::Io {
        action: "read",
        path: path.to_owned(),
        source,
    };
    let too_large = || McpError::TooLarge {
        path: path.to_owned(),
        cap,
    };
    let len = file.metadata().map_err(io)?.len();
    if len > cap {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    // The size can change after the check: never read more than the cap allows.
    file.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > cap {
        return Err(too_large());
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|e| io(io::Error::new(io::ErrorKind::InvalidData, e)))
}

/// A checked, canonical change folder.
#[derive(Debug, Clone)]
pub struct ChangeDir {
    root: PathBuf,
}

/// A file written and synced under a temporary name in the change folder, not yet in place:
/// [`Staged::commit`] renames it over its target; dropping it removes it.
#[derive(Debug)]
pub(crate) struct Staged {
    tmp: NamedTempFile,
    path: PathBuf,
}

impl Staged {
    /// Puts the file in place (one rename: a reader sees the old file or the new one).
    pub(crate) fn commit(self) -> Result<PathBuf, McpError> {
        let Self { tmp, path } = self;
        tmp.persist(&path).map_err(|e| McpError::Io {
            action: "replace",
            path: path.clone(),
            source: e.error,
        })?;
        Ok(path)
    }
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

    /// Reads `name` if it exists: a regular file, not a symbolic link, at most
    /// [`MAX_FILE_BYTES`].
    pub fn read(&self, name: &'static str) -> Result<Option<String>, McpError> {
        read_regular(&self.target(name)?, MAX_FILE_BYTES)
    }

    /// Writes `contents` for `name` under a temporary name (written and synced), to be put in
    /// place by [`Staged::commit`]: until then, nothing a reader sees has changed.
    pub(crate) fn stage(&self, name: &'static str, contents: &str) -> Result<Staged, McpError> {
        let path = self.target(name)?;
        let io = |action, source| McpError::Io {
            action,
            path: path.clone(),
            source,
        };
        // A new file is 0666 less the umask, as git creates one; a replaced file keeps its
        // mode (the temporary file is set to it before it takes the file's place).
        let existing = fs::symlink_metadata(&path)
            .ok()
            .filter(fs::Metadata::is_file)
            .map(|m| m.permissions().mode() & 0o7777);
        let mut tmp = tempfile::Builder::new()
            .prefix(".gavel-mcp-")
            .permissions(fs::Permissions::from_mode(0o666))
            .tempfile_in(&self.root)
            .map_err(|e| io("create a temporary file for", e))?;
        if let Some(mode) = existing {
            tmp.as_file()
                .set_permissions(fs::Permissions::from_mode(mode))
                .map_err(|e| io("set the permissions of", e))?;
        }
        tmp.write_all(contents.as_bytes())
            .map_err(|e| io("write", e))?;
        tmp.as_file().sync_all().map_err(|e| io("sync", e))?;
        Ok(Staged { tmp, path })
    }

    /// Replaces `name` with `contents` atomically (temporary file, fsync, rename).
    pub fn write(&self, name: &'static str, contents: &str) -> Result<PathBuf, McpError> {
        self.stage(name, contents)?.commit()
    }
}

#[cfg(test)]
#[path = "fsafe_tests.rs"]
mod tests;
