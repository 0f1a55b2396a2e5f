//! Running a child process safely: agent CLIs, test commands, anything a workflow starts.
//!
//! The input goes on stdin (never in argv, which Linux caps at 128 KiB). stdout is read line by
//! line as it arrives (the agent CLIs stream JSON events); stderr is collected beside it. Two
//! clocks guard the child: an idle timeout (no output on stdout or stderr for too long) and a
//! total timeout. The child runs in its own process group, and on a timeout, on cancellation
//! and after it exits the whole group is sent SIGKILL with the `killpg` system call (no helper
//! program from PATH), so grandchildren that hold the pipes (a CLI's helpers, a shell it
//! spawned, a test's server) cannot hang gavel or outlive the step.
//!
//! What is kept of the output is capped ([`OutputLimits`]): past the cap the middle is dropped
//! and counted, and the head and the tail are kept. The line callback still sees every line.
//! When a timeout ends the child, the error carries the tails of stdout and stderr, so the
//! person learns what the program was doing when it was stopped.
//!
//! [`run_test`] runs a test command with stdout and stderr in one pipe (as `2>&1` would) and
//! returns a [`TestRun`] (exit code or signal, duration, the combined output capped), a value
//! a workflow journals; a timeout is part of that result, not an error.

pub(crate) mod capped;
mod lookup;
mod supervise;
mod test_run;
#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use self::capped::Capped;
pub use self::lookup::{find_program, on_path};
use self::supervise::{Ending, Supervised};
pub use self::test_run::{TestRun, Timeout, run_test, run_test_with};

/// How much of a timed-out child's stdout and stderr its error keeps (the last bytes of each).
pub const ERROR_TAIL: usize = 64 * 1024;

/// What to run.
#[derive(Debug, Clone)]
pub struct ProcessSpec {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Variables to set (on top of the inherited environment).
    pub env: Vec<(String, String)>,
    /// Variables to remove from the inherited environment.
    pub env_remove: Vec<String>,
    pub cwd: Option<PathBuf>,
    /// Written to the child's stdin, which is then closed.
    pub stdin: String,
    pub idle_timeout: Duration,
    pub total_timeout: Duration,
}

/// The most of each stream that is kept in memory; past it the middle is dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputLimits {
    pub stdout: usize,
    pub stderr: usize,
}

impl Default for OutputLimits {
    /// 32 MiB of stdout (an agent CLI's whole event stream fits many times over) and 1 MiB of
    /// stderr.
    fn default() -> Self {
        Self {
            stdout: 32 << 20,
            stderr: 1 << 20,
        }
    }
}

/// A finished child.
#[derive(Debug, Clone)]
pub struct ProcessOutput {
    pub status: ExitStatus,
    /// Every stdout line, each ending in `\n`, capped at [`OutputLimits::stdout`] (head and
    /// tail kept, a marker line where bytes were dropped).
    pub stdout: String,
    /// stderr as written, capped at [`OutputLimits::stderr`] the same way.
    pub stderr: String,
    /// Set when writing the prompt failed (the child closed stdin early: a broken pipe).
    pub stdin_error: Option<String>,
    pub elapsed: Duration,
    /// Bytes of stdout dropped from the middle (0: `stdout` is complete).
    pub stdout_omitted: u64,
    /// Bytes of stderr dropped from the middle (0: `stderr` is complete).
    pub stderr_omitted: u64,
}

/// Why a child produced no output to judge.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("`{program}` is not installed (not found on PATH)")]
    NotFound { program: String },
    #[error("cannot start `{program}`: {source}")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    /// No output for `after`. `stdout` and `stderr` are the last [`ERROR_TAIL`] bytes of each.
    #[error("`{program}` produced no output for {}s (idle timeout); {}", .after.as_secs(), killed(.kill_error.as_deref()))]
    IdleTimeout {
        program: String,
        after: Duration,
        stdout: String,
        stderr: String,
        /// Set when the process group could not be killed (only the child was).
        kill_error: Option<String>,
    },
    /// Still running after `after`. `stdout` and `stderr` are the last [`ERROR_TAIL`] bytes.
    #[error("`{program}` ran longer than {}s (total timeout); {}", .after.as_secs(), killed(.kill_error.as_deref()))]
    TotalTimeout {
        program: String,
        after: Duration,
        stdout: String,
        stderr: String,
        /// Set when the process group could not be killed (only the child was).
        kill_error: Option<String>,
    },
    #[error("cancelled")]
    Cancelled,
}

