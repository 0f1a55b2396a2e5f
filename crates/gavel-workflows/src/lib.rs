//! gavel's workflows and the plumbing they share.
//!
//! The engine in `gavel-core` knows nothing about issues, drafts or git. This crate is where
//! those live: the brief → issue workflow ([`issue`]), the numbered lineage folder every
//! artifact goes to ([`lineage`]), structured reviewer verdicts ([`verdict`]), issue trackers
//! behind a trait ([`tracker`]), and the few git commands gavel needs ([`git`]). Like the
//! engine, nothing here prints or prompts: gates are handed back to the CLI as values.

pub mod brief;
pub mod fsutil;
pub mod git;
pub mod issue;
pub mod lineage;
pub mod tracker;
pub mod verdict;
/// Finding programs on `PATH`: gavel-llm's one lookup, re-exported for the editor check.
pub use gavel_llm::which;
