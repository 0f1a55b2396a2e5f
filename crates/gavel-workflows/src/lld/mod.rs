//! issue → low-level design (seed 001's "Adaptation Guide for LLD Workflow"): the second kind
//! of the shared document workflow ([`crate::document`]).
//!
//! ```text
//! N0_load_issue → N1_preflight → N2_draft → N3_draft_gate ─send→ N4_review → N5_verdict_gate ─approve→ N6_approve → end
//! ```
//!
//! Its own parts: N0 reads the issue from the tracker (a journaled step, so a resumed run never
//! reads it again and designs for what it first read), saves it as `001-issue.md` and the
//! validated context's manifest as `002-context.json`; N6 writes the approved design to
//! `docs/lld/active/LLD-{issue#}.md`, `NNN-approved.json` into the lineage, moves the lineage
//! to `done/{issue#}-lld/` and commits all of it once.

mod approve;
pub mod prompts;

use gavel_core::ArtifactKind;
use gavel_core::{NodeCtx, NodeError, StepError, Transition};

use crate::document::{ContextRecord, DesignFor, DocKind, DocState, DocWorkflow, goto, io_failed};
use crate::kit::blob_text;
use gavel_tracker::TrackedIssue;

/// The workflow's name as stored with each run.
pub const WORKFLOW: &str = "lld";

/// The review rubric's fixed path. No flag, variable or setting changes it.
pub const RUBRIC_PATH: &str = "docs/skills/0702c-lld-review-prompt.md";

/// The LLD template the drafter fills in (written by `gavel init`).
pub const TEMPLATE_PATH: &str = "docs/templates/0102-feature-lld-template.md";

/// Where approved designs go.
pub const LLD_DIR: &str = "docs/lld/active";

/// Node names, in graph order.
pub mod node {
    pub const LOAD_ISSUE: &str = "N0_load_issue";
    pub use crate::document::node::*;
    pub const APPROVE: &str = "N6_approve";
}

/// The issue → LLD kind.
pub static LLD: DocKind = DocKind {
    name: WORKFLOW,
    load_node: node::LOAD_ISSUE,
    load: load_issue,
    finish_node: node::APPROVE,
    finish: approve::approve,
    rubric_path: RUBRIC_PATH,
    template_path: TEMPLATE_PATH,
    drafter_instruction: "You write low-level designs. Fill in the template below for the issue: every section, concretely, for this repository. Answer with the design only, in Markdown, starting with its `# ` title line.",
    input_heading: "Issue",
    approve_label: "approve the LLD and commit it",
    checks_tracker: false,
};

/// The approved design's path for issue `number` (`docs/lld/active/LLD-12.md`).
pub fn lld_path(number: u64) -> String {
    format!("{LLD_DIR}/LLD-{number}.md")
}

/// The slug of the LLD run of issue `number` (its lineage folder `active/{n}-lld/`).
pub fn slug_for(number: u64) -> String {
    format!("{number}-lld")
}

/// The issue as the drafter and the lineage see it.
pub fn issue_markdown(issue: &TrackedIssue) -> String {
    let mut text = format!("# {}\n\n", issue.title.trim());
    text.push_str(&format!("**Issue:** #{} ({})\n", issue.number, issue.url));
    text.push_str(&format!("**State:** {}\n", issue.state));
    if !issue.labels.is_empty() {
        text.push_str(&format!("**Labels:** {}\n", issue.labels.join(", ")));
    }
    text.push('\n');
    text.push_str(issue.body.trim());
    text.push('\n');
    text
}

/// N0: read the issue (once, journaled), save it and the context manifest to the lineage.
fn load_issue(
    wf: &DocWorkflow,
    s: &mut DocState,
    cx: &mut NodeCtx<'_>,
) -> Result<Transition, NodeError> {
    let reference = s.brief_file.clone();
    let read: Result<TrackedIssue, StepError<gavel_tracker::TrackerError>> =
        cx.step("read-issue", || wf.tracker.get_issue(&reference));
    let issue = match read {
        Ok(i) => i,
        Err(StepError::Step(e)) => {
            return Ok(Transition::Halt {
                reason: format!(
                    "cannot read issue {reference} from {}: {e}",
                    wf.tracker.describe()
                ),
            });
        }
        Err(e) => return Err(crate::kit::commit::step_failed(e)),
    };
    let text = issue_markdown(&issue);
    s.brief = Some(cx.put_blob(text.as_bytes())?);
    s.brief_text = None;
    s.design_for = Some(DesignFor {
        reference,
        number: issue.number,
        url: issue.url.clone(),
        title: issue.title.clone(),
    });
    let lineage = wf.lineage(s);
    let rel = lineage
        .write(1, "issue.md", text.as_bytes())
        .map_err(|e| io_failed("write", &lineage.artifact_rel(1, "issue.md"), e))?;
    s.file_counter = 1;
    cx.artifact(
        ArtifactKind::Brief,
        rel.to_string_lossy().into_owned(),
        text.as_bytes(),
        &[],
    )?;
    if let Some(context) = s.context_text.take() {
        let manifest = s.context_manifest.take().unwrap_or_default();
        let (files, tokens) = counts(&manifest);
        let rel = lineage
            .write(2, "context.json", manifest.as_bytes())
            .map_err(|e| io_failed("write", &lineage.artifact_rel(2, "context.json"), e))?;
        s.file_counter = 2;
        let path = rel.to_string_lossy().into_owned();
        s.context = Some(ContextRecord {
            manifest: path.clone(),
            text: cx.put_blob(context.as_bytes())?,
            files,
            tokens,
        });
        cx.artifact(ArtifactKind::Context, path, manifest.as_bytes(), &[])?;
    }
    goto(node::PREFLIGHT)
}

/// Files and tokens of a context manifest.
fn counts(manifest: &str) -> (usize, u64) {
    let v: serde_json::Value = serde_json::from_str(manifest).unwrap_or_default();
    (
        v["files"].as_array().map_or(0, Vec::len),
        v["total_tokens"].as_u64().unwrap_or(0),
    )
}

/// The issue number of an LLD run (set by N0).
fn number_of(s: &DocState) -> Result<u64, NodeError> {
    s.design_for
        .as_ref()
        .map(|d| d.number)
        .ok_or_else(|| NodeError::Failed("the run has not read its issue".into()))
}

/// The draft as approved, without gavel's own comment lines.
fn approved_text(cx: &NodeCtx<'_>, s: &DocState) -> Result<String, NodeError> {
    let draft = s
        .draft
        .as_ref()
        .ok_or_else(|| NodeError::Failed("no draft to approve".into()))?;
    Ok(crate::document::strip_gavel_comments(&blob_text(
        cx,
        Some(&draft.hash),
    )?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_reads_as_markdown_with_its_reference() {
        let text = issue_markdown(&TrackedIssue {
            number: 12,
            title: "Dark mode".into(),
            body: "Too bright.\n".into(),
            labels: vec!["ui".into(), "enhancement".into()],
            state: "open".into(),
            url: "https://github.com/o/r/issues/12".into(),
        });
        assert_eq!(
            text,
            "# Dark mode\n\n**Issue:** #12 (https://github.com/o/r/issues/12)\n**State:** open\n**Labels:** ui, enhancement\n\nToo bright.\n"
        );
        assert_eq!(lld_path(12), "docs/lld/active/LLD-12.md");
        assert_eq!(slug_for(12), "12-lld");
        assert_eq!(counts("{\"files\":[{},{}],\"total_tokens\":9}"), (2, 9));
    }
}
