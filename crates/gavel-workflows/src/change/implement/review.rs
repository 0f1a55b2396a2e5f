//! The code review of a spec-driven change (seed 003, WF-R4), between the lint and the diff
//! gate, and what a change run keeps in its folder: the phase in `STATE.yaml`, the tasks
//! ticked once the tests pass, and `REVIEW.md`.
//!
//! The reviewer gets the plan, the diff against the base and the test results. An agent CLI
//! gets gavel's MCP server (`gavel mcp`, for the worktree's change folder, for this call only)
//! and submits its review with `create_review`, which writes `REVIEW.md`; a text-only
//! reviewer answers with the same structure as one JSON block, and gavel writes `REVIEW.md`.
//! `REVIEW.md` is removed before the call, so only this call's review is ever read; once
//! `create_review` wrote it, it is the call's answer even if the CLI then fails (a turn limit),
//! and the call is not made again (the server refuses a second submission). No review
//! (after the retries) halts the run: the phase stays `implementing`, never an approval.
//! A clean APPROVED (no critical issue) goes on to the diff gate with the phase `complete` in
//! the worktree's STATE.yaml; NEEDS_FIX goes back to the implementer with the findings, up to
//! `max_rounds`; MAJOR_ISSUES, NEEDS_FIX once the rounds are used, or an APPROVED that lists a
//! critical issue (not a clean approval, as in the issue workflow) stops at a gate for a
//! person, who may accept the approval, review again or fix once more. Every file of the
//! change folder is read as `change::read` reads (a regular file, capped): the worktree is the
//! model's to write, and a FIFO or a link to `/dev/zero` there must not hang the run.

use gavel_core::ArtifactKind;
use std::path::Path;

use gavel_core::{Choice, ContentHash, EventKind, NodeCtx, NodeError, Transition};
use gavel_llm::{AgentProfile, McpServer, Role};
use gavel_mcp::{Review, ReviewVerdict, Severity, read_review};

use crate::change::read::{is_present, read_bytes, read_text};
use crate::change::state::{ChangeState, Phase, Verdict, save_state};
use crate::change::structured::{parse_json_verdict, review_schema, tidy_review};
use crate::change::tasks::{check_off_many, parse_tasks};
use crate::change::{ChangeDir, check_folder_id};
use crate::fsutil;
use crate::kit::{ChangeTarget, ImplementState, ImplementWorkflow, goto, io_failed, node};

use super::CodeReviewer;

/// The most of the diff a reviewer is shown.
const DIFF_LIMIT: usize = 200 * 1024;

fn read_failed(e: crate::change::read::ReadError) -> NodeError {
    NodeError::Failed(e.to_string())
}

/// The review in `REVIEW.md`, read only if it is a regular file within the size limit, and
/// only if it did not change while it was parsed.
fn read_review_file(path: &Path) -> Result<(Review, Vec<u8>), String> {
    let before = read_bytes(path).map_err(|e| e.to_string())?;
    let review = read_review(path).map_err(|e| e.to_string())?;
    let after = read_bytes(path).map_err(|e| e.to_string())?;
    if before != after {
        return Err(format!("{} changed while it was read", path.display()));
    }
    Ok((review, after))
}

/// The titles of the review's critical issues.
fn critical_issues(review: &Review) -> Vec<String> {
    review
        .issues
        .iter()
        .filter(|i| i.severity == Severity::Critical)
        .map(|i| i.title.clone())
        .collect()
}

fn change_of(s: &ImplementState) -> Result<ChangeTarget, NodeError> {
    s.change
        .clone()
        .ok_or_else(|| NodeError::Failed("this run implements no change".into()))
}

/// A change run's node, with its workflow and reviewer at hand.
pub(super) struct Run<'a> {
    pub wf: &'a ImplementWorkflow,
    pub reviewer: &'a CodeReviewer,
}

