//! The launcher's namespaces: what Landlock cannot do alone.
//!
//! Landlock decides which folders a process tree may write, but it cannot carve one file out
//! of a writable folder (the worktree's `.git` pointer), give the tree a `/dev/shm` of its own,
//! take the network away, or make sure that no process of the step outlives it. Linux
//! namespaces can, and the launcher enters them before it applies Landlock (which forbids
//! mounting afterwards):
//!
//! - a **mount namespace**, made private so nothing propagates back to the person's system, in
//!   which each `--ro` path is bind-mounted read-only over itself (a read-only mount wins over
//!   any Landlock grant: the file cannot be written, truncated, renamed or replaced) and
//!   `/dev/shm` is a fresh, small tmpfs that dies with the step;
//! - a **PID namespace**, whose first process is the launcher's init ([`super::init`]): it
//!   mounts the namespace's own `/proc` (so gavel's environment cannot be read through
//!   `/proc/PID/environ`); when the program ends, init ends, and the kernel kills every process
//!   left in the namespace, those that left the process group with `setsid` included;
//! - a **network namespace** when the network is not allowed: only a loopback interface (up, so
//!   a test can still serve itself on 127.0.0.1), no route out;
//! - a **user namespace** first when gavel does not run as root, mapping the person's own user
//!   and group to themselves, so the steps above need no privilege.
//!
//! Everything here is a plain system call through `nix`'s safe wrappers; the one message the
//! kernel needs to bring the loopback interface up is built by hand ([`loopback_up`]).

use nix::errno::Errno;
use nix::mount::{MsFlags, mount};
use nix::sched::{CloneFlags, unshare};
use nix::sys::socket::{
    AddressFamily, MsgFlags, NetlinkAddr, SockFlag, SockProtocol, SockType, recv, sendto, socket,
};
use nix::unistd::{getegid, geteuid};

use super::ConfineError;

/// Who the program runs as once the box is set up: `None` when gavel runs as root (no user
/// namespace), else the person's user and group, which [`become_person`] maps back.
pub(crate) type Person = Option<(u32, u32)>;

/// Enters new mount and PID namespaces, and a network namespace unless `network` is allowed
/// (with a user namespace first when not root, in which this process is root, so that the
/// box's init it starts next keeps the right to mount `/proc`: capabilities do not survive
/// `exec` for any other user). The next child this process starts is the first process of the
/// new PID namespace.
pub(crate) fn enter(network: bool) -> Result<Person, ConfineError> {
    let mut flags = CloneFlags::CLONE_NEWNS | CloneFlags::CLONE_NEWPID | CloneFlags::CLONE_NEWIPC;
    if !network {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    let root = geteuid().is_root();
    let (uid, gid) = (geteuid(), getegid());
    if !root {
        flags |= CloneFlags::CLONE_NEWUSER;
    }
    unshare(flags).map_err(|e| ConfineError::Unsupported {
        reason: format!(
            "cannot create the namespaces that box a step ({e}){}",
            if root {
                String::new()
            } else {
                "; unprivileged user namespaces may be disabled here \
                 (sysctl kernel.unprivileged_userns_clone, user.max_user_namespaces, or an \
                 AppArmor restriction)"
                    .to_owned()
            }
        ),
    })?;
    if !root {
        // Only this user and group exist inside, as root while the box is set up; `setgroups`
        // must be denied before the group map can be written without privilege.
        write_proc("/proc/self/setgroups", "deny")?;
        write_proc("/proc/self/uid_map", &format!("0 {uid} 1"))?;
        write_proc("/proc/self/gid_map", &format!("0 {gid} 1"))?;
    }
    // Nothing mounted from here on may reach the person's mount table.
    mount::<str, str, str, str>(None, "/", None, MsFlags::MS_REC | MsFlags::MS_PRIVATE, None)
        .map_err(|e| rules(format!("cannot make the mount namespace private: {e}")))?;
    if !network {
        loopback_up()?;
    }
    Ok((!root).then_some((uid.as_raw(), gid.as_raw())))
}

/// Called by the box's init once its own mounts are made: a nested user namespace in which
/// the person is themself again (`uid` and `gid` mapped onto the outer namespace's root,
/// which is them), so the program runs with their identity and no capability at all.
pub(crate) fn become_person(uid: u32, gid: u32) -> Result<(), ConfineError> {
    unshare(CloneFlags::CLONE_NEWUSER).map_err(|e| ConfineError::Unsupported {
        reason: format!("cannot give the program the person's own user back: {e}"),
    })?;
    write_proc("/proc/self/setgroups", "deny")?;
    write_proc("/proc/self/uid_map", &format!("{uid} 0 1"))?;
    write_proc("/proc/self/gid_map", &format!("{gid} 0 1"))?;
    Ok(())
}

fn write_proc(path: &str, text: &str) -> Result<(), ConfineError> {
    std::fs::write(path, text).map_err(|e| ConfineError::Unsupported {
        reason: format!("cannot write {path} for the user namespace: {e}"),
    })
}

fn rules(message: String) -> ConfineError {
    ConfineError::Rules { message }
}

/// Called by the box's init first: it dies with the launcher (`PR_SET_PDEATHSIG`: a launcher
/// killed by gavel's timeout or Ctrl-C takes the whole box with it), and it leaves gavel's
/// session, so the box has no controlling terminal (nothing it does can type into gavel's
/// terminal with `TIOCSTI`, or read from it).
pub(crate) fn detach() -> Result<(), ConfineError> {
    nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)
        .map_err(|e| rules(format!("cannot tie the box to its launcher: {e}")))?;
    nix::unistd::setsid()
        .map_err(|e| rules(format!("cannot leave gavel's terminal session: {e}")))?;
    Ok(())
}

