//! Running a test command and recording how it went as a value a workflow journals.
//!
//! A test run is a side effect like a model call: its result is journaled once and replayed,
//! never re-run on resume. So everything a later node or a person needs is in [`TestRun`]: the
//! exit code or the signal, how long it took, whether a clock stopped it, and the combined
//! output (stdout and stderr in one pipe, interleaved as a terminal would show them), capped
//! with its head and tail kept. A workflow may store the output as a blob of its own.

use std::os::unix::process::ExitStatusExt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::capped::Capped;
use super::supervise::{self, Ending, Supervised};
use super::{ProcessError, ProcessSpec};

/// Which clock stopped a child.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Timeout {
    /// No output for the spec's idle timeout.
    Idle,
    /// Longer than the spec's total timeout.
    Total,
}

/// How a test command ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestRun {
    /// The exit code, when the command exited on its own.
    pub exit_code: Option<i32>,
    /// The signal that ended it (9, SIGKILL, when a clock stopped it).
    pub signal: Option<i32>,
    /// From start until it ended or was killed.
    pub duration: Duration,
    /// stdout and stderr as one stream, capped (head and tail kept, a marker line between).
    pub output: String,
    /// Bytes dropped from the middle of `output` (0: it is complete).
    #[serde(default)]
    pub output_omitted: u64,
    /// Set when a clock stopped the command.
    #[serde(default)]
    pub timed_out: Option<Timeout>,
}

impl TestRun {
    /// Exited with code 0 before any clock ran out.
    #[must_use]
    pub fn passed(&self) -> bool {
        self.exit_code == Some(0) && self.timed_out.is_none()
    }
}

/// Runs the test command `spec`, keeping at most `limit` bytes of its combined output. A
/// timeout is part of the result (the group is killed, `timed_out` says which clock); only a
/// command that cannot start or a cancellation is an error.
pub fn run_test(
    spec: &ProcessSpec,
    limit: usize,
    cancelled: &dyn Fn() -> bool,
) -> Result<TestRun, ProcessError> {
    run_test_with(spec, limit, cancelled, &mut |_| {})
}

/// [`run_test`], telling `on_start` the child's process id (also its process group's) as soon
/// as it runs, so a caller can record it and, after its own crash, kill what it left behind
/// ([`kill_stale_group`](super::kill_stale_group)).
pub fn run_test_with(
    spec: &ProcessSpec,
    limit: usize,
    cancelled: &dyn Fn() -> bool,
    on_start: &mut dyn FnMut(u32),
) -> Result<TestRun, ProcessError> {
    let program = spec.program.display().to_string();
    let spawn_error = |source| ProcessError::Spawn {
        program: program.clone(),
        source,
    };
    let (reader, writer) = std::io::pipe().map_err(spawn_error)?;
    let mut cmd = supervise::command(spec);
    cmd.stdout(writer.try_clone().map_err(spawn_error)?)
        .stderr(writer);
    let mut sup = Supervised::start(cmd, spec)?;
    on_start(sup.child.id());
    let output = Arc::new(Mutex::new(Capped::new(limit)));
    sup.read_chunks(reader, Arc::clone(&output), true);
    let ending = sup.watch(spec, cancelled, &mut |_| {});
    let finished = sup.finish();
    let timed_out = match ending.map_err(spawn_error)? {
        Ending::Exited => None,
        Ending::Cancelled => return Err(ProcessError::Cancelled),
        Ending::Timeout(which) => Some(which),
    };
    let status = finished.status.map_err(spawn_error)?;
    let (output, output_omitted) = super::snapshot(&output);
    Ok(TestRun {
        exit_code: status.code(),
        signal: status.signal(),
        duration: finished.elapsed,
        output,
        output_omitted,
        timed_out,
    })
}
