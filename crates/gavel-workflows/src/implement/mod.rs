//! LLD → code, test first, in an isolated worktree (seed 002): the pieces the implementation
//! workflow is built from.
//!
//! - [`answer`]: the strict "write these files" format of a text-only model;
//! - [`guard`]: a model step judged by the files it changed (tests only at the scaffold, no
//!   test at the implementation, no symlink out, no submodule);
//! - [`fingerprint`]: the person's checkout before and after every agent step.

pub mod answer;
pub mod fingerprint;
pub mod guard;
