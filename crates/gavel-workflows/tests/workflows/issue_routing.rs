//! The issue workflow's routing, budget and filing, driven in process (no binary spawned):
//! auto mode revises on REVISE and files on a clean APPROVED, a budget halts before a call, and
//! an unparseable verdict waits for a person even in auto mode.

use gavel_core::{Outcome, RunId, Store};
use gavel_llm::{PriceTable, ScriptedProvider};
use gavel_workflows::caller::CallerSettings;
use gavel_workflows::issue::{
    IssueSettings, IssueState, IssueWorkflow, RUBRIC_PATH, Roles, TEMPLATE_PATH, node,
};
use gavel_workflows::tracker::local::LocalTracker;

use crate::kit::{Kit, answer};

const DRAFT: &str = "# Add dark mode\n\n**Labels:** ui\n\n## Acceptance criteria\n- [ ] dark\n";
const APPROVED: &str = "```json\n{\"verdict\": \"APPROVED\", \"findings\": []}\n```\n";
const REVISE: &str = "```json\n{\"verdict\": \"REVISE\", \"findings\": [\"vague\"]}\n```\n";

fn yaml(s: &str) -> String {
    serde_json::to_string(s).expect("json")
}

/// A kit repository with gavel's template and rubric, a script, and the workflow over it.
fn setup(kit: &Kit, drafts: usize, verdicts: &[&str], budget: Option<u64>) -> IssueWorkflow {
    kit.write(TEMPLATE_PATH, "# Title\n\n**Labels:**\n");
    kit.write(RUBRIC_PATH, "Judge the issue.\n");
    let mut script = String::from("model: gpt-4o\nroles:\n  drafter:\n");
    for _ in 0..drafts {
        script.push_str(&format!("    - text: {}\n", yaml(DRAFT)));
    }
    script.push_str("  reviewer:\n");
    for v in verdicts {
        script.push_str(&format!("    - text: {}\n", yaml(v)));
    }
    let path = kit.write("script.yaml", &script);
    IssueWorkflow {
        kind: &gavel_workflows::issue::ISSUE,
        settings: IssueSettings {
            repo_root: kit.root().to_path_buf(),
            lineage_dir: "docs/lineage".into(),
            ideas_dir: "ideas".into(),
            template_path: TEMPLATE_PATH.into(),
            max_iterations: 20,
            editor_program: None,
            calls: CallerSettings {
                budget_override: budget,
                prices: PriceTable::default(),
                strict_models: false,
                max_output_tokens: 1000,
            },
            roles: Roles {
                drafter: "scripted:script.yaml".into(),
                reviewer: "scripted:script.yaml".into(),
            },
            drafter_reads_repo: false,
        },
        drafter: Box::new(ScriptedProvider::new(path.clone())),
        reviewer: Box::new(ScriptedProvider::new(path)),
        tracker: Box::new(LocalTracker::new(kit.root(), "docs/issues".as_ref())),
        observer: None,
    }
}

fn start(kit: &Kit, wf: &IssueWorkflow, auto: bool) -> RunId {
    let state = IssueState::new(
        "k1".into(),
        "brief.md".into(),
        "# Dark mode\n\nToo bright.\n".into(),
        "dark-mode".into(),
        None,
        auto,
        "2026-01-30T14:33:20Z".into(),
    );
    kit.engine(wf)
        .start_claiming_slug("dark-mode", &state, node::LOAD_BRIEF)
        .expect("start")
}

fn state(kit: &Kit, run: RunId) -> IssueState {
    let head = kit.store.head(run).expect("head").expect("checkpoint");
    serde_json::from_slice(&head.state).expect("state")
}

#[test]
fn auto_mode_revises_on_revise_and_files_on_a_clean_approval() {
    let kit = Kit::new();
    let wf = setup(&kit, 2, &[REVISE, APPROVED], None);
    let run = start(&kit, &wf, true);
    let out = kit.drive(&wf, run, None).expect("drive");
    assert!(matches!(out, Outcome::Done { .. }), "{out:?}");
    let s = state(&kit, run);
    assert_eq!((s.draft_count, s.verdict_count), (2, 2));
    assert_eq!(
        s.spend.call_count, 4,
        "two drafts and two verdicts in the ledger"
    );
    let filed = s.filed.expect("filed");
    assert_eq!(filed.number, 1);
    let names: Vec<String> = std::fs::read_dir(kit.path(&filed.lineage))
        .expect("lineage")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names.len(),
        6,
        "brief, 2 drafts, 2 verdicts, filed.json: {names:?}"
    );
    assert!(
        kit.git(&["log", "--format=%s"])
            .contains("gavel: file issue #1")
    );
}

#[test]
fn a_budget_too_small_halts_before_the_first_call() {
    let kit = Kit::new();
    let wf = setup(&kit, 1, &[APPROVED], Some(1));
    let run = start(&kit, &wf, true);
    let out = kit.drive(&wf, run, None).expect("drive");
    match out {
        Outcome::Halted { reason } => assert!(reason.contains("budget"), "{reason}"),
        other => panic!("expected a halt, got {other:?}"),
    }
    assert_eq!(state(&kit, run).spend.call_count, 0, "no call was made");
    assert!(
        gavel_llm::read_call_log(&kit.path("script.yaml"))
            .expect("log")
            .is_empty()
    );
}