impl Run<'_> {
    fn change_dir(&self, base: &Path, c: &ChangeTarget) -> Result<ChangeDir, NodeError> {
        ChangeDir::new(base.join(&c.changes_root), &c.id)
            .map_err(|e| NodeError::Failed(e.to_string()))
    }

    /// Writes STATE.yaml in `base` (the checkout or the worktree); returns its hash.
    fn write_change_state(
        &self,
        base: &Path,
        c: &ChangeTarget,
        phase: Phase,
        cx: &NodeCtx<'_>,
    ) -> Result<String, NodeError> {
        let path = self.change_dir(base, c)?.state();
        let state = ChangeState {
            change_id: c.id.clone(),
            phase,
            updated_at: cx.clock().now(),
            planning_iterations: c.planning_iterations,
            implementation_iterations: c.rounds,
            last_verdict: c.verdict,
        };
        save_state(&path, &state).map_err(|e| NodeError::Failed(e.to_string()))?;
        let bytes = read_bytes(&path).map_err(read_failed)?;
        Ok(ContentHash::of(&bytes).to_string())
    }

    /// N0, for a change: the person's STATE.yaml says `implementing` while the run works.
    pub(super) fn start_change(
        &self,
        s: &mut ImplementState,
        cx: &mut NodeCtx<'_>,
    ) -> Result<(), NodeError> {
        let Some(c) = s.change.as_mut() else {
            return Ok(());
        };
        if let Some(text) = c.start_note.take() {
            cx.event(EventKind::Note { text });
        }
        let c2 = c.clone();
        c.checkout_state =
            Some(self.write_change_state(self.wf.root(), &c2, Phase::Implementing, cx)?);
        cx.event(EventKind::Note {
            text: format!("change `{}`: phase implementing", c2.id),
        });
        Ok(())
    }

    /// After a green gate: the change's open tasks ticked in the worktree, once.
    pub(super) fn tick_tasks(
        &self,
        s: &mut ImplementState,
        cx: &mut NodeCtx<'_>,
    ) -> Result<(), NodeError> {
        let Some(c) = s.change.clone() else {
            return Ok(());
        };
        if c.tasks_checked {
            return Ok(());
        }
        let dir = self.change_dir(&self.wf.worktree(s)?, &c)?;
        let path = dir.tasks();
        let text = read_text(&path).map_err(read_failed)?;
        let list = parse_tasks(&text, &c.id).map_err(|e| NodeError::Failed(e.to_string()))?;
        // All at the first green, each with a note; tasks without a number or a layer are
        // reported and left open (see `AtGreen` for why).
        let at = list.at_green();
        let ids: Vec<&str> = at.tick.iter().filter_map(|t| t.id.as_deref()).collect();
        // One pass over the file for every box, however many tasks it has.
        let text = check_off_many(&text, &ids).map_err(|e| NodeError::Failed(e.to_string()))?;
        for note in crate::change::tasks::green_notes(&at) {
            cx.event(EventKind::Note { text: note });
        }
        fsutil::write_atomic(&path, text.as_bytes()).map_err(|e| io_failed("write", &path, e))?;
        if let Some(c) = s.change.as_mut() {
            c.tasks_checked = true;
        }
        Ok(())
    }

    /// N5b: the reviewer's structured review decides where the run goes.
    pub(super) fn code_review(
        &self,
        s: &mut ImplementState,
        cx: &mut NodeCtx<'_>,
    ) -> Result<Transition, NodeError> {
        let c = change_of(s)?;
        let reviewer = self.reviewer;
        let worktree = self.wf.worktree(s)?;
        let dir = self.change_dir(&worktree, &c)?;
        check_folder_id(&dir.dir(), &c.id).map_err(|e| NodeError::Failed(e.to_string()))?;
        let review_path = dir.review();
        // Inside the change folder, as `gavel mcp` requires, under a name its tools never list;
        // moved out to gavel's own folder once the review is read (the record of the call), so
        // it never enters a commit.
        let kept = self
            .wf
            .root()
            .join(gavel_exec::git::DEFAULT_WORKTREE_HOME)
            .join(format!(".{}.mcp", s.worktree_name()))
            .join(format!("review-{}.jsonl", c.reviewer_calls));
        let journal = dir.dir().join(format!(
            ".gavel-mcp-journal-review-{}.jsonl",
            c.reviewer_calls
        ));
        // Only this call's review is read: an older REVIEW.md (or one a model wrote) goes,
        // and so does the MCP journal of an attempt that never finished, so that the attempt
        // made now records its review (once).
        if !cx.has_step("call")? {
            for stale in [&review_path, &journal] {
                match std::fs::remove_file(stale) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(io_failed("remove", stale, e)),
                }
            }
        }
        let prompt = self.review_prompt(s, &worktree, &dir, reviewer.mcp.is_some())?;
        let mut profile = AgentProfile::text_only();
        if let Some(launch) = &reviewer.mcp {
            let mut args = launch.args.clone();
            args.extend([
                "--change-dir".to_owned(),
                dir.dir().to_string_lossy().into_owned(),
                "--change-id".to_owned(),
                c.id.clone(),
                "--journal".to_owned(),
                journal.to_string_lossy().into_owned(),
                "--tool".to_owned(),
                "create_review".to_owned(),
            ]);
            // A review handed in through `create_review` is the call's answer even when the
            // CLI then stops with an error (a turn limit): it is not asked again.
            profile = profile
                .with_mcp_server(McpServer {
                    name: "gavel".into(),
                    command: launch.program.to_string_lossy().into_owned(),
                    args,
                    env: Vec::new(),
                })
                .with_answer_file(&review_path);
        }
        // A text-only reviewer's review is asked for as structured output where the provider
        // can; an agent with `gavel mcp` submits it through `create_review` instead.
        let output_schema = reviewer.mcp.is_none().then(review_schema);
        let caller = crate::caller::ModelCaller {
            settings: &self.wf.settings.calls,
            observer: self.wf.observer.clone(),
            profile,
            output_schema,
        };
        let answered = match caller.call(
            &mut s.spend,
            cx,
            reviewer.provider.as_ref(),
            Role::named("reviewer"),
            c.reviewer_calls,
            prompt,
            &[],
        )? {
            Ok(a) => a,
            Err(stop) => return Ok(stop),
        };
        let mut c = c;
        c.reviewer_calls += 1;
        let review = if is_present(&review_path) {
            read_review_file(&review_path)
        } else {
            parse_json_verdict::<Review>(&answered.response.text)
                .map(tidy_review)
                .map_err(|e| e.to_string())
                .and_then(|r| {
                    let text = r.to_markdown(&c.id).into_bytes();
                    fsutil::write_atomic(&review_path, &text)
                        .map(|()| (r, text))
                        .map_err(|e| format!("cannot write {}: {e}", review_path.display()))
                })
        };
        if std::fs::symlink_metadata(&journal).is_ok() {
            if let Some(parent) = kept.parent() {
                std::fs::create_dir_all(parent).map_err(|e| io_failed("create", parent, e))?;
            }
            std::fs::rename(&journal, &kept).map_err(|e| io_failed("move", &journal, e))?;
        }
        let (review, text) = match review {
            Ok(r) => r,
            Err(why) => {
                c.review_attempts += 1;
                let retry = c.review_attempts <= self.wf.settings.implement_retries;
                s.change = Some(c);
                cx.event(EventKind::Note {
                    text: format!("the reviewer gave no structured review: {why}"),
                });
                if retry {
                    return goto(node::CODE_REVIEW);
                }
                if let Some(c) = s.change.as_mut() {
                    c.stop_reason = Some(format!(
                        "the reviewer gave no structured review ({why}); the phase stays implementing"
                    ));
                }
                return goto(node::REVIEW_HALT);
            }
        };
        c.review_artifact =
            Some(
                self.wf
                    .artifact(s, cx, ArtifactKind::Review, "review.md", &text)?,
            );
        c.review_attempts = 0;
        c.rounds += 1;
        let verdict = match review.verdict {
            ReviewVerdict::Approved => Verdict::Approved,
            ReviewVerdict::NeedsFix => Verdict::NeedsFix,
            ReviewVerdict::MajorIssues => Verdict::MajorIssues,
        };
        c.verdict = Some(verdict);
        cx.event(EventKind::Note {
            text: format!(
                "review round {}: {} ({})",
                c.rounds,
                review.verdict.as_str(),
                review.confirmation()
            ),
        });
        c.checkout_state =
            Some(self.write_change_state(self.wf.root(), &c, Phase::Implementing, cx)?);
        let critical = critical_issues(&review);
        let next = match review.verdict {
            ReviewVerdict::Approved if !critical.is_empty() => {
                cx.event(EventKind::Note {
                    text: format!(
                        "the reviewer approved with {} critical issue(s) ({}): not a clean approval, a person decides",
                        critical.len(),
                        critical.join("; ")
                    ),
                });
                node::REVIEW_STOP
            }
            ReviewVerdict::Approved => {
                self.write_change_state(&worktree, &c, Phase::Complete, cx)?;
                node::REVIEW
            }
            ReviewVerdict::NeedsFix if c.rounds < c.max_rounds => {
                let why = format!(
                    "the reviewer asks for fixes (review round {}):\n\n{}",
                    c.rounds,
                    String::from_utf8_lossy(&text)
                );
                s.feedback = Some(cx.put_blob(why.as_bytes())?);
                s.implement_attempts = 0;
                node::IMPLEMENT
            }
            _ => node::REVIEW_STOP,
        };
        s.change = Some(c);
        goto(next)
    }

    /// N5c: MAJOR_ISSUES, NEEDS_FIX with no rounds left, or APPROVED with a critical issue: a
    /// person decides (and may accept such an approval, on the record).
    pub(super) fn review_stop(
        &self,
        s: &mut ImplementState,
        cx: &mut NodeCtx<'_>,
    ) -> Result<Transition, NodeError> {
        let mut c = change_of(s)?;
        let worktree = self.wf.worktree(s)?;
        let review = self.change_dir(&worktree, &c)?.review();
        let approved = c.verdict == Some(Verdict::Approved);
        let Some(answer) = cx.answer()? else {
            let verdict = c.verdict.map_or("no verdict", |v| match v {
                Verdict::MajorIssues => "MAJOR_ISSUES",
                Verdict::Approved => "APPROVED, but lists critical issues",
                _ => "NEEDS_FIX",
            });
            let mut choices = Vec::new();
            if approved {
                choices.push(Choice::new(
                    "accept",
                    'A',
                    "accept the approval as it is; on to the diff gate",
                ));
            }
            choices.extend([
                Choice::new(
                    "review",
                    'R',
                    "review the worktree again (after your fixes)",
                ),
                Choice::new(
                    "fix",
                    'F',
                    "one more implementation round with the findings",
                ),
            ]);
            let mut gate = cx.gate(
                "review-stop",
                format!(
                    "Change `{}`: the reviewer says {verdict} after {} round(s); fix it by hand in {} and review again, or let the implementer try once more",
                    c.id,
                    c.rounds,
                    worktree.display()
                ),
                choices,
            );
            if approved {
                gate.recommended = Some("fix".to_owned());
                let critical = read_review_file(&review)
                    .map(|(r, _)| critical_issues(&r))
                    .unwrap_or_default();
                if !critical.is_empty() {
                    gate.detail = Some(format!("critical issues:\n- {}", critical.join("\n- ")));
                }
            }
            gate.artifacts = vec![review.to_string_lossy().into_owned()];
            gate.present.preview = Some(review.to_string_lossy().into_owned());
            return Ok(Transition::Gate(gate));
        };
        match answer.choice.as_str() {
            "accept" if approved => {
                cx.event(EventKind::Note {
                    text: format!(
                        "a person accepted the reviewer's APPROVED over its critical issues (review round {})",
                        c.rounds
                    ),
                });
                self.write_change_state(&worktree, &c, Phase::Complete, cx)?;
                goto(node::REVIEW)
            }
            "review" => goto(node::CODE_REVIEW),
            "fix" => {
                let text = read_text(&review).map_err(read_failed)?;
                let why = format!("the reviewer asks for fixes:\n\n{text}");
                s.feedback = Some(cx.put_blob(why.as_bytes())?);
                s.implement_attempts = 0;
                c.max_rounds = c.rounds + 1;
                s.change = Some(c);
                goto(node::IMPLEMENT)
            }
            other => Err(NodeError::Failed(format!(
                "`{other}` is not an answer to the review stop"
            ))),
        }
    }

    /// N5h: the run halts (fail closed) with the reason; `gavel resume` asks the reviewer again.
    pub(super) fn review_halt(
        &self,
        s: &mut ImplementState,
        cx: &mut NodeCtx<'_>,
    ) -> Result<Transition, NodeError> {
        if cx.has_step("halted")? {
            if let Some(c) = s.change.as_mut() {
                c.stop_reason = None;
                c.review_attempts = 0;
            }
            return goto(node::CODE_REVIEW);
        }
        cx.mark("halted")?;
        let reason = s
            .change
            .as_ref()
            .and_then(|c| c.stop_reason.clone())
            .unwrap_or_else(|| "the review did not decide".into());
        Ok(Transition::Halt {
            reason: format!("{reason}; `gavel resume` asks the reviewer again"),
        })
    }

    fn review_prompt(
        &self,
        s: &ImplementState,
        worktree: &Path,
        dir: &ChangeDir,
        tools: bool,
    ) -> Result<String, NodeError> {
        let wt = gavel_exec::git::Git::at(worktree);
        let lineage = self.wf.without_lineage(s)?;
        let mut diff = wt
            .run(&["diff", &s.base_commit, "--", ".", &lineage])
            .map_err(|e| NodeError::Failed(format!("cannot diff the worktree: {e}")))?;
        if diff.len() > DIFF_LIMIT {
            let mut at = DIFF_LIMIT;
            while !diff.is_char_boundary(at) {
                at -= 1;
            }
            diff.truncate(at);
            diff.push_str("\n[... the diff is cut here ...]\n");
        }
        let mut p = format!(
            "You review the implementation of {} against its plan. Judge whether the code does what the delta specs require, whether the tests prove it, and what is wrong. Verdict APPROVED (ready to merge), NEEDS_FIX (the implementer can fix the issues you list) or MAJOR_ISSUES (a person must step in).\n",
            s.subject()
        );
        for (name, path) in [("proposal.md", dir.proposal()), ("tasks.md", dir.tasks())] {
            if let Ok(t) = read_text(&path) {
                p.push_str(&format!("\n## {name}\n\n{}\n", t.trim_end()));
            }
        }
        if let Ok(specs) = crate::change::plan::files::read_specs(dir) {
            for (cap, t) in specs {
                p.push_str(&format!("\n## specs/{cap}/spec.md\n\n{}\n", t.trim_end()));
            }
        }
        if let Some(g) = &s.green {
            p.push_str(&format!("\n## Test results\n\n{}\n", g.summary));
        }
        p.push_str(&format!(
            "\n## The diff against the base\n\n```diff\n{diff}\n```\n"
        ));
        if tools {
            p.push_str("\nSubmit your review by calling the `create_review` tool of the `gavel` MCP server exactly once (verdict, summary, issues with severity, title, description, file, line and recommendation, test_results, next_steps). Nothing else is read.\n");
        } else {
            p.push_str("\nEnd your answer with exactly one JSON block, and no other JSON block:\n\n```json\n{\"verdict\": \"APPROVED\" | \"NEEDS_FIX\" | \"MAJOR_ISSUES\", \"summary\": \"...\", \"issues\": [{\"severity\": \"critical\" | \"major\" | \"minor\" | \"info\", \"title\": \"...\", \"description\": \"...\", \"file\": \"path\", \"line\": 1, \"recommendation\": \"...\"}], \"test_results\": {\"passed\": 0, \"failed\": 0, \"notes\": \"...\"}, \"next_steps\": [\"...\"]}\n```\n");
        }
        Ok(p)
    }
}
