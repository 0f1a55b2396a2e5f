//! gavel's workflows and the plumbing they share.
//!
//! The engine in `gavel-core` knows nothing about issues, drafts or git. This crate is where
//! those live: the document workflow ([`document`]: one draft → review → approve graph) with its
//! kinds brief → issue ([`issue`]) and issue → LLD ([`lld`]), the numbered lineage folder every
//! artifact goes to ([`lineage`]), structured reviewer verdicts ([`verdict`]), issue trackers
//! behind a trait (the `gavel-tracker` crate), spec-driven changes in OpenSpec's layout ([`change`]), and
//! the git runner ([`git`], re-exported from `gavel-exec`).
//! Like the engine, nothing here prints or prompts: gates are handed back to the CLI as values.

pub mod brief;
pub mod caller;
pub mod change;
pub mod disclosure;
/// Crash-safe file writes, from `gavel-core`; re-exported for the workflows' own paths.
pub use gavel_core::fsutil;
pub mod implement;
pub mod kit;
/// The one git runner (scrubbed environment, idempotent commits, worktrees, snapshots), from
/// `gavel-exec`; re-exported so `gavel_workflows::git` keeps working.
pub use gavel_exec::git;
pub mod document;
pub mod issue;
pub mod lineage;
pub mod lld;
pub mod review;
pub mod roles;
pub mod verdict;
/// Finding programs on `PATH`: gavel-llm's one lookup, re-exported for the editor check.
pub use gavel_llm::which;
