//! The implement workflow's routing, driven in process (no binary spawned): the kit's pipeline
//! with the `Issue` stage, a scripted implementer answering in the file format, and a real test
//! command (`sh tests/check.sh`, read by its exit code) in the run's worktree. Red then green
//! reaches the diff gate and an `approve` merges; tests that pass before any code, or code that
//! stays red, halt when the retries run out; a `reject` at the diff gate and an `abort` at a
//! test run's stop gate end the run without merging.

use std::path::Path;
use std::time::Duration;

use gavel_core::{Outcome, RunId};
use gavel_llm::ScriptedProvider;
use gavel_workflows::implement::{
    CommandSettings, ImplementSettings, ImplementState, ImplementWorkflow, Issue, RunnerKind, node,
};
use gavel_workflows::kit::Stage;

use crate::kit::{Kit, aborted, answer, choices, halted};

/// The test the scaffold step writes: red until `done.txt` says `ok`.
pub const TESTS: &str = "=== gavel:write tests/check.sh\ngrep -q ok done.txt\n=== gavel:end\n";
/// The implementation that makes it green.
pub const CODE: &str = "=== gavel:write done.txt\nok\n=== gavel:end\n";
/// An implementation that leaves it red.
const WRONG: &str = "=== gavel:write done.txt\nnot yet\n=== gavel:end\n";
/// Tests that pass before anything is implemented (so they test nothing), twice.
const ALWAYS_PASSES: [&str; 2] = [
    "=== gavel:write tests/check.sh\ntrue\n=== gavel:end\n",
    "=== gavel:write tests/check.sh\nexit 0\n=== gavel:end\n",
];

/// The pipeline over the kit's repository: the scripted roles `script` (the implementer's
/// answers, and a reviewer's), `retries` for each model step, the tests timing out after
/// `timeout`, and the stage `stage` makes from the script's path.
pub fn pipeline(
    kit: &Kit,
    script: &[(&str, &[&str])],
    retries: u32,
    timeout: Duration,
    stage: impl FnOnce(&Path) -> Box<dyn Stage>,
) -> ImplementWorkflow {
    let script = kit.script(script);
    let stage = stage(&script);
    ImplementWorkflow {
        settings: ImplementSettings {
            repo_root: kit.root().to_path_buf(),
            lineage_dir: "docs/lineage".into(),
            test: CommandSettings {
                command: "sh tests/check.sh".into(),
                timeout,
            },
            runner: RunnerKind::Generic,
            test_globs: vec!["tests/".into()],
            lint: None,
            scaffold_retries: retries,
            implement_retries: retries,
            agent: false,
            confine: None,
            calls: crate::kit::calls(),
            implementer: "scripted:script.yaml".into(),
            reviewer: None,
            audit_log: "docs/audit/diff-gate.jsonl".into(),
            output_limit: 64 * 1024,
            pass_env: Vec::new(),
            test_network: false,
            spare_worktrees: 1,
            bypass_attempts: Vec::new(),
        },
        implementer: Box::new(ScriptedProvider::new(script)),
        stage,
        observer: None,
        carry: Default::default(),
    }
}

/// A new run's state for the kit's repository at its HEAD (issue 1's LLD, or a change's plan).
pub fn new_state(kit: &Kit, design: &str) -> ImplementState {
    let head = kit.git(&["rev-parse", "HEAD"]).trim().to_owned();
    let mut s = ImplementState::new(
        "k1".into(),
        1,
        "Done file".into(),
        "docs/design.md".into(),
        design.into(),
        head,
        "main".into(),
        true,
        "2026-01-30T14:33:20Z".into(),
    );
    s.implementer = Some("scripted:script.yaml".into());
    s
}

/// Starts the run `s` of `wf` under its worktree's name.
pub fn start(kit: &Kit, wf: &ImplementWorkflow, s: &ImplementState) -> RunId {
    kit.engine(wf)
        .start_claiming_slug(&s.worktree_name(), s, node::LOAD)
        .expect("start")
}

