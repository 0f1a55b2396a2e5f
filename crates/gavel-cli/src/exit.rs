//! Every exit code gavel uses, in one place (mirrored in the book (docs/)).

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
    /// Every exit code, in order.
    pub const ALL: [Exit; 8] = [
        Self::Success,
        Self::Error,
        Self::Usage,
        Self::Paused,
        Self::Halted,
        Self::Rejected,
        Self::GateNoTerminal,
        Self::Interrupted,
    ];

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

/// The exit codes, as `gavel --help` lists them (the book has the same table).
pub const EXIT_CODES_HELP: &str = "\
Exit codes:
  0    success (a run finished, a listing printed, a collision or a selection quit)
  1    error: bad input, failed pre-flight, unknown or finished run, unusable state, a locked run
  2    usage: invalid arguments, --choice, --role or provider string; a slug already in use
  3    paused at a human gate: the printed `gavel resume RUN --choice ...` continues it
  4    halted, resumable: an iteration cap, a budget, a failed model call
  5    rejected: a person aborted the run at a gate, or the diff gate was rejected
  6    diff gate without a terminal: nothing is committed, the changes stay staged
  130  interrupted by Ctrl-C: the run is resumable";

/// The answers `gavel resume RUN --choice C` takes, gate by gate (`gavel resume --help`).
pub const CHOICES_HELP: &str = "\
Choices (--choice), by the gate the run waits at (`gavel runs` shows it):
  draft gate (N3)       send      send the draft to the reviewer
                        revise    back to the drafter (with --feedback-file F)
  verdict gate (N5)     approve   file the issue
                        revise    back to the drafter with the verdict (with --feedback-file F)
  filing error (N6)     retry     try filing again
                        edit      back to the verdict gate
                        abort     stop; the lineage stays in active/
  test timeout          retry     run the tests (or lint) again
  (implement, change)   back      rewrite the tests (red) or revise the code (green)
                        abort     stop; the worktree and branch are removed
  review stop           accept    accept an approval that lists critical issues
  (change impl)         review    review the worktree again (after your fixes)
                        fix       one more implementation round with the findings
  plan decision         implement accept the plan; next: gavel change impl
  (change plan)         view      stop here and read the plan first
                        continue  one more revision and challenge
  diff gate, archive    no --choice: run `gavel resume RUN` in a terminal and type approve
                        or reject (a typed word only; `gavel show RUN` says so too)

Exit codes: 0 done, 1 error, 2 usage (a choice the gate does not take), 3 paused at the next
gate, 4 halted, 5 aborted, 130 interrupted. `gavel --help` lists them all.";

/// `gavel diff-gate --help`: what its exit codes mean.
pub const DIFF_GATE_HELP: &str = "\
Answers: type `approve` to let the commit proceed, or `reject`. Nothing else approves: no flag,
variable or setting skips the gate, and attempts to are recorded in the audit log.

Exit codes:
  0    approved (or nothing staged)
  1    error (not a git repository, the audit log cannot be written)
  5    rejected: `reject`, end of input, or no answer within the timeout
  6    no terminal: nobody can approve, nothing is committed, the changes stay staged";

#[cfg(test)]
mod tests {
    use super::*;

    /// `gavel --help` (and so the generated command-line reference) lists every code, and
    /// nothing else.
    #[test]
    fn the_help_lists_every_exit_code() {
        let listed: Vec<u8> = EXIT_CODES_HELP
            .lines()
            .skip(1)
            .filter_map(|l| l.split_whitespace().next()?.parse().ok())
            .collect();
        let all: Vec<u8> = Exit::ALL.iter().map(|e| e.code()).collect();
        assert_eq!(listed, all);
    }
}
