//! `gavel implement ISSUE`: an issue's LLD turned into code, test first, in an isolated
//! worktree (seed 002). The run is the kit's implementation pipeline ([`crate::kit`]: load,
//! scaffold, red gate, implement, green gate, lint, diff gate, merge) with this workflow's
//! stage, [`Issue`], which adds no node of its own. Its runs are stored as `implement`, in
//! `{lineage}/active/{n}-impl` until the merge.

use crate::kit::Stage;
pub use crate::kit::{
    CommandSettings, GateRecord, ImplementSettings, ImplementState, ImplementWorkflow, Merged,
    RunnerKind, discard_run, kept_lineage_rel, node, worktree_name,
};

/// The workflow's name as stored with each run.
pub const WORKFLOW: &str = "implement";

/// The implement workflow's stage: the pipeline as it is (the LLD is the design; no code
/// review after the lint).
pub struct Issue;

impl Stage for Issue {
    fn workflow(&self) -> &'static str {
        WORKFLOW
    }
}