/// Mounts a fresh `/proc` for the box's PID namespace; called by the box's init (the first
/// process of that namespace, whose view a proc mount takes). The box then sees only its own
/// processes: gavel's environment (`/proc/PID/environ`) and the person's other processes are
/// out of reach, and an outside process cannot be named to `ptrace` or `kill`.
pub(crate) fn private_proc() -> Result<(), ConfineError> {
    mount(
        Some("proc"),
        "/proc",
        Some("proc"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
        None::<&str>,
    )
    .map_err(|e| rules(format!("cannot mount the box's own /proc: {e}")))
}

/// Brings the new network namespace's loopback interface up: one `RTM_NEWLINK` request over a
/// route netlink socket (`struct nlmsghdr` then `struct ifinfomsg`, native byte order, as
/// `ip link set lo up` sends it), and its acknowledgement read back.
fn loopback_up() -> Result<(), ConfineError> {
    const RTM_NEWLINK: u16 = 16;
    const NLM_F_REQUEST: u16 = 1;
    const NLM_F_ACK: u16 = 4;
    const NLMSG_ERROR: u16 = 2;
    const IFF_UP: u32 = 1;
    let failed = |e: Errno| rules(format!("cannot bring up the loopback interface: {e}"));
    let index = nix::net::if_::if_nametoindex("lo").map_err(failed)?;
    let mut msg = Vec::with_capacity(32);
    msg.extend_from_slice(&32u32.to_ne_bytes()); // nlmsg_len
    msg.extend_from_slice(&RTM_NEWLINK.to_ne_bytes()); // nlmsg_type
    msg.extend_from_slice(&(NLM_F_REQUEST | NLM_F_ACK).to_ne_bytes()); // nlmsg_flags
    msg.extend_from_slice(&1u32.to_ne_bytes()); // nlmsg_seq
    msg.extend_from_slice(&0u32.to_ne_bytes()); // nlmsg_pid
    msg.push(0); // ifi_family: AF_UNSPEC
    msg.push(0); // padding
    msg.extend_from_slice(&0u16.to_ne_bytes()); // ifi_type
    msg.extend_from_slice(&(index as i32).to_ne_bytes()); // ifi_index
    msg.extend_from_slice(&IFF_UP.to_ne_bytes()); // ifi_flags
    msg.extend_from_slice(&IFF_UP.to_ne_bytes()); // ifi_change
    let fd = socket(
        AddressFamily::Netlink,
        SockType::Raw,
        SockFlag::SOCK_CLOEXEC,
        SockProtocol::NetlinkRoute,
    )
    .map_err(failed)?;
    use std::os::fd::AsRawFd;
    sendto(
        fd.as_raw_fd(),
        &msg,
        &NetlinkAddr::new(0, 0),
        MsgFlags::empty(),
    )
    .map_err(failed)?;
    let mut reply = [0u8; 256];
    let n = recv(fd.as_raw_fd(), &mut reply, MsgFlags::empty()).map_err(failed)?;
    // The acknowledgement is an NLMSG_ERROR message whose error number is 0.
    if n >= 20 && u16::from_ne_bytes([reply[4], reply[5]]) == NLMSG_ERROR {
        let code = i32::from_ne_bytes([reply[16], reply[17], reply[18], reply[19]]);
        if code == 0 {
            return Ok(());
        }
        return Err(failed(Errno::from_raw(-code)));
    }
    Err(rules(
        "cannot bring up the loopback interface: the kernel's answer was not an acknowledgement"
            .to_owned(),
    ))
}
