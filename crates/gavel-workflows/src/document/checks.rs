//! gavel's own checks of a draft, at the draft gate (N3) before any reviewer sees it: the
//! kind's template and the rubric's required sections ([`crate::kit::checks`]) against the
//! draft, and the draft against the one before. Each draft is checked once; failing findings
//! are recorded as gavel's own (a `NNN-checks.md` in the lineage and a timeline note, never a
//! verdict) and go back to the drafter in auto mode, or to the person at the gate.

use std::fs;

use gavel_core::{ArtifactKind, ContentHash, EventKind, NodeCtx, NodeError, StepError};
use serde::{Deserialize, Serialize};

use super::front_matter::{self, Value};
use super::{Artifact, DocState, DocWorkflow, io_failed};
use crate::kit::blob_text;
use crate::kit::checks::{self, TemplateShape};

/// gavel's checks of one draft.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChecksRecord {
    /// The draft checked, as gavel read it.
    pub draft: ContentHash,
    /// Its lineage file (two drafts may have the same content: the second is then checked
    /// too, and found to be no revision).
    #[serde(default)]
    pub draft_path: String,
    /// What failed (empty: the draft passed).
    pub findings: Vec<String>,
    /// The lineage file the findings were written to (only when some failed).
    pub path: Option<String>,
}

impl ChecksRecord {
    /// Whether this record is about `draft` as it is now.
    pub fn is_about(&self, draft: &Artifact) -> bool {
        self.draft == draft.hash && self.draft_path == draft.path
    }

    /// The findings, when this record is about `draft` and some failed.
    pub fn failing_for(&self, draft: &Artifact) -> Option<&[String]> {
        (self.is_about(draft) && !self.findings.is_empty()).then_some(self.findings.as_slice())
    }
}

impl DocWorkflow {
    /// What every draft of this run must satisfy: the template's shape and the sections the
    /// rubric requires. An unreadable template, or a rubric whose `Required sections` list is
    /// malformed, is an error naming the file.
    pub(super) fn draft_shape(&self) -> Result<TemplateShape, String> {
        let template_rel = self.settings.template_path.to_string_lossy().into_owned();
        let template = fs::read_to_string(self.root().join(&template_rel))
            .map_err(|e| format!("cannot read the template {template_rel}: {e}"))?;
        let mut shape = TemplateShape::of(&template);
        shape.require(&self.rubric_sections()?);
        Ok(shape)
    }

    /// The sections the kind's rubric requires (none when it has no such list, or no rubric:
    /// pre-flight reports a missing rubric).
    pub(super) fn rubric_sections(&self) -> Result<Vec<String>, String> {
        let path = self.root().join(self.kind.rubric_path);
        let Ok(rubric) = fs::read_to_string(&path) else {
            return Ok(Vec::new());
        };
        checks::rubric_sections(&rubric).map_err(|e| {
            format!(
                "{}: {e} (see `Required sections` in the book's chapter on the {} workflow)",
                self.kind.rubric_path, self.kind.name
            )
        })
    }

    /// Checks the current draft: a draft already checked gets its recorded findings back.
    /// Failing findings are written to the lineage and noted in the timeline, as gavel's own,
    /// once per node visit (a journaled step), however often the gate is shown.
    pub(super) fn check_draft(
        &self,
        s: &mut DocState,
        cx: &mut NodeCtx<'_>,
    ) -> Result<Vec<String>, NodeError> {
        let draft = s
            .draft
            .clone()
            .ok_or_else(|| NodeError::Failed("no draft to check".into()))?;
        if let Some(done) = &s.checks
            && done.is_about(&draft)
        {
            return Ok(done.findings.clone());
        }
        let shape = self.draft_shape().map_err(NodeError::Failed)?;
        let text = blob_text(cx, Some(&draft.hash))?;
        let previous = match &s.previous_draft {
            Some(h) => Some(blob_text(cx, Some(h))?),
            None => None,
        };
        let findings = checks::check_draft(&text, &shape, previous.as_deref());
        let mut path = None;
        if !findings.is_empty() {
            // A gate does not checkpoint the state, so a draft gate shown again (or answered)
            // visits this node afresh: the record is a journaled step, written and noted once.
            let content = self.checks_file(&draft.path, &findings);
            s.file_counter += 1;
            let lineage = self.lineage(s);
            let n = s.file_counter;
            let mut written = false;
            let step: Result<String, StepError<std::io::Error>> = cx.step("checks", || {
                written = true;
                lineage
                    .write(n, "checks.md", content.as_bytes())
                    .map(|rel| rel.to_string_lossy().into_owned())
            });
            let rel = match step {
                Ok(rel) => rel,
                Err(StepError::Step(e)) => {
                    return Err(io_failed("write", &lineage.artifact_rel(n, "checks.md"), e));
                }
                Err(e) => return Err(crate::kit::commit::step_failed(e)),
            };
            if written {
                cx.artifact(ArtifactKind::Feedback, rel.clone(), content.as_bytes(), &[])?;
                cx.event(EventKind::Note {
                    text: format!(
                        "gavel's checks: {} finding(s) in {} ({rel}): {}",
                        findings.len(),
                        draft.path,
                        findings.join("; ")
                    ),
                });
            }
            path = Some(rel);
        }
        s.checks = Some(ChecksRecord {
            draft: draft.hash,
            draft_path: draft.path,
            findings: findings.clone(),
            path,
        });
        Ok(findings)
    }

    /// `NNN-checks.md`: who checked what, then one finding per line.
    fn checks_file(&self, draft: &str, findings: &[String]) -> String {
        let mut text = front_matter::render(&[
            ("checked_by", Value::Text("gavel".into())),
            ("draft", Value::Text(draft.to_owned())),
            (
                "template",
                Value::Text(self.settings.template_path.to_string_lossy().into_owned()),
            ),
            ("rubric", Value::Text(self.kind.rubric_path.to_owned())),
        ]);
        text.push_str(&format!(
            "# gavel's checks of {}\n\ngavel's own findings, from plain code before any reviewer saw the draft (not a reviewer's verdict):\n\n",
            draft.rsplit('/').next().unwrap_or(draft)
        ));
        for f in findings {
            text.push_str(&format!("- {f}\n"));
        }
        text
    }
}

/// The gate's words for failing findings.
pub(super) fn gate_detail(findings: &[String]) -> String {
    let mut text = format!(
        "gavel's checks found {} problem(s) in this draft (its own findings, before any reviewer):",
        findings.len()
    );
    for f in findings {
        text.push_str(&format!("\n  - {f}"));
    }
    text.push_str("\nrevise sends them to the drafter; send passes the draft to the reviewer as it is (edit it first if you like).");
    text
}
