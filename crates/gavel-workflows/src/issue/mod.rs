//! brief → issue (seed documents 000 and 001, in gavel's terms): the first kind of the shared
//! document workflow ([`crate::document`]).
//!
//! ```text
//! N0_load_brief → N1_preflight → N2_draft → N3_draft_gate ─send→ N4_review → N5_verdict_gate ─approve→ N6_file → end
//! ```
//!
//! Its own parts: N0 stores the person's brief as `001-brief.md`, and N6 files the approved
//! draft on the tracker, then commits the lineage. Everything between is the shared graph.

mod filing;
pub mod prompts;

use gavel_core::ArtifactKind;
use gavel_core::{NodeCtx, NodeError, Transition};

pub use crate::document::{
    Artifact, CallObserver, DocSettings as IssueSettings, DocState as IssueState,
    DocWorkflow as IssueWorkflow, Filed, Roles, VerdictRecord, strip_gavel_comments,
};
pub use filing::{parse_labels, parse_title};

use crate::document::{DocKind, DocState, DocWorkflow, goto, io_failed};
use crate::kit::blob_text;

/// The workflow's name as stored with each run.
pub const WORKFLOW: &str = "issue";

/// The review rubric's fixed path. No flag, variable or setting changes it, so an agent cannot
/// substitute a weaker rubric.
pub const RUBRIC_PATH: &str = "docs/skills/0701c-issue-review-prompt.md";

/// The issue template the drafter fills in (written by `gavel init`).
pub const TEMPLATE_PATH: &str = "docs/templates/0101-issue-template.md";

/// Node names, in graph order.
pub mod node {
    pub const LOAD_BRIEF: &str = "N0_load_brief";
    pub use crate::document::node::*;
    pub const FILE: &str = "N6_file";
}

/// The brief → issue kind.
pub static ISSUE: DocKind = DocKind {
    name: WORKFLOW,
    load_node: node::LOAD_BRIEF,
    load: load_brief,
    finish_node: node::FILE,
    finish: filing::file,
    rubric_path: RUBRIC_PATH,
    template_path: TEMPLATE_PATH,
    drafter_instruction: "You write GitHub issues. Fill in the template below from the brief. Answer with the issue only, in Markdown, starting with its `# ` title line, and keep a `**Labels:**` line.",
    input_heading: "Brief",
    approve_label: "file the issue",
    checks_tracker: true,
};

/// N0: store the brief and start the lineage folder with `001-brief.md`.
fn load_brief(
    wf: &DocWorkflow,
    s: &mut DocState,
    cx: &mut NodeCtx<'_>,
) -> Result<Transition, NodeError> {
    let text = match s.brief_text.take() {
        Some(t) => t,
        None => blob_text(cx, s.brief.as_ref())?,
    };
    s.brief = Some(cx.put_blob(text.as_bytes())?);
    let lineage = wf.lineage(s);
    let rel = lineage
        .write(1, "brief.md", text.as_bytes())
        .map_err(|e| io_failed("write", &lineage.artifact_rel(1, "brief.md"), e))?;
    s.file_counter = 1;
    cx.artifact(
        ArtifactKind::Brief,
        rel.to_string_lossy().into_owned(),
        text.as_bytes(),
        &[],
    )?;
    goto(node::PREFLIGHT)
}
