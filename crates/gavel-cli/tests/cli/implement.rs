//! `gavel implement ISSUE` end to end on real sample projects with the scripted implementer:
//! the red gate on the real test runner, the green gate, the diff gate typed in a terminal,
//! and the merge; the person's checkout untouched until then; a test-cheating implementation
//! refused.

use crate::util::*;

#[test]
fn a_python_design_is_implemented_red_then_green_and_merged_after_a_typed_approval() {
    let env = python_project(&[TESTS, CODE]);
    let status_before = env.status();
    let out = start(&env);
    assert_exit(&out, 3);
    let text = show_output(&out);
    assert!(text.contains("red gate: "), "{text}");
    assert!(text.contains("green gate: "), "{text}");
    assert!(text.contains("lint skipped"), "{text}");
    assert!(
        text.contains("gavel resume 1`, then type one of: approve, reject"),
        "{text}"
    );
    // Until the merge the person's checkout shows nothing at all.
    assert_eq!(env.status(), status_before);
    assert!(!env.exists("calc.py") && !env.exists("tests/test_calc.py"));
    approve_in_a_terminal(&env, "1");
    assert_eq!(env.read("calc.py"), "def add(a, b):\n    return a + b\n");
    assert!(env.exists("tests/test_calc.py"));
    let log = env.git(&["log", "--format=%s"]);
    assert!(log.contains("gavel: implement #1 Dark mode"), "{log}");
    assert!(
        log.contains("gavel: lineage of the implementation of #1"),
        "{log}"
    );
    let lineage = env.ls("docs/lineage/done/1-impl");
    assert!(lineage.iter().any(|n| n.ends_with("red.md")), "{lineage:?}");
    assert!(
        lineage.iter().any(|n| n.ends_with("green.md")),
        "{lineage:?}"
    );
    assert!(
        lineage.iter().any(|n| n.ends_with("merged.json")),
        "{lineage:?}"
    );
    assert_eq!(env.status(), "", "everything is committed");
    assert!(
        !env.git(&["branch", "--list", "gavel/*"])
            .contains("gavel/1-impl"),
        "branch removed"
    );
    assert!(!env.exists(".gavel/worktrees/1-impl"), "worktree removed");
}

#[test]
fn tests_that_already_pass_go_back_to_the_scaffold_and_an_edited_test_is_refused() {
    let passing =
        "=== gavel:write tests/test_ok.py\ndef test_ok():\n    assert True\n=== gavel:end\n";
    let cheat = "=== gavel:write tests/test_calc.py\ndef test_add():\n    assert True\n=== gavel:end\n=== gavel:write calc.py\nx = 1\n=== gavel:end\n";
    let env = python_project(&[passing, TESTS, cheat, CODE]);
    let out = start(&env);
    assert_exit(&out, 3);
    let text = show_output(&out);
    assert!(
        text.contains("the tests pass before any implementation"),
        "{text}"
    );
    assert!(
        text.contains("the implementation may not change a test file"),
        "{text}"
    );
    approve_in_a_terminal(&env, "1");
    assert_eq!(
        env.read("tests/test_calc.py"),
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    );
}

/// The seed's TS-04: a still-failing implementation is retried 3 times (the default), then
/// the run halts naming the last failure; nothing is merged; abort removes the worktree.
#[test]
fn exhausted_retries_halt_and_never_merge() {
    let wrong = "=== gavel:write calc.py\ndef add(a, b):\n    return a - b\n=== gavel:end\n";
    let env = python_project(&[TESTS, wrong, wrong, wrong, wrong]);
    let out = start(&env);
    assert_exit(&out, 4);
    let text = show_output(&out);
    assert!(
        text.contains("implementing failed 4 times (retries: 3)"),
        "{text}"
    );
    assert!(
        text.contains("the tests do not pass yet: 1 failed"),
        "{text}"
    );
    assert!(!env.exists("calc.py"), "nothing merged");
    let out = env.run(&["abort", "1"]);
    assert_exit(&out, 0);
    assert!(
        show_output(&out).contains("worktree and branch gavel/1-impl were removed"),
        "{}",
        show_output(&out)
    );
    assert!(!env.exists(".gavel/worktrees/1-impl"));
    let kept = env.ls("docs/lineage/active/1-impl");
    assert!(
        kept.iter().any(|n| n.ends_with("feedback.md")),
        "the aborted run's lineage stays readable: {kept:?}"
    );
}

