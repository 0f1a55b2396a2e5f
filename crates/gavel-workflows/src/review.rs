//! The diff review gate as an engine gate: a workflow places it before a commit of code.
//!
//! `gavel diff-gate` (the command) asks at a terminal and exits; a workflow needs the same
//! review inside a run: journaled, resumable after a crash or a closed terminal, and never
//! answered by anything but a person. [`diff_review`] analyses the staged changes of a worktree,
//! writes the report as a lineage artifact, and returns a gate whose presentation asks for the
//! whole word `approve` (a key press is not enough) and whose choices are `approve` and
//! `reject`. The CLI refuses `gavel resume --choice` for such a gate: it is answered only by
//! typing at a terminal. `--auto` never answers it; this module has no auto path at all.
//!
//! The decision is appended to the team's audit log once (journaled as a step, so a replay
//! does not append it again), and the exact line is returned so the workflow can put a copy in
//! its lineage folder.

use std::path::{Path, PathBuf};

use gavel_core::{Choice, Confirm, NodeCtx, NodeError, Presentation, StepError, Transition};
use gavel_diffgate::{AuditEvent, Decision};

/// The gate's kind, as stored in the run.
pub const KIND: &str = "diff-review";

/// Where the review happens and where its records go.
#[derive(Clone)]
pub struct DiffReview<'a> {
    /// The worktree whose staged changes are reviewed, as gavel's git reaches it.
    pub worktree: &'a gavel_exec::git::Git,
    /// The audit log (absolute), appended once per decision.
    pub audit_log: &'a Path,
    /// Where the report is written (absolute), e.g. a numbered lineage file.
    pub report_path: &'a Path,
    /// The report's path as the person sees it (repository-relative).
    pub report_rel: &'a str,
    /// What the answering process was given that looks like an attempt to skip or pre-answer
    /// the gate (`GAVEL_*APPROVE*` variables and the like, see
    /// `gavel_diffgate::bypass_variables`): recorded on the audit line, never obeyed.
    pub bypass_attempts: &'a [String],
    /// Set by a workflow that wrote the code itself: the report shows every file's diff
    /// ([`gavel_diffgate::full_report`]), the paths this says are tests in their own section,
    /// and the terminal shows the whole report. `None`: the `gavel diff-gate` report.
    pub is_test: Option<&'a dyn Fn(&str) -> bool>,
}

/// The report the person reads: every file's diff when the workflow asks for it.
fn make_report(
    r: &DiffReview<'_>,
    analysis: &gavel_diffgate::Analysis,
) -> Result<String, gavel_diffgate::DiffGateError> {
    match r.is_test {
        Some(is_test) => gavel_diffgate::full_report(
            r.worktree,
            analysis,
            &gavel_diffgate::FullReport { is_test },
        ),
        None => gavel_diffgate::report(r.worktree, analysis),
    }
}

/// What the review decided, or the gate to wait at.
#[derive(Debug)]
pub enum Reviewed {
    /// A person typed `approve` (or nothing was staged: `line` is `None` then). `report` is
    /// the report the person was shown, made again from git's index (which nothing but gavel
    /// changes while the gate waits) and kept as a blob, for a lineage written from gavel's
    /// own data rather than copied from the worktree.
    Approved {
        audit_line: Option<String>,
        report: Option<gavel_core::ContentHash>,
    },
    /// A person typed `reject`.
    Rejected { audit_line: String },
    /// Waiting for a person: return this transition from the node.
    Waiting(Transition),
}

/// Runs the diff review inside a node (see the module doc).
pub fn diff_review(cx: &mut NodeCtx<'_>, r: &DiffReview<'_>) -> Result<Reviewed, NodeError> {
    let failed = |e: gavel_diffgate::DiffGateError| NodeError::Failed(e.to_string());
    let analysis = gavel_diffgate::analyze_staged(r.worktree).map_err(failed)?;
    let Some(answer) = cx.answer()? else {
        if analysis.is_empty() {
            return Ok(Reviewed::Approved {
                audit_line: None,
                report: None,
            });
        }
        let report = make_report(r, &analysis).map_err(failed)?;
        crate::fsutil::write_atomic(r.report_path, report.as_bytes()).map_err(|e| {
            NodeError::Failed(format!("cannot write {}: {e}", r.report_path.display()))
        })?;

        let flagged: Vec<String> = analysis.flagged().iter().map(|f| f.path.clone()).collect();
        let mut gate = cx.gate(
            KIND,
            format!(
                "Review the staged changes: {} file(s), {} flagged",
                analysis.files.len(),
                flagged.len()
            ),
            vec![
                Choice::new("approve", 'A', "commit these changes"),
                Choice::new("reject", 'R', "do not commit; the changes stay staged"),
            ],
        );
        if !flagged.is_empty() {
            gate.detail = Some(format!("flagged: {}", flagged.join(", ")));
        }
        gate.artifacts = vec![r.report_rel.to_owned()];
        gate.present = Box::new(Presentation {
            preview: Some(r.report_rel.to_owned()),
            preview_whole: r.is_test.is_some(),
            confirm: Confirm::Word,
            ..Presentation::default()
        });
        return Ok(Reviewed::Waiting(Transition::Gate(gate)));
    };
    let decision = match answer.choice.as_str() {
        "approve" => Decision::Approved,
        _ => Decision::Rejected,
    };
    let (tree, by) = gavel_diffgate::decided_by(r.worktree);
    let event = AuditEvent {
        tree,
        by,
        timestamp: cx.clock().now_rfc3339(),
        decision,
        flagged_files: analysis.flagged().iter().map(|f| f.path.clone()).collect(),
        files_changed: analysis.files.len(),
        repo: r.worktree.root().display().to_string(),
        reason: Some(format!("gate {} of run {}", answer.gate_id, cx.run())),
        bypass_attempted: !r.bypass_attempts.is_empty(),
        bypass_attempts: r.bypass_attempts.to_vec(),
    };
    let audit_log: PathBuf = r.audit_log.to_path_buf();
    let line: Result<String, StepError<gavel_diffgate::DiffGateError>> = cx
        .step("diff-audit", || {
            gavel_diffgate::append_audit(&audit_log, &event)
        });
    let line = line.map_err(|e| NodeError::Failed(e.to_string()))?;
    // The team's shared store keeps it too (once: a replay records the same line again).
    cx.record_audit(&line)?;
    let report = match decision {
        Decision::Approved if !analysis.is_empty() => {
            let text = make_report(r, &analysis).map_err(failed)?;
            Some(cx.put_blob(text.as_bytes())?)
        }
        _ => None,
    };
    Ok(match decision {
        Decision::Approved => Reviewed::Approved {
            audit_line: Some(line),
            report,
        },
        _ => Reviewed::Rejected { audit_line: line },
    })
}
