//! `gavel change impl ID`: a spec-driven change's plan implemented test first (seed 003,
//! WF-R4). The run is the kit's implementation pipeline ([`crate::kit`]) with this workflow's
//! stage: the change's plan stands in for the LLD, a code review follows the lint
//! (`review.rs`: the reviewer's structured review routes the run back to the implementer, to a
//! person, or on to the diff gate), and the change's tasks, `REVIEW.md` and `STATE.yaml` move
//! with the code. Its runs are stored as `change-impl`.

mod review;

use std::path::PathBuf;

use gavel_core::{NodeCtx, NodeError, Transition};

pub use crate::kit::{ChangeTarget, ImplementState, ImplementWorkflow, Moment, Stage, node};

use review::Run;

/// The workflow's name as stored with each run.
pub const WORKFLOW: &str = "change-impl";

/// How to start gavel's MCP server for an agent reviewer: the program and the arguments
/// before `--change-dir` (`gavel`, `["mcp"]`).
#[derive(Debug, Clone)]
pub struct McpLaunch {
    pub program: PathBuf,
    pub args: Vec<String>,
}

/// The reviewer of a change run.
pub struct CodeReviewer {
    pub provider: Box<dyn gavel_llm::Provider>,
    /// Set for an agent CLI: it gets the MCP server and calls `create_review`.
    pub mcp: Option<McpLaunch>,
}

impl Stage for CodeReviewer {
    fn workflow(&self) -> &'static str {
        WORKFLOW
    }

    fn reviewer(&self) -> Option<String> {
        Some(self.provider.describe())
    }

    fn preflight(&self) -> Vec<String> {
        match self.provider.preflight() {
            Ok(()) => Vec::new(),
            Err(e) => vec![format!("reviewer {}: {e}", self.provider.describe())],
        }
    }

    fn at(
        &self,
        moment: Moment,
        wf: &ImplementWorkflow,
        s: &mut ImplementState,
        cx: &mut NodeCtx<'_>,
    ) -> Result<(), NodeError> {
        let run = Run { wf, reviewer: self };
        match moment {
            Moment::Loaded => run.start_change(s, cx),
            Moment::Green => run.tick_tasks(s, cx),
        }
    }

    fn run_node(
        &self,
        wf: &ImplementWorkflow,
        name: &str,
        s: &mut ImplementState,
        cx: &mut NodeCtx<'_>,
    ) -> Option<Result<Transition, NodeError>> {
        let run = Run { wf, reviewer: self };
        Some(match name {
            node::CODE_REVIEW => run.code_review(s, cx),
            node::REVIEW_STOP => run.review_stop(s, cx),
            node::REVIEW_HALT => run.review_halt(s, cx),
            _ => return None,
        })
    }
}
