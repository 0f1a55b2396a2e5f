//! A typed approve is typed (issue 31): an `approve` typed before the diff gate's question
//! answers nothing, a bypass variable is recorded on the workflow gate's audit line as on the
//! command's, a run killed after its merge finishes with the same `merged.json`, a clean
//! checkout and one audit line, and Ctrl-C during the merge is an interruption (exit 130,
//! nothing half merged, resumable).

use crate::util::*;

/// `gavel resume 1` in a pseudo-terminal, with `var` set, at the diff gate's question.
fn resume_at_the_gate(env: &Env, var: (&str, &str)) -> rexpect::session::PtySession {
    let editor = crate::pty::fake_editor(env);
    let mut cmd = env.gavel(&["resume", "1"]);
    cmd.env("EDITOR", editor.as_os_str())
        .env("TERM", "dumb")
        .env(var.0, var.1);
    let mut p = rexpect::session::spawn_command(cmd, Some(30_000)).expect("spawn in a pty");
    p.exp_string("Your choice [approve/reject/P]: ")
        .expect("the gate asks");
    p
}

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
    // The variable does not skip the gate: it asks.
    let mut p = resume_at_the_gate(&env, ("GAVEL_AUTO_APPROVE", "1"));
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
    let mut p = resume_at_the_gate(&env, ("GAVEL_CRASH_AT", "after-journal:commit"));
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

#[test]
fn regression_ctrl_c_during_the_merge_exits_130_and_the_run_resumes() {
    let env = python_project(&[TESTS, CODE]);
    assert_exit(&start(&env), 3);
    // The base moved, so the merge makes a merge commit; the person's own hook holds it long
    // enough for a Ctrl-C to land while git merges.
    env.write("NOTES.md", "the person kept working\n");
    env.git(&["add", "NOTES.md"]);
    env.git(&["commit", "-qm", "meanwhile"]);
    let marker = env.root.join("merging");
    let hook = env.repo.join(".git/hooks/pre-merge-commit");
    std::fs::create_dir_all(hook.parent().expect("hooks")).expect("hooks");
    std::fs::write(
        &hook,
        format!("#!/bin/sh\ntouch '{}'\nsleep 20\n", marker.display()),
    )
    .expect("hook");
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let editor = crate::pty::fake_editor(&env);
    let mut p = crate::pty::spawn(&env, &["resume", "1"], &editor.to_string_lossy());
    p.exp_string("Your choice [approve/reject/P]: ")
        .expect("the gate asks");
    p.send_line("approve").expect("approve");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !marker.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the merge never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    p.send_control('c').expect("ctrl-c");
    p.exp_eof().expect("eof");
    assert_eq!(crate::pty::exit_code(&p), 130);
    assert_eq!(env.status(), "", "no merge left half made");
    assert!(!env.exists("calc.py"));
    std::fs::remove_file(&hook).expect("the person removes the hook");
    let out = env.run(&["resume", "1"]);
    assert_exit(&out, 0);
    assert!(env.exists("calc.py"), "{}", show_output(&out));
    assert_eq!(env.status(), "");
}

#[test]
fn regression_a_worktree_changed_after_the_report_goes_back_to_the_gate_naming_the_paths() {
    let env = python_project(&[TESTS, CODE]);
    assert_exit(&start(&env), 3);
    // While the gate waits, something outside the box edits the code it showed.
    let code = env.repo.join(".gavel/worktrees/1-impl/calc.py");
    std::fs::write(&code, "def add(a, b):\n    return a + b\nEVIL = 1\n").expect("edit");
    let mut p = resume_at_the_gate(&env, ("TERM", "dumb"));
    p.send_line("approve").expect("approve");
    p.exp_string("the worktree changed after the diff gate showed it (calc.py)")
        .expect("the change is named");
    // Shown again, with the edit in the report, and asked again.
    p.exp_string("Your choice [approve/reject/P]: ")
        .expect("asked again");
    p.send_line("reject").expect("reject");
    p.exp_eof().expect("eof");
    assert!(
        !env.exists("calc.py"),
        "the edited tree was merged unreviewed"
    );
}
