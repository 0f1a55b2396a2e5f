//! The document workflow's two gates: N3, where a person reads the draft (with gavel's own
//! findings on it, `checks.rs`) before any other model sees it, and N5, where the verdict
//! routes the run and a person may override it (an unparseable verdict always waits for one);
//! and re-reading what the person edited there.

use gavel_core::ArtifactKind;
use std::fs;

use gavel_core::{
    Choice, ContentHash, EventKind, GateAnswer, NodeCtx, NodeError, Presentation, Transition,
};

use super::nodes::strip_front_matter;
use super::{DocState, DocWorkflow, goto, io_failed, node};
use crate::verdict::Verdict;

impl DocWorkflow {
    /// N3: a person reads the draft before any other model sees it.
    pub(super) fn draft_gate(
        &self,
        s: &mut DocState,
        cx: &mut NodeCtx<'_>,
    ) -> Result<Transition, NodeError> {
        let draft = s
            .draft
            .clone()
            .ok_or_else(|| NodeError::Failed("no draft to review".into()))?;
        let gate_id = cx.gate("draft", "", Vec::new()).id;
        let findings = self.check_draft(s, cx)?;
        if s.auto {
            // A draft that fails gavel's own checks goes back to the drafter with them: no
            // reviewer call, one more draft against the cap.
            s.iteration_count += 1;
            let send = findings.is_empty();
            cx.event(EventKind::GateAnswered {
                gate: gate_id,
                choice: if send { "send" } else { "revise" }.into(),
                by: "auto".into(),
            });
            return goto(if send { node::REVIEW } else { node::DRAFT });
        }
        let Some(answer) = cx.answer()? else {
            let mut gate = cx.gate(
                "draft",
                format!(
                    "Iteration {} | Draft #{}: review the draft",
                    s.iteration_count + 1,
                    s.draft_count
                ),
                vec![
                    Choice::new("send", 'S', "send the draft to the reviewer"),
                    Choice::new("revise", 'R', "send it back to the drafter with feedback")
                        .with_feedback(),
                ],
            );
            let mut detail = Vec::new();
            if !findings.is_empty() {
                detail.push(super::checks::gate_detail(&findings));
                gate.recommended = Some("revise".into());
            }
            let context = self.context_names(s);
            if !context.is_empty() {
                detail.push(format!(
                    "Context files sent to the drafter: {}",
                    context.join(", ")
                ));
            }
            if !detail.is_empty() {
                gate.detail = Some(detail.join("\n"));
            }
            gate.present = Box::new(Presentation {
                open: vec![draft.path.clone()],
                feedback_label: Some("Feedback for the drafter".into()),
                ..Presentation::default()
            });
            gate.artifacts = vec![draft.path];
            if let Some(checks) = s.checks.as_ref().and_then(|c| c.path.clone())
                && !findings.is_empty()
            {
                gate.artifacts.push(checks);
            }
            return Ok(Transition::Gate(gate));
        };
        s.iteration_count += 1;
        self.reread_draft(s, cx)?;
        answered(cx, &answer);
        match answer.choice.as_str() {
            "send" => {
                let unchanged = s.draft.as_ref().is_some_and(|d| d.hash == draft.hash);
                if unchanged && !findings.is_empty() {
                    cx.event(EventKind::Note {
                        text: format!(
                            "a person sent {} to the reviewer over {} finding(s) of gavel's checks",
                            draft.path,
                            findings.len()
                        ),
                    });
                }
                goto(node::REVIEW)
            }
            _ => {
                self.save_feedback(s, cx, &answer)?;
                goto(node::DRAFT)
            }
        }
    }

