//! Every exit code gavel uses, in one place (mirrored in the README).

use std::process::ExitCode;

/// How a gavel process ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The command did what was asked (a run finished, a listing was printed).
    Success = 0,
    /// Something failed: bad input, a failed pre-flight, an unusable state database.
    Error = 1,
    /// The command line or a `--choice` was invalid.
    Usage = 2,
    /// The run is paused at a human gate; `gavel resume RUN --choice ...` continues it.
    Paused = 3,
    /// The run halted (an iteration cap, a failed model call); `gavel resume RUN` after fixing.
    Halted = 4,
    /// A person (or a gate) rejected or aborted the run.
    Rejected = 5,
    /// `gavel diff-gate` without a terminal: nobody can approve, so nothing is committed and the
    /// changes stay staged.
    GateNoTerminal = 6,
    /// Ctrl-C; the run is resumable.
    Interrupted = 130,
}

impl Exit {
    /// The numeric code.
    pub fn code(self) -> u8 {
        self as u8
    }
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> Self {
        ExitCode::from(e.code())
    }
}
