//! A typed approve is typed (issue 31): an `approve` typed before the diff gate's question
//! answers nothing, a bypass variable is recorded on the workflow gate's audit line as on the
//! command's, and a run killed after its merge finishes with the same `merged.json`, a clean
//! checkout and one audit line.

use crate::implement::{CODE, TESTS, python_project, start};
use crate::util::*;

/// The diff gate's audit log, one JSON object per line.
fn audit(env: &Env) -> Vec<serde_json::Value> {
    env.read("docs/audit/diff-gate.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).expect("an audit line is JSON"))
        .collect()
}

#[test]
fn regression_approve_typed_before_the_question_answers_nothing() {
    let env = python_project(&[TESTS, CODE]);
    assert_exit(&start(&env), 3);
    let editor = crate::pty::fake_editor(&env);
    let mut p = crate::pty::spawn(&env, &["resume", "1"], &editor.to_string_lossy());
    // Typed at once, while gavel is still starting: long before it asks.
    p.send_line("approve").expect("type ahead");
    p.exp_string("Your choice [approve/reject/P]: ")
        .expect("the gate asks");
    p.send_line("reject").expect("reject");
    p.exp_string("a person rejected the change at the diff gate")
        .expect("the answer typed after the question decides");
    p.exp_eof().expect("eof");
    assert!(
        !env.exists("calc.py"),
        "merged on an answer typed before the question"
    );
}

#[test]
fn regression_a_bypass_variable_is_recorded_on_the_workflow_gates_audit_line() {
    let env = python_project(&[TESTS, CODE]);
    assert_exit(&start(&env), 3);
    let editor = crate::pty::fake_editor(&env);
    let mut cmd = env.gavel(&["resume", "1"]);
    cmd.env("EDITOR", editor.as_os_str())
        .env("TERM", "dumb")
        .env("GAVEL_AUTO_APPROVE", "1");
    let mut p = rexpect::session::spawn_command(cmd, Some(30_000)).expect("spawn in a pty");
    p.exp_string("Your choice [approve/reject/P]: ")
        .expect("the variable does not skip the gate");
    p.send_line("approve").expect("approve");
    p.exp_eof().expect("eof");
    let log = audit(&env);
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!(log[0]["decision"], "APPROVED");
    assert_eq!(log[0]["bypass_attempted"], true, "{log:?}");
    assert_eq!(
        log[0]["bypass_attempts"],
        serde_json::json!(["GAVEL_AUTO_APPROVE"])
    );
}

#[test]
fn regression_a_run_killed_after_its_merge_finishes_with_one_record_of_everything() {
    let env = python_project(&[TESTS, CODE]);
    assert_exit(&start(&env), 3);
    // Killed right after the lineage commit, the merge into main made before it.
    let editor = crate::pty::fake_editor(&env);
    let mut cmd = env.gavel(&["resume", "1"]);
    cmd.env("EDITOR", editor.as_os_str())
        .env("TERM", "dumb")
        .env("GAVEL_CRASH_AT", "after-journal:commit");
    let mut p = rexpect::session::spawn_command(cmd, Some(30_000)).expect("spawn in a pty");
    p.exp_string("Your choice [approve/reject/P]: ")
        .expect("the gate asks");
    p.send_line("approve").expect("approve");
    p.exp_eof().expect("eof");
    let out = env.run(&["resume", "1"]);
    assert_exit(&out, 0);
    assert_eq!(
        env.status(),
        "",
        "the checkout is clean: {}",
        show_output(&out)
    );
    let log = audit(&env);
    assert_eq!(log.len(), 1, "one audit line: {log:?}");
    let merged = env.ls("docs/lineage/done/1-impl");
    let json: Vec<&String> = merged
        .iter()
        .filter(|n| n.ends_with("merged.json"))
        .collect();
    assert_eq!(json.len(), 1, "{merged:?}");
    let record: serde_json::Value =
        serde_json::from_str(&env.read(&format!("docs/lineage/done/1-impl/{}", json[0])))
            .expect("merged.json");
    assert_eq!(record["merged"], "fast-forward", "{record}");
}
