//! The shared nodes N1–N5 of the document workflow: pre-flight, draft, the draft gate, review,
//! and the verdict gate. (N0 and N6 belong to each kind.)

use gavel_core::ArtifactKind;
use std::fs;

use gavel_core::{
    Choice, ContentHash, EventKind, GateAnswer, NodeCtx, NodeError, Presentation, Transition,
};
use gavel_llm::{ProviderError, Role};

use super::front_matter::Value;
use super::prompts::{self, DraftInput};
use super::{Artifact, DocState, DocWorkflow, VerdictRecord, goto, io_failed, node};
use crate::kit::blob_text;
use crate::verdict::{self, Verdict};
use crate::which;

impl DocWorkflow {
    /// N1: everything that can fail cheaply fails here, before the first model call.
    pub(super) fn preflight(
        &self,
        s: &mut DocState,
        cx: &mut NodeCtx<'_>,
    ) -> Result<Transition, NodeError> {
        let problems = if self.preflight.take() {
            Vec::new()
        } else {
            self.problems()
        };
        if problems.is_empty() {
            if let Some(w) = self.same_model_warning() {
                cx.event(EventKind::Note {
                    text: format!("warning: {w}"),
                });
            }
            self.disclose(s, cx);
            return goto(node::DRAFT);
        }
        Err(NodeError::Failed(format!(
            "pre-flight failed:\n  - {}",
            problems.join("\n  - ")
        )))
    }

    /// What the run sends where, before its first model call ([`crate::disclosure`]).
    fn disclose(&self, s: &DocState, cx: &mut NodeCtx<'_>) {
        let r = &self.settings.roles;
        let input = self.kind.input_heading.to_lowercase();
        let mut drafter = format!(
            "the {input}, the template, the context files and the reviewer's findings on earlier drafts"
        );
        if self.settings.drafter_reads_repo {
            drafter.push_str("; it may also read any file of the repository (read-only tools)");
        }
        let sent = [
            crate::disclosure::Sent {
                role: "drafter",
                provider: &r.drafter,
                what: &drafter,
            },
            crate::disclosure::Sent {
                role: "reviewer",
                provider: &r.reviewer,
                what: "each draft sent for review, with the review rubric",
            },
        ];
        crate::disclosure::record(cx, &sent, &self.context_names(s));
    }

    /// The validated context files' paths, from the manifest in the lineage.
    pub(super) fn context_names(&self, s: &DocState) -> Vec<String> {
        s.context
            .as_ref()
            .and_then(|c| std::fs::read_to_string(self.root().join(&c.manifest)).ok())
            .map(|m| crate::disclosure::context_names(&m))
            .unwrap_or_default()
    }

    /// A warning when the reviewer is the drafter's own provider and model.
    pub fn same_model_warning(&self) -> Option<String> {
        let r = &self.settings.roles;
        crate::roles::same_model_warning("reviewer", &r.reviewer, "drafter", &r.drafter)
    }