/// The seed's TS-06: a person rejects at the diff gate: the worktree and branch are removed
/// and nothing is merged.
#[test]
fn a_rejection_at_the_diff_gate_cleans_up_and_merges_nothing() {
    let env = python_project(&[TESTS, CODE]);
    let out = start(&env);
    assert_exit(&out, 3);
    let editor = crate::pty::fake_editor(&env);
    let mut p = crate::pty::spawn(&env, &["resume", "1"], &editor.to_string_lossy());
    p.exp_string("Your choice [approve/reject/P]: ")
        .expect("diff gate");
    p.send_line("reject").expect("reject");
    p.exp_eof().expect("eof");
    assert!(!env.exists("calc.py"), "nothing merged");
    assert!(!env.exists(".gavel/worktrees/1-impl"), "worktree removed");
    assert!(
        !env.git(&["branch", "--list"]).contains("gavel/1-impl"),
        "branch removed"
    );
    assert_eq!(env.runs()[0]["status"], "aborted");
}

/// The seed's TS-03 and TS-05 for implement: context is refused before anything runs.
#[test]
fn secrets_and_escapes_in_the_context_are_refused_before_anything_runs() {
    let env = python_project(&[TESTS, CODE]);
    env.write(".env", "API_TOKEN=1\n");
    std::fs::write(env.root.join("pass"), "outside\n").expect("outside");
    for (path, rule) in [(".env", "secret-name"), ("../pass", "outside-repository")] {
        let out = env.run(&[
            "implement",
            "1",
            "--lld",
            "docs/design.md",
            "--test-cmd",
            PYTEST,
            "--context",
            path,
        ]);
        assert_exit(&out, 2);
        assert!(stderr(&out).contains(rule), "{path}: {}", show_output(&out));
        assert!(!env.state_db().exists(), "{path}: nothing written");
        assert!(!env.exists(".gavel/worktrees"), "{path}: no worktree");
    }
}

#[test]
fn an_lld_not_approved_by_gavel_is_refused_unless_named() {
    let env = python_project(&[TESTS, CODE]);
    let out = env.run(&["implement", "1", "--test-cmd", PYTEST]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("issue #1 has no LLD at docs/lld/active/LLD-1.md"),
        "{}",
        show_output(&out)
    );
    env.write("docs/lld/active/LLD-1.md", "# hand-written\n");
    let out = env.run(&["implement", "1", "--test-cmd", PYTEST]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("was not approved by gavel"),
        "{}",
        show_output(&out)
    );
    let out = env.run(&["implement", "1", "--lld", "docs/design.md"]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("no test command"),
        "{}",
        show_output(&out)
    );
    assert!(!env.state_db().exists(), "nothing written");
}

/// Issue 34: a finished boxed run's worktree is kept as a spare, and the next run starts from
/// it instead of checking out every file: its timeline says so, and it runs, and merges, as a
/// fresh one would.
#[test]
fn the_next_run_starts_from_the_last_runs_spare_worktree() {
    let env = python_project(&[TESTS, CODE]);
    let out = start(&env);
    assert_exit(&out, 3);
    assert!(!show_output(&out).contains("made from a spare"));
    let out = env.run(&["abort", "1"]);
    assert_exit(&out, 0);
    assert!(!env.exists(".gavel/worktrees/1-impl"));
    assert_eq!(
        env.ls(".gavel/worktrees/.spare").len(),
        1,
        "kept as a spare"
    );
    assert!(
        !env.git(&["branch", "--list"]).contains("gavel/1-impl"),
        "its branch is gone"
    );
    let out = start(&env);
    assert_exit(&out, 3);
    let text = show_output(&out);
    assert!(
        text.contains("the worktree was made from a spare one"),
        "{text}"
    );
    assert!(env.ls(".gavel/worktrees/.spare").is_empty(), "taken");
    approve_in_a_terminal(&env, "2");
    assert_eq!(env.read("calc.py"), "def add(a, b):\n    return a + b\n");
}
