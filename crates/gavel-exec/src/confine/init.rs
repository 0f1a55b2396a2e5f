//! The box's init: the first process of the step's PID namespace.
//!
//! The launcher cannot become the program itself once it has made a PID namespace (only its
//! next child enters it), so it starts itself again with `--init`; that process is PID 1 of
//! the namespace. It starts the program, reaps every process that is orphaned to it while the
//! program runs (so none lingers as a zombie), and exits as soon as the program has exited,
//! with the program's exit code (128 + the signal's number when a signal ended it, as a shell
//! reports it). Its exit makes the kernel kill whatever is left in the namespace: a daemon a
//! test started with `setsid`, a server that forked into the background. So when the launcher
//! returns, nothing the step started still runs, and the pipe the runner reads from closes.

use std::ffi::OsString;
use std::process::Command;

use nix::errno::Errno;
use nix::sys::wait::{WaitStatus, waitpid};
use nix::unistd::Pid;

use super::ConfineError;

/// Runs `program args` and reaps until it exits; returns its exit code (a signal as 128 + its
/// number), or why it could not be started.
pub(crate) fn run(program: &OsString, args: &[OsString]) -> Result<u8, ConfineError> {
    let child = Command::new(program)
        .args(args)
        .spawn()
        .map_err(|source| ConfineError::Exec {
            program: program.to_string_lossy().into_owned(),
            source,
        })?;
    let main = Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
    // `child` is never waited through std: every exit in the namespace is reaped below.
    drop(child);
    loop {
        match waitpid(Pid::from_raw(-1), None) {
            Ok(WaitStatus::Exited(pid, code)) if pid == main => {
                return Ok(u8::try_from(code & 0xff).unwrap_or(u8::MAX));
            }
            Ok(WaitStatus::Signaled(pid, signal, _)) if pid == main => {
                return Ok(128u8.saturating_add(signal as u8));
            }
            // An orphan reaped, or a stop/continue report.
            Ok(_) | Err(Errno::EINTR) => {}
            Err(e) => {
                return Err(ConfineError::Rules {
                    message: format!("the box's init lost its program: {e}"),
                });
            }
        }
    }
}