/// Kills the process group `pgid` left running by an earlier gavel that died (kill -9) while
/// it waited for it, if it is still there and its leader still works in `cwd` (so a reused
/// process id is never hit). Returns whether a group was killed.
pub fn kill_stale_group(pgid: u32, cwd: &std::path::Path) -> bool {
    let Ok(raw) = i32::try_from(pgid) else {
        return false;
    };
    let leader_cwd = std::fs::read_link(format!("/proc/{pgid}/cwd"));
    let wanted = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
    match leader_cwd {
        Ok(at) if at == wanted => nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(raw),
            nix::sys::signal::Signal::SIGKILL,
        )
        .is_ok(),
        _ => false,
    }
}

fn killed(kill_error: Option<&str>) -> String {
    match kill_error {
        None => "its process group was killed".to_owned(),
        Some(e) => format!("its process group could not be killed ({e}), only the child was"),
    }
}

/// Runs `spec` with the default [`OutputLimits`], calling `on_line` for each stdout line as it
/// arrives.
pub fn run(
    spec: &ProcessSpec,
    cancelled: &dyn Fn() -> bool,
    on_line: &mut dyn FnMut(&str),
) -> Result<ProcessOutput, ProcessError> {
    run_with(spec, OutputLimits::default(), cancelled, on_line)
}

/// Runs `spec`, keeping at most `limits` of its output, calling `on_line` for each stdout line
/// as it arrives (a line longer than the stdout limit arrives in pieces).
pub fn run_with(
    spec: &ProcessSpec,
    limits: OutputLimits,
    cancelled: &dyn Fn() -> bool,
    on_line: &mut dyn FnMut(&str),
) -> Result<ProcessOutput, ProcessError> {
    let mut cmd = supervise::command(spec);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut sup = Supervised::start(cmd, spec)?;
    let stdout = Arc::new(Mutex::new(Capped::new(limits.stdout)));
    let stderr = Arc::new(Mutex::new(Capped::new(limits.stderr)));
    if let Some(pipe) = sup.child.stdout.take() {
        sup.read_lines(pipe, Arc::clone(&stdout), limits.stdout.max(1));
    } else {
        sup.primary_closed();
    }
    if let Some(pipe) = sup.child.stderr.take() {
        sup.read_chunks(pipe, Arc::clone(&stderr), false);
    }
    let ending = sup.watch(spec, cancelled, on_line);
    let finished = sup.finish();
    let program = spec.program.display().to_string();
    let (after, idle) = match ending {
        Ok(Ending::Exited) => {
            let status = finished.status.map_err(|source| ProcessError::Spawn {
                program: program.clone(),
                source,
            })?;
            let (stdout, stdout_omitted) = snapshot(&stdout);
            let (stderr, stderr_omitted) = snapshot(&stderr);
            return Ok(ProcessOutput {
                status,
                stdout,
                stderr,
                stdin_error: finished.stdin_error,
                elapsed: finished.elapsed,
                stdout_omitted,
                stderr_omitted,
            });
        }
        Ok(Ending::Cancelled) => return Err(ProcessError::Cancelled),
        Ok(Ending::Timeout(Timeout::Idle)) => (spec.idle_timeout, true),
        Ok(Ending::Timeout(Timeout::Total)) => (spec.total_timeout, false),
        Err(source) => return Err(ProcessError::Spawn { program, source }),
    };
    let stdout = tail(&stdout);
    let stderr = tail(&stderr);
    let kill_error = finished.kill_error;
    Err(if idle {
        ProcessError::IdleTimeout {
            program,
            after,
            stdout,
            stderr,
            kill_error,
        }
    } else {
        ProcessError::TotalTimeout {
            program,
            after,
            stdout,
            stderr,
            kill_error,
        }
    })
}

/// The kept text of a buffer a reader thread may still hold (a poisoned lock still has data).
fn snapshot(buf: &Mutex<Capped>) -> (String, u64) {
    let buf = buf
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    (buf.text(), buf.omitted())
}

fn tail(buf: &Mutex<Capped>) -> String {
    let buf = buf
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    buf.tail_text(ERROR_TAIL)
}

/// This machine's host name, to name who holds a run's lock in a shared store; empty when the
/// system will not say.
pub fn host_name() -> String {
    nix::unistd::gethostname()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
}
