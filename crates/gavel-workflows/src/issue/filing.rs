//! N6: filing the approved draft, then closing the lineage.
//!
//! Order matters for crash safety: labels, then the issue (idempotent by the run's key), then
//! `NNN-filed.json`, the move of the lineage folder to `done/{issue#}-{slug}/` and of the idea to
//! `ideas/done/`, and finally one git commit naming the issue (idempotent by its trailer).
//! A failure before the issue exists pauses at a gate: Retry / Edit (back to the verdict gate)
//! / Abort (files stay in `active/`).

use std::path::PathBuf;

use gavel_core::{Choice, EventKind, NodeCtx, NodeError, StepError, Transition};
use serde::Serialize;

use super::node;
use crate::document::{DocState, DocWorkflow, Filed, goto, io_failed};
use crate::fsutil;
use crate::kit::blob_text;
use crate::kit::commit::{commit_once, step_failed};
use crate::lineage::Lineage;
use gavel_tracker::{FiledIssue, NewIssue, TrackerError};

/// `NNN-filed.json`: the seed's schema plus who filed it and how.
#[derive(Debug, Serialize)]
struct FiledJson<'a> {
    issue_number: u64,
    issue_url: &'a str,
    title: &'a str,
    filed_at: &'a str,
    brief_file: &'a str,
    total_iterations: u32,
    draft_count: u32,
    verdict_count: u32,
    labels: &'a [String],
    tracker: String,
    run_id: i64,
    auto_mode: bool,
}

/// N6: files the approved draft, then closes the lineage in one commit.
pub(super) fn file(
    wf: &DocWorkflow,
    s: &mut DocState,
    cx: &mut NodeCtx<'_>,
) -> Result<Transition, NodeError> {
    wf.file_issue(s, cx)
}

impl DocWorkflow {
    fn file_issue(&self, s: &mut DocState, cx: &mut NodeCtx<'_>) -> Result<Transition, NodeError> {
        if let Some(answer) = cx.answer()? {
            cx.event(EventKind::GateAnswered {
                gate: answer.gate_id.clone(),
                choice: answer.choice.clone(),
                by: "person".into(),
            });
            return match answer.choice.as_str() {
                "retry" => goto(node::FILE),
                "edit" => goto(node::VERDICT_GATE),
                _ => Ok(Transition::Abort {
                    reason: "filing aborted by a person; the lineage stays in active/".into(),
                }),
            };
        }
        let draft = s
            .draft
            .clone()
            .ok_or_else(|| NodeError::Failed("no draft to file".into()))?;
        let body = crate::document::strip_gavel_comments(&blob_text(cx, Some(&draft.hash))?);
        let Some(title) = parse_title(&body) else {
            return Ok(self.error_gate(cx, "the draft has no `# ` title line".into()));
        };
        let labels = parse_labels(&body);
        let key = format!("gavel-{}", s.run_key);
        let issue = NewIssue {
            title: title.clone(),
            body: body.clone(),
            labels: labels.clone(),
            idempotency_key: key.clone(),
            slug: s.slug.clone(),
            run_started_at: s.started_at.clone(),
        };
        let now = cx.clock().now_rfc3339();
        let created: Result<Vec<String>, StepError<TrackerError>> =
            cx.step("labels", || self.tracker.ensure_labels(&labels));
        match created {
            Ok(created) => {
                for label in created {
                    cx.event(EventKind::Note {
                        text: format!("label `{label}` created"),
                    });
                }
            }
            Err(StepError::Step(e)) => return Ok(self.error_gate(cx, e.to_string())),
            Err(e) => return Err(step_failed(e)),
        }
        let filed: FiledIssue = match cx.step("create", || self.tracker.create_issue(&issue, &now))
        {
            Ok(f) => f,
            Err(StepError::Step(e)) => return Ok(self.error_gate(cx, e.to_string())),
            Err(e) => return Err(step_failed(e)),
        };
        cx.event(EventKind::Note {
            text: if filed.found_existing {
                format!(
                    "issue #{} was already filed by this run (found by its key, not filed again): {}",
                    filed.number, filed.url
                )
            } else {
                format!("issue #{} filed: {}", filed.number, filed.url)
            },
        });

        s.file_counter += 1;
        let lineage = self.lineage(s);
        let json = FiledJson {
            issue_number: filed.number,
            issue_url: &filed.url,
            title: &title,
            filed_at: &filed.created_at,
            brief_file: &s.brief_file,
            total_iterations: s.iteration_count,
            draft_count: s.draft_count,
            verdict_count: s.verdict_count,
            labels: &labels,
            tracker: self.tracker.describe(),
            run_id: cx.run().0,
            auto_mode: s.auto,
        };
        let mut bytes =
            serde_json::to_vec_pretty(&json).map_err(|e| NodeError::Failed(e.to_string()))?;
        bytes.push(b'\n');
        let n = s.file_counter;
        let done_rel = Lineage::done_rel(&self.settings.lineage_dir, filed.number, &s.slug);
        let done_abs = self.root().join(&done_rel);
        // A replay after the move writes into the folder where the lineage now lives.
        let folder = if done_abs.is_dir() && !lineage.abs().exists() {
            done_abs.clone()
        } else {
            lineage.abs()
        };
        let filed_json = folder.join(crate::lineage::artifact_name(n, "filed.json"));
        fsutil::write_atomic(&filed_json, &bytes)
            .map_err(|e| io_failed("write", &filed_json, e))?;
        fsutil::move_idempotent(&lineage.abs(), &done_abs)
            .map_err(|e| io_failed("move the lineage folder", &lineage.abs(), e))?;
        let mut paths: Vec<PathBuf> = vec![done_rel.clone(), lineage.rel().to_path_buf()];
        let mut idea_moved: Option<PathBuf> = None;
        if let Some(idea) = &s.source_idea {
            let to = self
                .settings
                .ideas_dir
                .join("done")
                .join(format!("{}-{}.md", filed.number, s.slug));
            // The issue is filed: what a person did to the idea while the run waited (removed
            // it, renamed it, put something at the target) must not stop the commit. gavel
            // then leaves the idea alone and says so.
            match fsutil::move_idempotent(&self.root().join(idea), &self.root().join(&to)) {
                Ok(()) => {
                    paths.push(PathBuf::from(idea));
                    paths.push(to.clone());
                    idea_moved = Some(to);
                }
                Err(e) => cx.event(EventKind::Note {
                    text: format!(
                        "the idea {idea} was not moved to {} ({e}); it was changed while the run waited, so gavel left it alone",
                        to.display()
                    ),
                }),
            }
        }
        paths.extend(filed.paths.iter().cloned());
        let message = format!(
            "gavel: file issue #{} {}\n\nLineage: {}",
            filed.number,
            title,
            done_rel.display()
        );
        let commit = Some(commit_once(
            cx,
            self.root(),
            &paths,
            &message,
            &key,
            &format!("issue #{} is filed", filed.number),
        )?);
        cx.event(EventKind::Artifact {
            path: done_rel.to_string_lossy().into_owned(),
            content: None,
            kind: None,
        });
        let mut summary = format!(
            "issue #{} filed ({}); lineage in {}",
            filed.number,
            filed.url,
            done_rel.display()
        );
        if let Some(to) = &idea_moved {
            summary.push_str(&format!(", idea moved to {}", to.display()));
        }
        if let Some(c) = &commit {
            summary.push_str(&format!(", committed as {}", &c[..c.len().min(12)]));
        }
        s.filed = Some(Filed {
            number: filed.number,
            url: filed.url,
            title,
            lineage: done_rel.to_string_lossy().into_owned(),
            commit,
        });
        Ok(Transition::Done { summary })
    }

