//! The diff review as an engine gate: asked by typed word, journaled, resumable, audited once.

use gavel_core::{Confirm, NodeCtx, NodeError, Outcome, Transition, Workflow};
use gavel_workflows::review::{self, DiffReview, Reviewed};
use serde::{Deserialize, Serialize};

use crate::kit::{Kit, answer};

/// review → commit, the way a code-committing workflow places the gate.
struct Committer<'k> {
    kit: &'k Kit,
}

#[derive(Default, Serialize, Deserialize)]
struct State {
    audit_copy: Option<String>,
}

impl Workflow for Committer<'_> {
    type State = State;

    fn name(&self) -> &'static str {
        "committer"
    }

    fn run_node(
        &self,
        name: &str,
        s: &mut State,
        cx: &mut NodeCtx<'_>,
    ) -> Result<Transition, NodeError> {
        match name {
            "review" => {
                let r = DiffReview {
                    worktree: &gavel_exec::git::Git::at(self.kit.root()),
                    audit_log: &self.kit.path("docs/audit/diff-gate.jsonl"),
                    report_path: &self.kit.path("lineage/004-diff-review.md"),
                    report_rel: "lineage/004-diff-review.md",
                    bypass_attempts: &[],
                    is_test: None,
                };
                match review::diff_review(cx, &r)? {
                    Reviewed::Waiting(t) => Ok(t),
                    Reviewed::Approved { audit_line, .. } => {
                        s.audit_copy = audit_line;
                        Ok(Transition::Goto("commit".into()))
                    }
                    Reviewed::Rejected { .. } => Ok(Transition::Abort {
                        reason: "rejected at the diff review".into(),
                    }),
                }
            }
            _ => Ok(Transition::Done {
                summary: "committed".into(),
            }),
        }
    }
}

fn staged_rewrite(kit: &Kit) {
    kit.write("README.md", "completely different\ncontent\n");
    kit.write("src/new.rs", "fn main() {}\n");
    kit.git(&["add", "-A"]);
}

/// Starts a run and drives it to the review gate.
fn at_the_review(kit: &Kit, wf: &Committer<'_>) -> (gavel_core::RunId, gavel_core::GateRequest) {
    let run = kit
        .engine(wf)
        .start("c", &State::default(), "review")
        .expect("start");
    (run, kit.to_gate(wf, run, None))
}

#[test]
fn the_review_waits_for_a_typed_approve_and_audits_once() {
    let kit = Kit::new();
    staged_rewrite(&kit);
    let wf = Committer { kit: &kit };
    let (run, gate) = at_the_review(&kit, &wf);
    assert_eq!(gate.kind, review::KIND);
    assert_eq!(
        gate.present.confirm,
        Confirm::Word,
        "a key press is not enough"
    );
    assert!(gate.typed_choice("a").is_none() && gate.typed_choice("approve").is_some());
    assert!(kit.read("lineage/004-diff-review.md").contains("README.md"));
    // Asked again after a closed terminal: the same gate, nothing audited yet.
    assert_eq!(kit.to_gate(&wf, run, None).id, gate.id);
    assert!(!kit.path("docs/audit/diff-gate.jsonl").exists());
    let done = kit
        .drive(&wf, run, answer(&gate, "approve"))
        .expect("drive");
    assert!(matches!(done, Outcome::Done { .. }), "{done:?}");
    let log = kit.read("docs/audit/diff-gate.jsonl");
    assert_eq!(log.lines().count(), 1, "{log}");
    assert!(
        log.contains("\"decision\":\"APPROVED\"") && log.contains(&gate.id),
        "{log}"
    );
}

#[test]
fn a_rejection_aborts_and_is_audited() {
    let kit = Kit::new();
    staged_rewrite(&kit);
    let wf = Committer { kit: &kit };
    let (run, gate) = at_the_review(&kit, &wf);
    let out = kit.drive(&wf, run, answer(&gate, "reject")).expect("drive");
    assert!(matches!(out, Outcome::Aborted { .. }), "{out:?}");
    assert!(kit.read("docs/audit/diff-gate.jsonl").contains("REJECTED"));
}

#[test]
fn nothing_staged_needs_no_review() {
    let kit = Kit::new();
    let wf = Committer { kit: &kit };
    let run = kit
        .engine(&wf)
        .start("c", &State::default(), "review")
        .expect("start");
    let out = kit.drive(&wf, run, None).expect("drive");
    assert!(matches!(out, Outcome::Done { .. }), "{out:?}");
}
