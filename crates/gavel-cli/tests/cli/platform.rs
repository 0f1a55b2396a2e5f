//! The workflow-neutral platform (issue 11): commands that serve every workflow never assume
//! the issue workflow, and a run's state is read strictly.

use gavel_core::RunStore;
use gavel_store::SqliteStore;

use crate::util::*;

/// A run of a workflow this gavel does not know, created straight in the store.
fn foreign_run(env: &Env, workflow: &str, state: &[u8]) -> String {
    std::fs::create_dir_all(env.repo.join(".gavel")).expect("mkdir");
    let store = SqliteStore::open(&env.state_db()).expect("store");
    let id = store
        .create_run(workflow, "other", state, "start", FIXED_NOW)
        .expect("create");
    id.to_string()
}

#[test]
fn a_run_of_an_unknown_workflow_is_refused_by_resume_and_aborted_with_the_store_alone() {
    let env = Env::new();
    let run = foreign_run(&env, "from-the-future", b"{}");
    let out = env.run(&["resume", &run]);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("`from-the-future` workflow cannot be driven by this gavel"),
        "{}",
        show_output(&out)
    );
    // Aborting needs no providers: it works even with a broken role in gavel.toml.
    env.set_roles("nonsense", "nonsense");
    assert_exit(&env.run(&["abort", &run]), 0);
    assert_eq!(env.runs()[0]["status"], "aborted");
}

#[test]
fn a_state_that_does_not_parse_is_an_error_never_a_default() {
    let env = Env::new();
    env.script(&script(1, &[]));
    let run = foreign_run(&env, "issue", br#"{"auto": "maybe"}"#);
    let out = env.run(&["resume", &run]);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains(&format!("the state of run {run} cannot be read")),
        "{}",
        show_output(&out)
    );
    assert!(env.calls().is_empty(), "nothing ran on a guessed state");
}

#[test]
fn role_changes_are_checked_against_the_runs_workflow() {
    let env = Env::new();
    env.script(&script(1, &[]));
    let run = start_paused(&env, "dark-mode");
    let out = env.run(&["resume", &run, "--role", "planner=scripted:x.yaml"]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("have no role `planner`")
            && stderr(&out).contains("drafter, reviewer"),
        "{}",
        show_output(&out)
    );
}

#[test]
fn doctor_and_preflight_warn_when_the_reviewer_is_the_drafters_own_model() {
    let env = Env::new();
    env.script(&script(1, &[APPROVED]));
    let doctor = env.run(&["doctor"]);
    let text = String::from_utf8_lossy(&doctor.stdout).into_owned();
    assert!(
        text.contains("judge its own work"),
        "{}",
        show_output(&doctor)
    );
    let brief = env.brief("dark-mode");
    let out = env.run(&["issue", &brief, "--auto"]);
    assert_exit(&out, 0);
    assert!(
        stderr(&out).contains("judge its own work"),
        "{}",
        show_output(&out)
    );
}

#[test]
fn a_gate_confirmed_by_a_typed_word_takes_no_choice_flag() {
    let env = Env::new();
    let run = foreign_run(&env, "issue", b"{}");
    let store = SqliteStore::open(&env.state_db()).expect("store");
    let id: gavel_core::RunId = run.parse().expect("id");
    let mut gate = gavel_core::GateRequest {
        id: "review@4".into(),
        node: "review".into(),
        kind: "diff-review".into(),
        title: "Review the staged changes".into(),
        detail: None,
        artifacts: vec![],
        choices: vec![
            gavel_core::Choice::new("approve", 'A', "commit"),
            gavel_core::Choice::new("reject", 'R', "do not"),
        ],
        recommended: None,
        present: Box::default(),
    };
    gate.present.confirm = gavel_core::Confirm::Word;
    store
        .set_status(id, &gavel_core::RunStatus::Waiting { gate }, &[], FIXED_NOW)
        .expect("status");
    let out = env.run(&["resume", &run, "--choice", "approve"]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("answered only by typing the word at a terminal"),
        "{}",
        show_output(&out)
    );
}

#[test]
fn every_run_keeps_a_log_file() {
    let env = Env::new();
    env.script(&script(1, &[APPROVED]));
    let brief = env.brief("dark-mode");
    assert_exit(&env.run(&["issue", &brief, "--auto"]), 0);
    let log = std::fs::read_to_string(env.repo.join(".gavel/logs/run-1.log")).expect("run log");
    for needle in ["node started", "N6_file", "model call", "role=reviewer"] {
        assert!(
            log.contains(needle),
            "{needle:?} missing from the log:\n{log}"
        );
    }
}

#[test]
fn a_workflow_section_sets_its_own_lineage_folder_and_template() {
    let env = Env::new();
    env.script(&script(1, &[APPROVED]));
    env.write(
        "docs/templates/short.md",
        "# TITLE\n\nSHORT-TEMPLATE-MARKER\n",
    );
    let config = env.read("gavel.toml");
    env.write(
        "gavel.toml",
        &format!(
            "{config}\n[workflows.issue]\nlineage = \"records\"\ntemplate = \"docs/templates/short.md\"\n"
        ),
    );
    let brief = env.brief("dark-mode");
    assert_exit(&env.run(&["issue", &brief, "--auto"]), 0);
    assert!(
        env.exists("records/done/1-dark-mode/001-brief.md"),
        "{:?}",
        env.ls("records/done")
    );
    assert!(
        env.prompt(gavel_llm::Role::DRAFTER, 0)
            .contains("SHORT-TEMPLATE-MARKER")
    );
    let bad = env
        .read("gavel.toml")
        .replace("lineage = \"records\"", "lineage = \"../out\"");
    env.write("gavel.toml", &bad);
    let out = env.run(&["runs"]);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("workflows.issue.lineage"),
        "{}",
        show_output(&out)
    );
}