    /// Every problem pre-flight finds, all at once.
    pub(super) fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if let Some(editor) = &self.settings.editor_program
            && which::find_program(editor).is_none()
        {
            problems.push(format!(
                "editor `{editor}` is not on PATH (set $VISUAL or $EDITOR to an installed editor)"
            ));
        }
        if self.kind.checks_tracker
            && let Err(e) = self.tracker.check()
        {
            problems.push(e.to_string());
        }
        for (role, provider) in [("drafter", &self.drafter), ("reviewer", &self.reviewer)] {
            if let Err(e) = provider.preflight() {
                let hint = match &e {
                    ProviderError::Unavailable { hint, .. } => format!(" ({hint})"),
                    ProviderError::Permanent { hint: Some(h), .. } => format!(" ({h})"),
                    _ => String::new(),
                };
                problems.push(format!("{role} {}: {e}{hint}", provider.describe()));
            }
        }
        let template = self.settings.template_path.to_string_lossy().into_owned();
        for path in [template.as_str(), self.kind.rubric_path] {
            if !self.root().join(path).is_file() {
                problems.push(format!("{path} is missing (run `gavel init` to write it)"));
            }
        }
        problems
    }

    /// N2: the drafter writes (or revises) the issue.
    pub(super) fn draft(
        &self,
        s: &mut DocState,
        cx: &mut NodeCtx<'_>,
    ) -> Result<Transition, NodeError> {
        let cap = self.settings.max_iterations;
        if s.draft_count >= cap {
            return Ok(Transition::Halt {
                reason: format!(
                    "max iterations reached: {} drafts without an approved verdict (limit {cap}); raise [limits] max_iterations in gavel.toml to continue",
                    s.draft_count
                ),
            });
        }
        let template_path = self.root().join(&self.settings.template_path);
        let template =
            fs::read_to_string(&template_path).map_err(|e| io_failed("read", &template_path, e))?;
        let brief = blob_text(cx, s.brief.as_ref())?;
        let current = match &s.draft {
            Some(d) => Some(blob_text(cx, Some(&d.hash))?),
            None => None,
        };
        let verdicts = s
            .verdict_history
            .iter()
            .map(|h| blob_text(cx, Some(h)))
            .collect::<Result<Vec<_>, _>>()?;
        let feedback = match &s.feedback {
            Some(h) => Some(blob_text(cx, Some(h))?),
            None => None,
        };
        let context = match &s.context {
            Some(c) => Some(blob_text(cx, Some(&c.text))?),
            None => None,
        };
        let prompt = prompts::draft_prompt(&DraftInput {
            instruction: self.kind.drafter_instruction,
            input_heading: self.kind.input_heading,
            template: &template,
            brief: &brief,
            context: context.as_deref(),
            current_draft: current.as_deref(),
            verdicts: &verdicts,
            feedback: feedback.as_deref(),
        });
        let mut parts: Vec<ContentHash> = s.brief.iter().cloned().collect();
        parts.extend(s.context.as_ref().map(|c| c.text.clone()));
        parts.extend(s.draft.as_ref().map(|d| d.hash.clone()));
        parts.extend(s.verdict_history.iter().cloned());
        parts.extend(s.feedback.iter().cloned());
        let answered = match self.call_model(s, cx, Role::DRAFTER, s.draft_count, prompt, &parts)? {
            Ok(a) => a,
            Err(halt) => return Ok(halt),
        };
        let mut text = gavel_llm::strip_preamble(&answered.response.text);
        text.push('\n');
        if text.trim().is_empty() {
            return Ok(Transition::Halt {
                reason: "the drafter returned an empty draft; nothing was saved".into(),
            });
        }
        if let Some(w) = &answered.warning {
            text.insert_str(0, &super::calls::draft_warning_line(w));
        }
        s.file_counter += 1;
        let lineage = self.lineage(s);
        let rel = lineage
            .write(s.file_counter, "draft.md", text.as_bytes())
            .map_err(|e| {
                io_failed(
                    "write",
                    &lineage.artifact_rel(s.file_counter, "draft.md"),
                    e,
                )
            })?;
        let path = rel.to_string_lossy().into_owned();
        let hash =
            cx.put_blob_sharing(text.as_bytes(), std::slice::from_ref(&answered.text_blob))?;
        s.draft = Some(Artifact {
            path: path.clone(),
            hash: hash.clone(),
        });
        s.draft_count += 1;
        s.feedback = None;
        cx.event(EventKind::Artifact {
            path,
            content: Some(hash),
            kind: Some(ArtifactKind::Draft),
        });
        goto(node::DRAFT_GATE)
    }

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
        if s.auto {
            s.iteration_count += 1;
            cx.event(EventKind::GateAnswered {
                gate: gate_id,
                choice: "send".into(),
                by: "auto".into(),
            });
            return goto(node::REVIEW);
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
            let context = self.context_names(s);
            if !context.is_empty() {
                gate.detail = Some(format!(
                    "Context files sent to the drafter: {}",
                    context.join(", ")
                ));
            }
            gate.present = Box::new(Presentation {
                open: vec![draft.path.clone()],
                feedback_label: Some("Feedback for the drafter".into()),
                ..Presentation::default()
            });
            gate.artifacts = vec![draft.path];
            return Ok(Transition::Gate(gate));
        };
        s.iteration_count += 1;
        self.reread_draft(s, cx)?;
        answered(cx, &answer);
        match answer.choice.as_str() {
            "send" => goto(node::REVIEW),
            _ => {
                self.save_feedback(s, cx, &answer)?;
                goto(node::DRAFT)
            }
        }
    }

    /// N4: the reviewer judges the draft against the fixed rubric.
    pub(super) fn review(
        &self,
        s: &mut DocState,
        cx: &mut NodeCtx<'_>,
    ) -> Result<Transition, NodeError> {
        let rubric_path = self.root().join(self.kind.rubric_path);
        let rubric = fs::read(&rubric_path)
            .map_err(|e| io_failed("read the review rubric", &rubric_path, e))?;
        let rubric_sha256 = ContentHash::of(&rubric).to_string();
        let rubric = String::from_utf8_lossy(&rubric).into_owned();
        let draft = s
            .draft
            .clone()
            .ok_or_else(|| NodeError::Failed("no draft to review".into()))?;
        let draft_text = blob_text(cx, Some(&draft.hash))?;
        let prompt = prompts::review_prompt(&rubric, &draft_text);
        let parts = [draft.hash.clone()];
        let answered =
            match self.call_model(s, cx, Role::REVIEWER, s.verdict_count, prompt, &parts)? {
                Ok(a) => a,
                Err(halt) => return Ok(halt),
            };
        let response = &answered.response;
        let parsed = verdict::parse_review(&response.text, &draft_text);
        let mut fields: Vec<(&str, Value)> = vec![
            ("rubric", Value::Text(self.kind.rubric_path.to_owned())),
            ("rubric_sha256", Value::Text(rubric_sha256.clone())),
            ("reviewer", Value::Text(self.reviewer.describe())),
            ("model", Value::Text(response.model.clone())),
        ];
        if let Some(c) = s.role_change.take() {
            fields.push(("role_change", Value::Text(c)));
        }
        if let Some(w) = &answered.warning {
            fields.push((
                "warning",
                Value::Text(format!("model verification failed: {w}")),
            ));
        }
        fields.push(("verdict", Value::Text(parsed.summary())));
        fields.push(("auto_mode", Value::Bool(s.auto)));
        let mut header = super::front_matter::render(&fields);
        if let Some(w) = &answered.warning {
            header.push_str(&format!("WARNING: model verification failed: {w}\n\n"));
        }
        s.file_counter += 1;
        let lineage = self.lineage(s);
        let content = format!("{header}{}", response.text);
        let rel = lineage
            .write(s.file_counter, "verdict.md", content.as_bytes())
            .map_err(|e| {
                io_failed(
                    "write",
                    &lineage.artifact_rel(s.file_counter, "verdict.md"),
                    e,
                )
            })?;
        let path = rel.to_string_lossy().into_owned();
        let hash = cx.put_blob(response.text.as_bytes())?;
        s.verdict_history.push(hash.clone());
        s.verdict = Some(VerdictRecord {
            artifact: Artifact {
                path: path.clone(),
                hash,
            },
            verdict: parsed,
            rubric_sha256,
            warning: answered.warning.clone(),
            model: Some(response.model.clone()),
        });
        s.verdict_count += 1;
        let answer = s.verdict_history.last().cloned();
        cx.artifact(
            ArtifactKind::Verdict,
            path,
            content.as_bytes(),
            answer.as_slice(),
        )?;
        goto(node::VERDICT_GATE)
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

/// Removes a leading `---` front matter block.
pub(crate) fn strip_front_matter(text: &str) -> String {
    if let Some(rest) = text.strip_prefix("---\n")
        && let Some(end) = rest.find("\n---\n")
    {
        return rest[end + 5..].trim_start_matches('\n').to_owned();
    }
    text.to_owned()
}
