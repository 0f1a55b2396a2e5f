//! Writing and deleting a text-only model's files beneath the worktree, never through a link.
//!
//! A model answers "write `src/x.py`" and gavel, which is not boxed, writes it. If a folder on
//! that path is a symbolic link (one the model's code or its tests left, pointing out of the
//! worktree), `std::fs` would follow it and write, or delete, outside: a file of the person's
//! was deleted that way. So every path is resolved from an open handle on the worktree with
//! `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`: no component may be a link, none may
//! leave the worktree, and a missing folder is made with `mkdirat` beneath the folder handle
//! already open. The file itself is written to a temporary name in its folder and renamed over
//! the final name (which replaces a link standing there, never its target); a delete unlinks
//! the name (a link itself, never its target). A path that would go through a link is a
//! [`Refusal`], which the caller feeds back to the model.

use std::io::Write;
use std::os::fd::OwnedFd;
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::{OFlag, OpenHow, ResolveFlag, openat2, renameat};
use nix::sys::stat::{Mode, mkdirat};
use nix::unistd::{UnlinkatFlags, unlinkat};

/// Why a path was not written or deleted.
#[derive(Debug, thiserror::Error)]
pub enum BeneathError {
    /// The path goes through a symbolic link or out of the folder: fed back to the model.
    #[error("`{path}`: {why}")]
    Refused { path: String, why: String },
    /// The file system failed.
    #[error("cannot {what} `{path}` in the worktree: {source}")]
    Io {
        what: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
}

fn io(what: &'static str, path: &str, e: impl Into<std::io::Error>) -> BeneathError {
    BeneathError::Io {
        what,
        path: path.to_owned(),
        source: e.into(),
    }
}

fn errno_io(e: Errno) -> std::io::Error {
    std::io::Error::from_raw_os_error(e as i32)
}

/// The strictest resolution: beneath the starting folder, no symbolic link anywhere (the last
/// component included: `ELOOP`).
fn how(flags: OFlag) -> OpenHow {
    OpenHow::new()
        .flags(flags | OFlag::O_CLOEXEC)
        .resolve(ResolveFlag::RESOLVE_BENEATH | ResolveFlag::RESOLVE_NO_SYMLINKS)
}

/// An open handle on `root` itself.
fn open_root(root: &Path, rel: &str) -> Result<OwnedFd, BeneathError> {
    nix::fcntl::open(
        root,
        OFlag::O_DIRECTORY | OFlag::O_RDONLY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| io("open the worktree for", rel, errno_io(e)))
}

/// The folder holding `rel` (`/`-separated, checked relative), opened beneath `root`; its
/// missing folders are made when `create`. `Ok(None)`: a folder is missing and not made.
fn parent_of(
    root: &Path,
    rel: &str,
    create: bool,
) -> Result<Option<(OwnedFd, String)>, BeneathError> {
    let mut dir = open_root(root, rel)?;
    let mut parts: Vec<&str> = rel.split('/').collect();
    let name = parts.pop().unwrap_or_default().to_owned();
    for part in parts {
        let opened = openat2(&dir, part, how(OFlag::O_DIRECTORY | OFlag::O_RDONLY));
        let next = match opened {
            Ok(fd) => fd,
            Err(Errno::ENOENT) if create => {
                match mkdirat(&dir, part, Mode::from_bits_truncate(0o755)) {
                    Ok(()) | Err(Errno::EEXIST) => {}
                    Err(e) => return Err(io("create a folder for", rel, errno_io(e))),
                }
                openat2(&dir, part, how(OFlag::O_DIRECTORY | OFlag::O_RDONLY))
                    .map_err(|e| refusal_or_io(rel, e))?
            }
            Err(Errno::ENOENT) => return Ok(None),
            Err(e) => return Err(refusal_or_io(rel, e)),
        };
        dir = next;
    }
    Ok(Some((dir, name)))
}

/// `ELOOP` (a link), `EXDEV` (out of the folder) and `ENOTDIR` (a file where a folder is) are
/// refusals; anything else is the file system failing.
fn refusal_or_io(rel: &str, e: Errno) -> BeneathError {
    match e {
        Errno::ELOOP | Errno::EXDEV => BeneathError::Refused {
            path: rel.to_owned(),
            why: "a folder on its path is a symbolic link; files are written only through real folders of the worktree".to_owned(),
        },
        Errno::ENOTDIR => BeneathError::Refused {
            path: rel.to_owned(),
            why: "a file stands where its path needs a folder".to_owned(),
        },
        other => io("resolve", rel, errno_io(other)),
    }
}

/// Whether writing or deleting `rel` would be refused (a link or a file on its path), without
/// changing anything: the caller checks every path of an answer before applying any.
pub fn check(root: &Path, rel: &str) -> Result<(), BeneathError> {
    parent_of(root, rel, false).map(drop)
}

/// Writes `bytes` to `rel` beneath `root` (see the module doc), durably.
pub fn write(root: &Path, rel: &str, bytes: &[u8]) -> Result<(), BeneathError> {
    let Some((dir, name)) = parent_of(root, rel, true)? else {
        return Err(io(
            "write",
            rel,
            std::io::Error::from(std::io::ErrorKind::NotFound),
        ));
    };
    let tmp = format!(".{name}.gavel-{}.tmp", std::process::id());
    let fd = openat2(
        &dir,
        tmp.as_str(),
        how(OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_TRUNC | OFlag::O_NOFOLLOW)
            .mode(Mode::from_bits_truncate(0o644)),
    )
    .map_err(|e| refusal_or_io(rel, e))?;
    let mut file = std::fs::File::from(fd);
    let written = file.write_all(bytes).and_then(|()| file.sync_all());
    if let Err(e) = written {
        let _ = unlinkat(&dir, tmp.as_str(), UnlinkatFlags::NoRemoveDir);
        return Err(io("write", rel, e));
    }
    drop(file);
    renameat(&dir, tmp.as_str(), &dir, name.as_str()).map_err(|e| {
        let _ = unlinkat(&dir, tmp.as_str(), UnlinkatFlags::NoRemoveDir);
        io("write", rel, errno_io(e))
    })
}

/// Deletes `rel` beneath `root` (the name itself: a link is removed, its target is not). A
/// path that does not exist is already deleted.
pub fn remove(root: &Path, rel: &str) -> Result<(), BeneathError> {
    let Some((dir, name)) = parent_of(root, rel, false)? else {
        return Ok(());
    };
    match unlinkat(&dir, name.as_str(), UnlinkatFlags::NoRemoveDir) {
        Ok(()) | Err(Errno::ENOENT) => Ok(()),
        Err(Errno::EISDIR) => Err(BeneathError::Refused {
            path: rel.to_owned(),
            why: "it is a folder; only files are deleted".to_owned(),
        }),
        Err(e) => Err(io("delete", rel, errno_io(e))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A worktree with `sub/` and a link `out` to a folder outside holding `keep.txt`.
    fn scene() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
        let dir = tempfile::tempdir().expect("tempdir");
        let wt = dir.path().join("wt");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(wt.join("sub")).expect("mkdir");
        std::fs::create_dir_all(&outside).expect("mkdir");
        std::fs::write(outside.join("keep.txt"), "the person's\n").expect("write");
        std::os::unix::fs::symlink(&outside, wt.join("out")).expect("link");
        std::os::unix::fs::symlink("../outside", wt.join("sub/up")).expect("link");
        (dir, wt, outside)
    }

    #[test]
    fn regression_a_delete_through_a_folder_link_is_refused_and_the_file_outside_stays() {
        let (_dir, wt, outside) = scene();
        for rel in ["out/keep.txt", "sub/up/keep.txt"] {
            let err = remove(&wt, rel).expect_err("refused");
            assert!(matches!(err, BeneathError::Refused { .. }), "{rel}: {err}");
            assert!(err.to_string().contains("symbolic link"), "{err}");
            assert!(outside.join("keep.txt").exists(), "{rel}: deleted outside");
            assert!(check(&wt, rel).is_err());
        }
    }

    #[test]
    fn a_write_through_a_folder_link_is_refused_and_nothing_lands_outside() {
        let (_dir, wt, outside) = scene();
        for rel in ["out/keep.txt", "out/new/deep.txt", "sub/up/x.txt"] {
            let err = write(&wt, rel, b"evil\n").expect_err("refused");
            assert!(matches!(err, BeneathError::Refused { .. }), "{rel}: {err}");
        }
        assert_eq!(
            std::fs::read_to_string(outside.join("keep.txt")).expect("read"),
            "the person's\n"
        );
        let mut names: Vec<String> = std::fs::read_dir(&outside)
            .expect("ls")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["keep.txt"]);
    }

    #[test]
    fn writes_make_folders_and_replace_a_final_link_not_its_target() {
        let (_dir, wt, outside) = scene();
        write(&wt, "src/deep/a.py", b"x = 1\n").expect("write");
        assert_eq!(
            std::fs::read_to_string(wt.join("src/deep/a.py")).expect("read"),
            "x = 1\n"
        );
        std::os::unix::fs::symlink(outside.join("keep.txt"), wt.join("sub/link.txt"))
            .expect("link");
        write(&wt, "sub/link.txt", b"mine\n").expect("write over the link");
        assert!(!wt.join("sub/link.txt").is_symlink());
        assert_eq!(
            std::fs::read_to_string(outside.join("keep.txt")).expect("read"),
            "the person's\n"
        );
        remove(&wt, "src/deep/a.py").expect("remove");
        remove(&wt, "src/deep/a.py").expect("already gone");
        remove(&wt, "no/such/folder.py").expect("nothing to delete");
        assert!(!wt.join("no").exists(), "a delete makes no folder");
    }
}
