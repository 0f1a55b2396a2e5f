//! gavel's workflows and the plumbing they share.
//!
//! The engine in `gavel-core` knows nothing about issues, drafts or git. This crate is where
//! those live: the brief → issue workflow ([`issue`]), the numbered lineage folder every
//! artifact goes to ([`lineage`]), structured reviewer verdicts ([`verdict`]), issue trackers
//! behind a trait ([`tracker`]), and the few git commands gavel needs ([`git`]). Like the
//! engine, nothing here prints or prompts: gates are handed back to the CLI as values.

pub mod brief;
pub mod caller;
pub mod fsutil;
pub mod git;
pub mod issue;
pub mod lineage;
pub mod review;
pub mod roles;
pub mod tracker;
pub mod verdict;
pub mod which;
