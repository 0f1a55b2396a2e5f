//! gavel's workflows and the plumbing they share.
//!
//! The engine in `gavel-core` knows nothing about issues, drafts or git. This crate is where
//! those live, one folder per workflow family: the document workflow ([`document`]: one draft →
//! review → approve graph) with its kinds brief → issue ([`issue`]) and issue → LLD ([`lld`]),
//! LLD → code ([`implement`]), and spec-driven changes in OpenSpec's layout ([`change`]: plan,
//! implement, archive). No family imports another's module (`tests/workflows/layering.rs`
//! holds the rule): what they share is in shared modules, [`kit`] (the implementation pipeline,
//! the commit made once), the model caller ([`caller`]), the numbered lineage folder
//! ([`lineage`]), structured reviewer verdicts ([`verdict`]), the diff review ([`review`]) and
//! the rest; issue trackers are behind a trait (the `gavel-tracker` crate), and the git runner
//! ([`git`]) is re-exported from `gavel-exec`.
//! Like the engine, nothing here prints or prompts: gates are handed back to the CLI as values.

/// The workflow families, each with the top-level modules that make it up: a workflow never
/// imports another family's modules (`tests/workflows/layering.rs` holds the rule). `issue`
/// and `lld` are the kinds of the document workflow, and `change` holds its phases (plan,
/// implement, archive), so they import within their family freely. A new workflow is its
/// folder, its `pub mod` line and its entry here.
pub const WORKFLOW_FAMILIES: &[(&str, &[&str])] = &[
    ("document", &["document", "issue", "lld"]),
    ("implement", &["implement"]),
    ("change", &["change"]),
];

/// The modules every family may import; they import no family. `kit` holds what two
/// workflows share (the implementation pipeline, the commit made once).
pub const SHARED_MODULES: &[&str] = &[
    "brief",
    "caller",
    "disclosure",
    "kit",
    "lineage",
    "review",
    "roles",
    "verdict",
];

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
