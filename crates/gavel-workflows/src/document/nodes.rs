//! The shared nodes of the document workflow that call no person: N1 pre-flight, N2 draft and
//! N4 review. (The gates N3 and N5 are in `gates.rs`; N0 and N6 belong to each kind.)

use gavel_core::ArtifactKind;
use std::fs;

use gavel_core::{ContentHash, EventKind, NodeCtx, NodeError, Transition};
use gavel_llm::{ProviderError, Role};

use super::front_matter::Value;
use super::prompts::{self, DraftInput};
use super::{Artifact, DocState, DocWorkflow, VerdictRecord, goto, io_failed, node};
use crate::kit::blob_text;
use crate::verdict;
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
        if let Err(e) = self.rubric_sections() {
            problems.push(e);
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
        let failed_checks: Vec<String> = match (&s.checks, &s.draft) {
            (Some(c), Some(d)) => c.failing_for(d).map(<[String]>::to_vec),
            _ => None,
        }
        .unwrap_or_default();
        if s.draft_count >= cap {
            let mut why = String::new();
            if let Some(path) = s.checks.as_ref().and_then(|c| c.path.as_ref())
                && !failed_checks.is_empty()
            {
                why = format!(
                    "; the last draft failed gavel's own checks ({} finding(s), in {path}) and went to no reviewer",
                    failed_checks.len()
                );
            }
            return Ok(Transition::Halt {
                reason: format!(
                    "max iterations reached: {} drafts without an approved verdict (limit {cap}){why}; raise [limits] max_iterations in gavel.toml to continue",
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
            checks: &failed_checks,
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
        s.previous_draft = s.draft.as_ref().map(|d| d.hash.clone());
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
