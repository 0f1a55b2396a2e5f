//! Running other programs for gavel: the one child-process runner and the one git runner.
//!
//! Every workflow runs agents, tests and git, and each of those is a side effect that a crash
//! may interrupt and a replay may repeat. This crate is where that is made safe once, for all of
//! them:
//!
//! - [`process`] runs a child in its own process group under an idle and a total timeout and
//!   SIGKILLs the whole group (with the `killpg` system call) on a timeout, on cancellation and
//!   after it exits, so a grandchild holding the pipes cannot hang gavel. stdout and stderr are
//!   both capped (the head and the tail are kept), the tails survive a timeout, and
//!   [`process::run_test`] returns a [`process::TestRun`] a workflow can journal.
//! - [`runners`] runs a project's real test runner (pytest, cargo, node, go, or any command)
//!   and classifies its result as a [`runners::TestOutcome`] the red and green gates route by:
//!   passed, failed, no tests, build failed, missing import, interrupted, usage error, ...
//! - [`git`] runs the `git` binary with an environment scrubbed of everything that would point
//!   it at another repository or index (so gavel started from a git hook still works on its own
//!   repository), commits idempotently by trailer, adds and removes worktrees named by the
//!   workflow (idempotent on replay), and takes and restores snapshots of a worktree's files as
//!   tree ids (`write-tree` into a temporary index) without touching the real index.
//! - [`confine`] runs an agent's or a test's whole process tree in the box: its own mount, PID
//!   and (for tests) network namespaces, under Linux Landlock, able to write only beneath its
//!   worktree and the folders it is given, with nothing left running when it ends, through a
//!   launcher ([`confine::launcher_main`], the `gavel-confine` binary and `gavel __confine`);
//!   [`sandbox_env`] is the allowlist of variables a boxed process may see.
//!
//! Nothing here prints or prompts; results and errors are values (the launcher, which runs
//! in place of an agent, reports its refusal on stderr before exiting).

pub mod confine;
pub mod git;
pub mod process;
pub mod runners;
pub mod sandbox_env;

#[cfg(test)]
mod testutil;