#[test]
fn an_unparseable_verdict_waits_for_a_person_even_in_auto_mode() {
    let kit = Kit::new();
    let wf = setup(&kit, 1, &["Looks great, APPROVED!"], None);
    let run = start(&kit, &wf, true);
    let gate = kit.to_gate(&wf, run, None);
    assert_eq!(gate.kind, "verdict");
    assert_eq!(
        gate.recommended, None,
        "nothing is recommended over an unparseable verdict"
    );
    assert_eq!(
        gate.present.preview.as_deref(),
        gate.artifacts.get(1).map(String::as_str)
    );
    let out = kit
        .drive(&wf, run, answer(&gate, "approve"))
        .expect("drive");
    assert!(matches!(out, Outcome::Done { .. }), "{out:?}");
    assert!(
        kit.timeline(run)
            .contains("a person approved over a UNPARSEABLE")
    );
}

#[test]
fn the_iteration_cap_halts_and_never_files() {
    let kit = Kit::new();
    let mut wf = setup(&kit, 3, &[REVISE, REVISE, REVISE], None);
    wf.settings.max_iterations = 2;
    let run = start(&kit, &wf, true);
    match kit.drive(&wf, run, None).expect("drive") {
        Outcome::Halted { reason } => assert!(reason.contains("max iterations"), "{reason}"),
        other => panic!("expected a halt, got {other:?}"),
    }
    let s = state(&kit, run);
    assert_eq!((s.draft_count, s.verdict_count), (2, 2));
    assert!(s.filed.is_none());
}

#[test]
fn a_person_revises_at_the_draft_gate_and_the_reviewer_is_not_called() {
    let kit = Kit::new();
    let wf = setup(&kit, 2, &[APPROVED], None);
    let run = start(&kit, &wf, false);
    let gate = kit.to_gate(&wf, run, None);
    assert_eq!(gate.kind, "draft");
    assert_eq!(
        gate.present.open, gate.artifacts,
        "the draft opens in the editor"
    );
    let mut revise = answer(&gate, "revise");
    if let Some(a) = revise.as_mut() {
        a.feedback = Some("Name the toggle.".into());
    }
    let second = kit.to_gate(&wf, run, revise);
    assert_eq!(second.kind, "draft");
    let s = state(&kit, run);
    assert_eq!(
        (s.draft_count, s.verdict_count),
        (2, 0),
        "seed scenario 060"
    );
    let verdict = kit.to_gate(&wf, run, answer(&second, "send"));
    assert_eq!(verdict.kind, "verdict");
    assert_eq!(verdict.recommended.as_deref(), Some("approve"));
    let out = kit
        .drive(&wf, run, answer(&verdict, "approve"))
        .expect("drive");
    assert!(matches!(out, Outcome::Done { .. }), "{out:?}");
}

#[test]
fn a_tracker_failure_offers_retry_edit_abort_and_retry_files_once() {
    let kit = Kit::new();
    let wf = setup(&kit, 1, &[APPROVED], None);
    let run = start(&kit, &wf, false);
    let draft = kit.to_gate(&wf, run, None);
    let verdict = kit.to_gate(&wf, run, answer(&draft, "send"));
    // The tracker breaks after pre-flight passed (seed scenario 110).
    std::fs::remove_dir_all(kit.path("docs/issues")).ok();
    kit.write("docs/issues", "not a folder");
    let gate = kit.to_gate(&wf, run, answer(&verdict, "approve"));
    assert_eq!(gate.kind, "file-error");
    assert_eq!(gate.choice_names(), ["retry", "edit", "abort"]);
    std::fs::remove_file(kit.path("docs/issues")).expect("repair");
    let out = kit.drive(&wf, run, answer(&gate, "retry")).expect("drive");
    assert!(matches!(out, Outcome::Done { .. }), "{out:?}");
    let issues: Vec<_> = std::fs::read_dir(kit.path("docs/issues"))
        .expect("issues")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".md"))
        .collect();
    assert_eq!(issues.len(), 1);
}

#[test]
fn a_verdict_from_a_downgraded_model_waits_for_a_person_in_auto_mode() {
    let kit = Kit::new();
    let wf = setup(&kit, 1, &[APPROVED], None);
    // The reviewer's answer claims a smaller model than the one asked for.
    let script = kit.read("script.yaml").replace(
        &format!("    - text: {}\n", yaml(APPROVED)),
        &format!("    - text: {}\n      model: gpt-4o-mini\n", yaml(APPROVED)),
    );
    kit.write("script.yaml", &script);
    let run = start(&kit, &wf, true);
    let gate = kit.to_gate(&wf, run, None);
    assert_eq!(gate.kind, "verdict");
    assert_eq!(gate.recommended, None);
    assert!(
        gate.detail
            .as_deref()
            .unwrap_or_default()
            .contains("WARNING"),
        "{gate:?}"
    );
}
