//! The box's mount layout, made in its private mount namespace before Landlock applies.
//!
//! Landlock decides where the box may write, but not everything a process can do to a file is
//! a write in Landlock's sense: `chmod`, `chown`, extended attributes and times are not, and
//! neither is `connect()` to a unix socket file (a D-Bus session, `docker.sock`, an X server,
//! a local PostgreSQL). So, inside the box:
//! - every mount is read-only ([`read_only_everywhere`]): nothing outside the writable
//!   folders can be changed in any way, whatever Landlock's ABI;
//! - `/tmp`, `/run` and `/dev/shm` are fresh, private tmpfs: the sockets and files that
//!   other programs keep there are out of sight (the folder of `/etc/resolv.conf`'s target is
//!   kept when it lives in `/run`, so an agent that may use the network can still resolve
//!   names), and what the box writes there is gone with it;
//! - the writable folders are bound back read-write, then the read-only paths (the worktree's
//!   `.git` pointer) read-only over them. Each is bound from a handle opened before anything
//!   moved, so a folder under `/tmp` is the person's folder, not an empty one in the box's
//!   `/tmp`.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::mount::{MsFlags, mount};
use nix::sys::stat::Mode;
use nix::sys::statvfs::{FsFlags, statvfs};

use super::ConfineError;

/// The size of each private tmpfs (`/tmp`, `/run`, `/dev/shm`).
pub const TMPFS_SIZE: &str = "256m";

fn rules(message: String) -> ConfineError {
    ConfineError::Rules { message }
}

/// A path held open (`O_PATH`) before the mount tree changes.
struct Held {
    path: PathBuf,
    fd: OwnedFd,
    is_dir: bool,
}

fn hold(path: &Path, what: &str) -> Result<Held, ConfineError> {
    let meta = std::fs::metadata(path).map_err(|e| {
        rules(format!(
            "the {what} path {} cannot be used: {e}",
            path.display()
        ))
    })?;
    let fd = nix::fcntl::open(path, OFlag::O_PATH | OFlag::O_CLOEXEC, Mode::empty())
        .map_err(|e| rules(format!("cannot open {}: {e}", path.display())))?;
    Ok(Held {
        path: path.to_path_buf(),
        fd,
        is_dir: meta.is_dir(),
    })
}

/// Makes the layout described in the module doc.
pub(crate) fn apply(writable: &[PathBuf], read_only: &[PathBuf]) -> Result<(), ConfineError> {
    let writable = writable
        .iter()
        .map(|p| hold(p, "writable"))
        .collect::<Result<Vec<_>, _>>()?;
    let read_only = read_only
        .iter()
        .map(|p| hold(p, "read-only"))
        .collect::<Result<Vec<_>, _>>()?;
    let resolv = std::fs::canonicalize("/etc/resolv.conf")
        .ok()
        .and_then(|t| t.parent().map(Path::to_path_buf))
        .filter(|dir| dir.starts_with("/run"))
        .and_then(|dir| hold(&dir, "name resolution").ok());
    read_only_everywhere()?;
    for dir in ["/tmp", "/run", "/dev/shm"] {
        tmpfs(Path::new(dir))?;
    }
    if let Some(resolv) = resolv {
        bind(&resolv, true)?;
    }
    for held in &writable {
        bind(held, false)?;
    }
    for held in &read_only {
        bind(held, true)?;
    }
    // The working folder was entered through the old mounts: enter it again through the new
    // ones (a worktree's writable bind, not the read-only mount beneath it). One the box
    // cannot see (a folder under the person's /tmp that is not the box's) stays as it was
    // entered, read-only.
    if let Ok(cwd) = std::env::current_dir() {
        let _ = std::env::set_current_dir(&cwd);
    }
    Ok(())
}

/// Remounts every mount of the namespace read-only (its locked flags kept). The root must
/// follow; a mount that cannot (one hidden beneath another, say) stays as it was, its writes
/// still refused by Landlock.
fn read_only_everywhere() -> Result<(), ConfineError> {
    let table = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| rules(format!("cannot read the mount table: {e}")))?;
    let mut points: Vec<PathBuf> = table
        .lines()
        .filter_map(|line| line.split(' ').nth(4))
        .map(|p| PathBuf::from(unescape(p)))
        .collect();
    points.sort();
    points.dedup();
    for point in &points {
        let done = remount(point, true);
        if point == Path::new("/") {
            done?;
        }
    }
    Ok(())
}

/// A mount point as `/proc/self/mountinfo` writes it, its `\ooo` escapes undone.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|b| (b'0'..=b'7').contains(b)));
        if bytes[i] == b'\\'
            && let Some(d) = octal
        {
            let n = d.iter().fold(0u32, |n, b| n * 8 + u32::from(b - b'0'));
            out.push(u8::try_from(n).unwrap_or(b'?'));
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Remounts the mount at `path` read-only or read-write, keeping the flags the kernel locks
/// (`nosuid`, `nodev`, `noexec`, the atime ones), which a remount in a user namespace may not
/// drop.
fn remount(path: &Path, read_only: bool) -> Result<(), ConfineError> {
    let failed = |what: &str, e: Errno| {
        rules(format!(
            "cannot make {} {} ({what}): {e}",
            path.display(),
            if read_only { "read-only" } else { "writable" }
        ))
    };
    let kept = statvfs(path).map_err(|e| failed("statvfs", e))?.flags();
    let mut flags = MsFlags::MS_BIND | MsFlags::MS_REMOUNT;
    if read_only {
        flags |= MsFlags::MS_RDONLY;
    }
    for (fs, ms) in [
        (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
        (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
    ] {
        if kept.contains(fs) {
            flags |= ms;
        }
    }
    mount::<str, Path, str, str>(None, path, None, flags, None).map_err(|e| failed("remount", e))
}

/// A fresh private tmpfs at `dir` (skipped when there is no such folder).
fn tmpfs(dir: &Path) -> Result<(), ConfineError> {
    if !dir.is_dir() {
        return Ok(());
    }
    let data = format!("size={TMPFS_SIZE},mode=1777");
    mount(
        Some("tmpfs"),
        dir,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some(data.as_str()),
    )
    .map_err(|e| rules(format!("cannot mount a private {}: {e}", dir.display())))
}

/// Binds the held path over its own name (made first when a tmpfs now hides it), read-only or
/// read-write.
fn bind(held: &Held, read_only: bool) -> Result<(), ConfineError> {
    let path = &held.path;
    if std::fs::symlink_metadata(path).is_err() {
        let made = if held.is_dir {
            std::fs::create_dir_all(path)
        } else {
            path.parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| std::fs::write(path, b""))
        };
        made.map_err(|e| rules(format!("cannot make {} in the box: {e}", path.display())))?;
    }
    let source = format!("/proc/self/fd/{}", held.fd.as_raw_fd());
    mount::<str, Path, str, str>(Some(source.as_str()), path, None, MsFlags::MS_BIND, None)
        .map_err(|e| rules(format!("cannot bind {}: {e}", path.display())))?;
    remount(path, read_only)
}

#[cfg(test)]
mod tests {
    use super::unescape;

    #[test]
    fn mount_points_are_unescaped() {
        assert_eq!(unescape("/a\\040b/c"), "/a b/c");
        assert_eq!(unescape("/plain"), "/plain");
        assert_eq!(unescape("/end\\"), "/end\\");
    }
}