/// An issue run whose implementer answers `answers` in order, started.
fn issue_run(
    kit: &Kit,
    answers: &[&str],
    retries: u32,
    timeout: Duration,
) -> (ImplementWorkflow, RunId) {
    let wf = pipeline(kit, &[("implementer", answers)], retries, timeout, |_| {
        Box::new(Issue)
    });
    let run = start(
        kit,
        &wf,
        &new_state(kit, "# Design\n\n`done.txt` says ok.\n"),
    );
    (wf, run)
}

const MINUTE: Duration = Duration::from_secs(60);

#[test]
fn red_then_green_reaches_the_diff_gate_and_an_approval_merges() {
    let kit = Kit::new();
    let (wf, run) = issue_run(&kit, &[TESTS, CODE], 1, MINUTE);
    let gate = kit.to_gate(&wf, run, None);
    assert_eq!(gate.kind, gavel_workflows::review::KIND, "{gate:?}");
    assert!(
        gate.title.starts_with("Issue #1: review the change"),
        "{}",
        gate.title
    );
    let s: ImplementState = kit.state(run);
    assert!(s.red.is_some() && s.green.is_some(), "{s:?}");
    let done = kit
        .drive(&wf, run, answer(&gate, "approve"))
        .expect("drive");
    assert!(matches!(done, Outcome::Done { .. }), "{done:?}");
    assert_eq!(kit.read("done.txt"), "ok\n");
    assert_eq!(kit.read("tests/check.sh"), "grep -q ok done.txt\n");
    let s: ImplementState = kit.state(run);
    assert!(s.merged.is_some(), "{s:?}");
}

#[test]
fn tests_that_pass_before_any_code_halt_once_the_retries_are_used() {
    let kit = Kit::new();
    let (wf, run) = issue_run(&kit, &ALWAYS_PASSES, 1, MINUTE);
    let reason = halted(kit.drive(&wf, run, None));
    assert!(
        reason.contains("writing the tests failed 2 times"),
        "{reason}"
    );
    assert!(
        reason.contains("the tests pass before any implementation"),
        "{reason}"
    );
    assert!(!kit.path("done.txt").exists());
}

#[test]
fn code_that_stays_red_halts_once_the_retries_are_used() {
    let kit = Kit::new();
    let (wf, run) = issue_run(&kit, &[TESTS, WRONG], 0, MINUTE);
    let reason = halted(kit.drive(&wf, run, None));
    assert!(reason.contains("implementing failed 1 times"), "{reason}");
    let s: ImplementState = kit.state(run);
    assert!(s.red.is_some() && s.green.is_none(), "{s:?}");
}

#[test]
fn a_rejection_at_the_diff_gate_ends_the_run_without_merging() {
    let kit = Kit::new();
    let (wf, run) = issue_run(&kit, &[TESTS, CODE], 1, MINUTE);
    let gate = kit.to_gate(&wf, run, None);
    let reason = aborted(kit.drive(&wf, run, answer(&gate, "reject")));
    assert!(reason.contains("a person rejected the change"), "{reason}");
    assert!(!kit.path("done.txt").exists(), "nothing is merged");
    assert!(
        kit.path("docs/lineage/active/1-impl").is_dir(),
        "the lineage is kept"
    );
    assert!(
        kit.git(&["branch", "--list", "gavel/1-impl"])
            .trim()
            .is_empty()
    );
}

#[test]
fn a_test_run_that_times_out_stops_at_a_gate_and_abort_ends_the_run() {
    let kit = Kit::new();
    let slow = "=== gavel:write tests/check.sh\nsleep 5\n=== gavel:end\n";
    let (wf, run) = issue_run(&kit, &[slow], 1, Duration::from_millis(300));
    let gate = kit.to_gate(&wf, run, None);
    assert_eq!(choices(&gate), ["retry", "back", "abort"], "{gate:?}");
    let reason = aborted(kit.drive(&wf, run, answer(&gate, "abort")));
    assert!(reason.contains("aborted by a person"), "{reason}");
}
