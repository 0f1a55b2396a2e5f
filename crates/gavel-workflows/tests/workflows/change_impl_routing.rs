//! The `change impl` workflow's review routing, driven in process: the kit's pipeline (set up
//! as in `implement_routing`) with the change's reviewer as its stage, over a committed change
//! folder. NEEDS_FIX goes back to the implementer and a clean APPROVED to the diff gate, whose
//! approval merges the code with the change's ticked tasks and `complete` phase; MAJOR_ISSUES
//! stops at a gate where a person's `fix` buys one more round; a review that cannot be read
//! halts once the retries are used, never approving.

use std::time::Duration;

use gavel_core::{Outcome, RunId};
use gavel_llm::ScriptedProvider;
use gavel_workflows::change::implement::{
    ChangeTarget, CodeReviewer, ImplementState, ImplementWorkflow,
};

use crate::implement_routing::{CODE, TESTS, new_state, pipeline, start};
use crate::kit::{Kit, answer, choices, halted};

pub const ID: &str = "add-done";
pub const CHANGE: &str = "openspec/changes/add-done";

/// Another implementation that keeps the tests green (a fix round must change a file).
const FIXED: &str = "=== gavel:write done.txt\nok, fixed\n=== gavel:end\n";

fn review(verdict: &str) -> String {
    format!(
        "```json\n{{\"verdict\": \"{verdict}\", \"summary\": \"read it\", \"issues\": []}}\n```\n"
    )
}

/// A planned change in `phase` (`proposed`, `challenged`), committed.
pub fn planned_change(kit: &Kit, phase: &str) {
    kit.write(
        &format!("{CHANGE}/proposal.md"),
        "# Change: Add done\n\n## Why\nNothing says done.\n\n## What Changes\n- done.txt\n",
    );
    kit.write(
        &format!("{CHANGE}/specs/done/spec.md"),
        "## ADDED Requirements\n### Requirement: Done\nThe system SHALL say ok in done.txt.\n\n#### Scenario: Done\n- **WHEN** done.txt is read\n- **THEN** it says ok\n",
    );
    kit.write(
        &format!("{CHANGE}/tasks.md"),
        "## 1. Logic Layer\n- [ ] 1.1 Write done.txt\n",
    );
    kit.write(
        &format!("{CHANGE}/STATE.yaml"),
        &format!(
            "format: 1\nchange_id: add-done\nphase: {phase}\nupdated_at: 2026-01-30T14:00:00Z\n"
        ),
    );
    kit.git(&["add", "-A"]);
    kit.git(&["commit", "-q", "-m", "plan add-done"]);
}

/// A change run whose implementer and reviewer answer in order, with `retries`, started.
fn change_run(
    kit: &Kit,
    implementer: &[&str],
    reviews: &[String],
    retries: u32,
) -> (ImplementWorkflow, RunId) {
    change_run_with(kit, implementer, reviews, retries, |script| {
        Box::new(ScriptedProvider::new(script.to_path_buf()))
    })
}

/// [`change_run`], with the reviewer's provider made from the script's path by `reviewer`.
pub(crate) fn change_run_with(
    kit: &Kit,
    implementer: &[&str],
    reviews: &[String],
    retries: u32,
    reviewer: impl FnOnce(&std::path::Path) -> Box<dyn gavel_llm::Provider>,
) -> (ImplementWorkflow, RunId) {
    planned_change(kit, "challenged");
    let reviews: Vec<&str> = reviews.iter().map(String::as_str).collect();
    let script = [("implementer", implementer), ("reviewer", &reviews)];
    let mut wf = pipeline(kit, &script, retries, Duration::from_secs(60), |script| {
        Box::new(CodeReviewer {
            provider: reviewer(script),
            mcp: None,
        })
    });
    wf.settings.reviewer = Some("scripted:script.yaml".into());
    let mut s = new_state(kit, "# Plan\n\n`done.txt` says ok.\n");
    s.change = Some(ChangeTarget {
        id: ID.into(),
        changes_root: "openspec".into(),
        reviewer: "scripted:script.yaml".into(),
        max_rounds: 3,
        rounds: 0,
        planning_iterations: 1,
        reviewer_calls: 0,
        verdict: None,
        review_artifact: None,
        tasks_checked: false,
        checkout_state: None,
        review_attempts: 0,
        stop_reason: None,
        start_note: None,
    });
    let run = start(kit, &wf, &s);
    (wf, run)
}

#[test]
fn needs_fix_goes_back_to_the_implementer_and_a_clean_approval_merges_the_change() {
    let kit = Kit::new();
    let (wf, run) = change_run(
        &kit,
        &[TESTS, CODE, FIXED],
        &[review("NEEDS_FIX"), review("APPROVED")],
        1,
    );
    let gate = kit.to_gate(&wf, run, None);
    assert!(
        gate.title.starts_with("Change `add-done`: review the code"),
        "{}",
        gate.title
    );
    let s: ImplementState = kit.state(run);
    let c = s.change.expect("change");
    assert_eq!((c.rounds, c.reviewer_calls), (2, 2));
    let done = kit
        .drive(&wf, run, answer(&gate, "approve"))
        .expect("drive");
    assert!(matches!(done, Outcome::Done { .. }), "{done:?}");
    assert_eq!(kit.read("done.txt"), "ok, fixed\n");
    assert!(
        kit.read(&format!("{CHANGE}/tasks.md"))
            .contains("- [x] 1.1")
    );
    assert!(
        kit.read(&format!("{CHANGE}/STATE.yaml"))
            .contains("phase: complete")
    );
    assert!(
        kit.read(&format!("{CHANGE}/REVIEW.md"))
            .contains("APPROVED")
    );
}

#[test]
fn major_issues_stop_at_a_gate_and_fix_buys_one_more_round() {
    let kit = Kit::new();
    let (wf, run) = change_run(
        &kit,
        &[TESTS, CODE, FIXED],
        &[review("MAJOR_ISSUES"), review("APPROVED")],
        1,
    );
    let stop = kit.to_gate(&wf, run, None);
    assert!(
        stop.title.contains("the reviewer says MAJOR_ISSUES"),
        "{}",
        stop.title
    );
    assert_eq!(choices(&stop), ["review", "fix"], "no approval to accept");
    let gate = kit.to_gate(&wf, run, answer(&stop, "fix"));
    assert_eq!(gate.kind, gavel_workflows::review::KIND, "{gate:?}");
    let s: ImplementState = kit.state(run);
    let c = s.change.expect("change");
    assert_eq!(
        c.verdict,
        Some(gavel_workflows::verdict::ChangeVerdict::Approved)
    );
    assert_eq!(
        c.max_rounds, 2,
        "a person's fix adds one round to the one used"
    );
}

#[test]
fn a_review_that_cannot_be_read_halts_once_the_retries_are_used() {
    let kit = Kit::new();
    let (wf, run) = change_run(&kit, &[TESTS, CODE], &["Looks good to me.".into()], 0);
    let reason = halted(kit.drive(&wf, run, None));
    assert!(reason.contains("no structured review"), "{reason}");
    assert!(reason.contains("the phase stays implementing"), "{reason}");
    assert!(
        kit.read(&format!("{CHANGE}/STATE.yaml"))
            .contains("phase: implementing")
    );
}
