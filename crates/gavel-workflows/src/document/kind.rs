//! What makes one document kind differ from another on the shared graph: a description, as
//! data. brief → issue is `crate::issue::ISSUE`, issue → LLD is `crate::lld::LLD`.

use gavel_core::{NodeCtx, NodeError, Transition};

use super::{DocState, DocWorkflow};

/// N0: loads the input into the run (the brief, the issue) and starts the lineage folder.
pub type LoadFn =
    fn(&DocWorkflow, &mut DocState, &mut NodeCtx<'_>) -> Result<Transition, NodeError>;

/// N6: acts on the approved document (files the issue, commits the LLD).
pub type FinishFn =
    fn(&DocWorkflow, &mut DocState, &mut NodeCtx<'_>) -> Result<Transition, NodeError>;

/// One kind of document.
pub struct DocKind {
    /// The workflow's name as stored with each run (`issue`, `lld`).
    pub name: &'static str,
    /// The name of its N0 node (`N0_load_brief`); runs are started there.
    pub load_node: &'static str,
    pub load: LoadFn,
    /// The name of its N6 node (`N6_file`).
    pub finish_node: &'static str,
    pub finish: FinishFn,
    /// The review rubric's fixed path. No flag, variable or setting changes it, so an agent
    /// cannot substitute a weaker rubric.
    pub rubric_path: &'static str,
    /// The template the drafter fills in unless `[workflows.NAME] template` says otherwise.
    pub template_path: &'static str,
    /// The first line of the drafter's prompt: what to write and how to answer.
    pub drafter_instruction: &'static str,
    /// The heading the input gets in the drafter's prompt (`Brief`, `Issue`).
    pub input_heading: &'static str,
    /// What `approve` does, for the verdict gate (`file the issue`).
    pub approve_label: &'static str,
    /// Whether pre-flight checks that the tracker can file (only a kind that files does).
    pub checks_tracker: bool,
}

impl std::fmt::Debug for DocKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DocKind")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}