    fn error_gate(&self, cx: &NodeCtx<'_>, error: String) -> Transition {
        let mut gate = cx.gate(
            "file-error",
            "Filing the issue failed",
            vec![
                Choice::new("retry", 'R', "try filing again"),
                Choice::new(
                    "edit",
                    'E',
                    "go back to the verdict gate (edit the draft there)",
                ),
                Choice::new("abort", 'A', "stop; the lineage stays in active/"),
            ],
        );
        gate.detail = Some(error);
        Transition::Gate(gate)
    }
}

/// The issue title: the text of the first level-1 heading outside code (pulldown-cmark).
pub fn parse_title(body: &str) -> Option<String> {
    gavel_llm::title(body)
}

/// Labels from the `**Labels:**` line outside code: comma-separated, backticks and blanks
/// dropped.
pub fn parse_labels(body: &str) -> Vec<String> {
    let Some(line) = gavel_llm::prose_lines(body)
        .into_iter()
        .find_map(|l| l.trim().strip_prefix("**Labels:**"))
    else {
        return Vec::new();
    };
    let mut labels: Vec<String> = Vec::new();
    for label in line.split(',').map(|l| l.trim().trim_matches('`').trim()) {
        if !label.is_empty() && !labels.iter().any(|l| l == label) {
            labels.push(label.to_owned());
        }
    }
    labels
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn title_and_labels_come_from_the_draft() {
        let body = "Some preamble\n# Add dark mode \n\n**Labels:** `enhancement`, ui, , ui\n";
        assert_eq!(parse_title(body).as_deref(), Some("Add dark mode"));
        assert_eq!(parse_labels(body), vec!["enhancement", "ui"]);
        assert_eq!(parse_title("## not a title\n#also not"), None);
        assert!(parse_labels("# T\n").is_empty());
    }
}