    /// N5: route by the verdict; a person sees it and may override. Unparseable verdicts always
    /// wait for a person.
    pub(super) fn verdict_gate(
        &self,
        s: &mut DocState,
        cx: &mut NodeCtx<'_>,
    ) -> Result<Transition, NodeError> {
        let record = s
            .verdict
            .clone()
            .ok_or_else(|| NodeError::Failed("no verdict to act on".into()))?;
        let gate_id = cx.gate("verdict", "", Vec::new()).id;
        let unparseable = matches!(record.verdict, Verdict::Unparseable { .. });
        // Fail closed: an unparseable verdict, or one from another model than the reviewer
        // asked for (a downgrade), is never routed without a person, even with --auto.
        if s.auto && !unparseable && record.warning.is_none() {
            let clean = record.verdict.is_clean();
            let choice = if clean { "approve" } else { "revise" };
            cx.event(EventKind::GateAnswered {
                gate: gate_id,
                choice: choice.into(),
                by: "auto".into(),
            });
            return goto(if clean {
                self.kind.finish_node
            } else {
                node::DRAFT
            });
        }
        let Some(answer) = cx.answer()? else {
            let mut gate = cx.gate(
                "verdict",
                format!(
                    "Iteration {} | Draft #{} | Verdict #{}: {}",
                    s.iteration_count,
                    s.draft_count,
                    s.verdict_count,
                    record.verdict.summary()
                ),
                vec![
                    Choice::new("approve", 'A', self.kind.approve_label),
                    Choice::new(
                        "revise",
                        'R',
                        "send the draft back to the drafter with the verdict",
                    )
                    .with_feedback(),
                ],
            );
            let mut detail = verdict_detail(&record.verdict);
            if let Some(w) = &record.warning {
                detail.push_str(&format!(
                    "\nWARNING: model verification failed: {w}. This verdict came from another model than the reviewer asked for, so it is not routed automatically: read it and decide."
                ));
            }
            gate.detail = Some(detail);
            gate.artifacts = vec![
                s.draft.as_ref().map(|d| d.path.clone()).unwrap_or_default(),
                record.artifact.path.clone(),
            ];
            gate.present = Box::new(Presentation {
                editable: gate.artifacts.clone(),
                preview: Some(record.artifact.path.clone()),
                feedback_label: Some("Feedback for the drafter".into()),
                ..Presentation::default()
            });
            gate.recommended = match &record.verdict {
                _ if record.warning.is_some() => None,
                v if v.is_clean() => Some("approve".into()),
                Verdict::Parsed { .. } => Some("revise".into()),
                Verdict::Unparseable { .. } => None,
            };
            return Ok(Transition::Gate(gate));
        };
        self.reread_draft(s, cx)?;
        self.reread_verdict(s, cx)?;
        answered(cx, &answer);
        match answer.choice.as_str() {
            "approve" => {
                if !record.verdict.is_clean() {
                    cx.event(EventKind::Note {
                        text: format!(
                            "a person approved over a {} verdict",
                            record.verdict.summary()
                        ),
                    });
                }
                goto(self.kind.finish_node)
            }
            _ => {
                self.save_feedback(s, cx, &answer)?;
                goto(node::DRAFT)
            }
        }
    }

    /// The person may have edited the draft in their editor; what they saw is what counts.
    pub(super) fn reread_draft(
        &self,
        s: &mut DocState,
        cx: &mut NodeCtx<'_>,
    ) -> Result<(), NodeError> {
        let Some(draft) = s.draft.as_mut() else {
            return Ok(());
        };
        let path = self.root().join(&draft.path);
        let text = fs::read_to_string(&path).map_err(|e| io_failed("read the draft", &path, e))?;
        let hash = ContentHash::of(text.as_bytes());
        if hash != draft.hash {
            draft.hash = cx.put_blob(text.as_bytes())?;
            cx.event(EventKind::Note {
                text: format!("{} edited by a person", draft.path),
            });
        }
        Ok(())
    }

    /// The person may have sanitized the verdict; the edited text replaces it in the history
    /// that later drafts see.
    fn reread_verdict(&self, s: &mut DocState, cx: &mut NodeCtx<'_>) -> Result<(), NodeError> {
        let Some(record) = s.verdict.as_mut() else {
            return Ok(());
        };
        let path = self.root().join(&record.artifact.path);
        let text =
            fs::read_to_string(&path).map_err(|e| io_failed("read the verdict", &path, e))?;
        let body = strip_front_matter(&text);
        let hash = ContentHash::of(body.as_bytes());
        if hash != record.artifact.hash {
            record.artifact.hash = cx.put_blob(body.as_bytes())?;
            if let Some(last) = s.verdict_history.last_mut() {
                *last = record.artifact.hash.clone();
            }
            cx.event(EventKind::Note {
                text: format!("{} edited by a person", record.artifact.path),
            });
        }
        Ok(())
    }

    fn save_feedback(
        &self,
        s: &mut DocState,
        cx: &mut NodeCtx<'_>,
        answer: &GateAnswer,
    ) -> Result<(), NodeError> {
        let Some(text) = answer.feedback.as_deref().filter(|f| !f.trim().is_empty()) else {
            s.feedback = None;
            return Ok(());
        };
        s.file_counter += 1;
        let lineage = self.lineage(s);
        let rel = lineage
            .write(s.file_counter, "feedback.md", text.as_bytes())
            .map_err(|e| {
                io_failed(
                    "write",
                    &lineage.artifact_rel(s.file_counter, "feedback.md"),
                    e,
                )
            })?;
        let hash = cx.put_blob(text.as_bytes())?;
        s.feedback = Some(hash.clone());
        cx.event(EventKind::Artifact {
            path: rel.to_string_lossy().into_owned(),
            content: Some(hash),
            kind: Some(ArtifactKind::Feedback),
        });
        Ok(())
    }
}

fn answered(cx: &mut NodeCtx<'_>, answer: &GateAnswer) {
    cx.event(EventKind::GateAnswered {
        gate: answer.gate_id.clone(),
        choice: answer.choice.clone(),
        by: "person".into(),
    });
}

fn verdict_detail(v: &Verdict) -> String {
    match v {
        Verdict::Parsed {
            decision, findings, ..
        } => {
            let mut s = format!("Verdict: {}", decision.as_str());
            for f in findings {
                s.push_str(&format!("\n  - {f}"));
            }
            s
        }
        Verdict::Unparseable { reason } => {
            format!(
                "The verdict could not be parsed ({reason}). It is not an approval: read it and decide."
            )
        }
    }
}
