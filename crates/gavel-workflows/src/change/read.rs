//! Reading a change's files without trusting what is on disk.
//!
//! A change folder is edited by people, by other tools and, in a worktree, by the code a model
//! wrote, so `STATE.yaml`, `tasks.md`, `proposal.md`, `REVIEW.md`, the delta specs, the living
//! specs and the lineage records gavel reads back are not assumed to be files. Reading a named
//! pipe (FIFO) blocks forever, and a link to `/dev/zero` never ends (it grew a process to 23 GB).
//! Every read in `change/` (and in `gavel change`) goes through this module, which reads only:
//!
//! - a **regular file**: a folder, FIFO, socket or device is refused before it is opened, and
//!   again from the opened handle's own metadata (so a file swapped for a pipe in between is
//!   caught too); the open itself is non-blocking, so even that swap cannot hang;
//! - **not a symbolic link** (`O_NOFOLLOW` on the last component): a link to a file outside
//!   the change would be read, and shown to a model, as if it were part of the plan;
//! - at most [`MAX_FILE_BYTES`], read with a cap (the length the metadata reports is not
//!   trusted either).
//!
//! Every refusal is a [`ReadError`] that names the path and what it is.

use std::fs::{self, File, FileType, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use nix::fcntl::OFlag;

/// The largest file gavel reads from a change (8 MiB): far more than any plan, spec or
/// checklist a person writes (a `tasks.md` of 200,000 tasks is about 6 MB), and little enough
/// that holding a few of them in memory is harmless.
pub const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// Why a file of a change could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// There is nothing at the path.
    #[error("{} does not exist", path.display())]
    NotFound {
        /// The file.
        path: PathBuf,
    },
    /// The path is a symbolic link, which gavel does not follow.
    #[error(
        "{} is a symbolic link; gavel reads only regular files in a change (put the file itself there)",
        path.display()
    )]
    Symlink {
        /// The file.
        path: PathBuf,
    },
    /// The path is a folder, FIFO, socket or device.
    #[error("{} is {kind}, not a regular file; gavel reads only regular files in a change", path.display())]
    NotAFile {
        /// The file.
        path: PathBuf,
        /// What it is instead (`a named pipe (FIFO)`, ...).
        kind: &'static str,
    },
    /// The file is larger than [`MAX_FILE_BYTES`].
    #[error("{} is larger than {MAX_FILE_BYTES} bytes (8 MiB), the most gavel reads from a change", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
    },
    /// The file is not UTF-8 text.
    #[error("{} is not UTF-8 text (first bad byte at offset {offset})", path.display())]
    NotUtf8 {
        /// The file.
        path: PathBuf,
        /// The first byte that is not UTF-8.
        offset: usize,
    },
    /// The operating system refused.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        #[source]
        source: io::Error,
    },
}

impl ReadError {
    /// Whether the file simply is not there (the one error an optional read ignores).
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::NotFound { .. })
    }

    fn io(path: &Path, source: io::Error) -> Self {
        if source.kind() == io::ErrorKind::NotFound {
            Self::NotFound {
                path: path.to_owned(),
            }
        } else {
            Self::Io {
                path: path.to_owned(),
                source,
            }
        }
    }
}

/// Whether something (a file, a folder, a link, even a dangling one) is at `path`. Unlike
/// [`Path::exists`] it does not follow a link, so a link is found and then refused by the
/// reader, never taken for a missing file.
pub fn is_present(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok()
}

/// The bytes of the regular file at `path` (see the module documentation).
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, ReadError> {
    let meta = fs::symlink_metadata(path).map_err(|e| ReadError::io(path, e))?;
    check_type(path, meta.file_type())?;
    // Non-blocking, so that a FIFO put here since the check cannot hang the open; no link
    // followed; no controlling terminal taken from a tty put here.
    let flags = OFlag::O_NONBLOCK | OFlag::O_NOFOLLOW | OFlag::O_NOCTTY;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits())
        .open(path)
        .map_err(|e| ReadError::io(path, e))?;
    let meta = file.metadata().map_err(|e| ReadError::io(path, e))?;
    check_type(path, meta.file_type())?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(ReadError::TooLarge {
            path: path.to_owned(),
        });
    }
    read_capped(file, meta.len(), path)
}

/// The text of the regular file at `path`.
pub fn read_text(path: &Path) -> Result<String, ReadError> {
    let bytes = read_bytes(path)?;
    String::from_utf8(bytes).map_err(|e| ReadError::NotUtf8 {
        path: path.to_owned(),
        offset: e.utf8_error().valid_up_to(),
    })
}

/// Like [`read_text`], but a missing file is `None`.
pub fn read_text_optional(path: &Path) -> Result<Option<String>, ReadError> {
    match read_text(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e),
    }
}

/// Like [`read_bytes`], but a missing file is `None`.
pub fn read_bytes_optional(path: &Path) -> Result<Option<Vec<u8>>, ReadError> {
    match read_bytes(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e),
    }
}

/// Reads at most [`MAX_FILE_BYTES`] + 1 bytes: one more than allowed tells a file that grew
/// past the limit from one that is exactly at it.
fn read_capped(file: File, len: u64, path: &Path) -> Result<Vec<u8>, ReadError> {
    let mut bytes = Vec::with_capacity(usize::try_from(len.min(MAX_FILE_BYTES)).unwrap_or(0));
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ReadError::io(path, e))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(ReadError::TooLarge {
            path: path.to_owned(),
        });
    }
    Ok(bytes)
}

fn check_type(path: &Path, t: FileType) -> Result<(), ReadError> {
    if t.is_file() {
        return Ok(());
    }
    if t.is_symlink() {
        return Err(ReadError::Symlink {
            path: path.to_owned(),
        });
    }
    let kind = if t.is_dir() {
        "a folder"
    } else if t.is_fifo() {
        "a named pipe (FIFO)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else {
        "something other than a file"
    };
    Err(ReadError::NotAFile {
        path: path.to_owned(),
        kind,
    })
}

#[cfg(test)]
mod tests;
