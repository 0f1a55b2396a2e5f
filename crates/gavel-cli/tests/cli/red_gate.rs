//! The red gate and the test runner (issue 32): a test file that does not parse or compile is
//! not red but goes back to the step that wrote it, with the errors; a runner that does not run
//! properly stops at a gate (retry / back / abort) instead of halting; and every abort ends
//! the run the same way: worktree and branch removed, lineage kept in `docs/lineage/active/`.

use gavel_llm::Role;

use crate::util::*;

/// A pytest file with a syntax error on line 4.
const BROKEN: &str = "=== gavel:write tests/test_calc.py\nfrom calc import add\n\n\ndef test_add(:\n    assert add(2, 3) == 5\n=== gavel:end\n";

fn implementer_calls(env: &Env) -> usize {
    env.finished(Role::named("implementer"))
}

/// The run ended as every abort ends it: aborted, its worktree and branch gone, its lineage
/// kept in the checkout's `rel` folder.
pub fn assert_cleaned_up(env: &Env, branch: &str, lineage: &str) {
    assert_eq!(env.runs()[0]["status"], "aborted");
    let name = branch.trim_start_matches("gavel/");
    assert!(
        !env.exists(&format!(".gavel/worktrees/{name}")),
        "worktree removed"
    );
    assert!(
        !env.git(&["branch", "--list"]).contains(branch),
        "branch {branch} removed"
    );
    let kept = env.ls(lineage);
    assert!(
        kept.iter().any(|n| n.ends_with(".md")),
        "the lineage is kept in {lineage}: {kept:?}"
    );
}

#[test]
fn regression_a_syntax_error_in_a_scaffolded_test_file_goes_back_to_the_scaffold() {
    let env = python_project(&[BROKEN, TESTS, CODE]);
    let out = start(&env);
    assert_exit(&out, 3);
    let text = show_output(&out);
    assert!(
        text.contains("tests/test_calc.py:4: SyntaxError: invalid syntax"),
        "{text}"
    );
    assert!(text.contains("green gate: 1 passed"), "{text}");
    // The second call rewrote the tests, told why; the implementer was asked once.
    let lineage = ".gavel/worktrees/1-impl/docs/lineage/active/1-impl";
    let feedback = env
        .ls(lineage)
        .into_iter()
        .find(|n| n.ends_with("-feedback.md"))
        .expect("the feedback to the scaffold");
    let feedback = env.read(&format!("{lineage}/{feedback}"));
    assert!(
        feedback.contains("tests/test_calc.py:4: SyntaxError")
            && feedback.contains("fix these errors in the tests"),
        "{feedback}"
    );
    assert_eq!(implementer_calls(&env), 3);
    approve_in_a_terminal(&env, "1");
    assert_eq!(env.read("calc.py"), "def add(a, b):\n    return a + b\n");
}

#[test]
fn regression_tests_that_never_parse_halt_at_the_scaffold_without_an_implementation_call() {
    let env = python_project(&[BROKEN, BROKEN, BROKEN, BROKEN, CODE]);
    let out = start(&env);
    assert_exit(&out, 4);
    let text = show_output(&out);
    assert!(
        text.contains("writing the tests failed 4 times (retries: 3)"),
        "{text}"
    );
    assert!(text.contains("SyntaxError"), "{text}");
    assert_eq!(
        implementer_calls(&env),
        4,
        "every call rewrote the tests; none implemented"
    );
    assert!(!env.exists("calc.py"));
}

#[test]
fn a_go_syntax_error_goes_back_and_an_undefined_function_is_red() {
    let env = python_project(&[]);
    env.write("go.mod", "module example.com/calc\n\ngo 1.19\n");
    env.write("calc.go", "package calc\n");
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "a go module"]);
    let broken = "=== gavel:write calc_test.go\npackage calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"no\")\n\t\n}\n=== gavel:end\n";
    let tests = "=== gavel:write calc_test.go\npackage calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"no\")\n\t}\n}\n=== gavel:end\n";
    let code = "=== gavel:write calc.go\npackage calc\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n=== gavel:end\n";
    env.script(&format!(
        "model: scripted-test\nroles:\n  implementer:\n    - text: {}\n    - text: {}\n    - text: {}\n",
        yaml(broken),
        yaml(tests),
        yaml(code)
    ));
    let out = start_with(&env, "go test ./...");
    assert_exit(&out, 3);
    let text = show_output(&out);
    assert!(text.contains("calc_test.go:9: expected '}'"), "{text}");
    assert!(text.contains("red gate: build failed"), "{text}");
    assert!(text.contains("green gate:"), "{text}");
    assert_eq!(implementer_calls(&env), 3);
}

#[test]
fn a_node_test_file_that_does_not_parse_goes_back_to_the_scaffold() {
    let broken = "=== gavel:write test/calc.test.mjs\nimport { test } from 'node:test';\nimport { add } from '../calc.mjs';\ntest('adds', () => {\n=== gavel:end\n";
    let tests = "=== gavel:write test/calc.test.mjs\nimport { test } from 'node:test';\nimport assert from 'node:assert';\nimport { add } from '../calc.mjs';\n\ntest('adds', () => assert.strictEqual(add(2, 3), 5));\n=== gavel:end\n";
    let code = "=== gavel:write calc.mjs\nexport function add(a, b) {\n  return a + b;\n}\n=== gavel:end\n";
    let env = python_project(&[broken, tests, code]);
    let out = start_with(&env, "node --test");
    assert_exit(&out, 3);
    let text = show_output(&out);
    assert!(text.contains("test/calc.test.mjs"), "{text}");
    assert!(text.contains("SyntaxError"), "{text}");
    assert!(text.contains("red gate: missing import"), "{text}");
    assert_eq!(implementer_calls(&env), 3);
}

/// The gate a run waits at, as printed.
fn gate_id(text: &str) -> String {
    text.split("waiting at gate ")
        .nth(1)
        .and_then(|rest| rest.split(':').next())
        .unwrap_or_default()
        .to_owned()
}

/// A conftest the test-writing step wrote that breaks pytest itself: `exit` is pytest's exit
/// code 2 (interrupted), 3 (internal error) or 4 (usage error).
fn breaking_conftest(exit: u32) -> String {
    let body = match exit {
        2 => "def pytest_sessionstart(session):\n    raise KeyboardInterrupt\n",
        3 => "def pytest_collection_modifyitems(items):\n    raise RuntimeError('boom')\n",
        _ => {
            "def pytest_configure(config):\n    raise __import__('pytest').UsageError('no such option --x')\n"
        }
    };
    format!("=== gavel:write conftest.py\n{body}=== gavel:end\n{TESTS}")
}

#[test]
fn pytest_exits_2_3_and_4_stop_at_a_gate_with_the_output_and_retry_runs_again() {
    for (exit, what) in [
        (2, "interrupted"),
        (3, "internal error"),
        (4, "usage error"),
    ] {
        let broken = breaking_conftest(exit);
        let env = python_project(&[&broken, TESTS, CODE]);
        let out = start(&env);
        assert_exit(&out, 3);
        let text = show_output(&out);
        assert!(
            text.contains(&format!("did not run properly ({what}")),
            "exit {exit}: {text}"
        );
        assert!(
            text.contains(&format!("exit {exit}")),
            "exit {exit}: {text}"
        );
        for choice in ["retry", "back", "abort"] {
            assert!(
                text.contains(&format!("--choice {choice}")),
                "exit {exit}: {text}"
            );
        }
        // Retry runs the same command again (not its journaled result): a new gate.
        let out = env.run(&["resume", "1", "--choice", "retry"]);
        assert_exit(&out, 3);
        let again = show_output(&out);
        assert!(again.contains("did not run properly"), "{again}");
        assert_ne!(gate_id(&text), gate_id(&again), "{again}");
        // Both runs' outputs are kept, under their own numbers.
        let reds = env
            .ls(".gavel/worktrees/1-impl/docs/lineage/active/1-impl")
            .into_iter()
            .filter(|n| n.ends_with("-red.md"))
            .count();
        assert_eq!(reds, 2, "exit {exit}");
        assert_eq!(implementer_calls(&env), 1, "retry made no model call");
    }
}

#[test]
fn a_runner_error_gate_goes_back_to_the_scaffold() {
    let broken = breaking_conftest(3);
    let fixed = "=== gavel:write conftest.py\n# nothing\n=== gavel:end\n";
    let env = python_project(&[&broken, &format!("{fixed}{TESTS}"), CODE]);
    let out = start(&env);
    assert_exit(&out, 3);
    let out = env.run(&["resume", "1", "--choice", "back"]);
    assert_exit(&out, 3);
    let text = show_output(&out);
    assert!(text.contains("green gate: 1 passed"), "{text}");
    // The test-writing step was told why, with the runner's output.
    let lineage = ".gavel/worktrees/1-impl/docs/lineage/active/1-impl";
    let told = env
        .ls(lineage)
        .into_iter()
        .filter(|n| n.ends_with("-feedback.md"))
        .map(|n| env.read(&format!("{lineage}/{n}")))
        .any(|f| f.contains("a person sent the run back") && f.contains("RuntimeError: boom"));
    assert!(told, "{:?}", env.ls(lineage));
    approve_in_a_terminal(&env, "1");
    assert!(env.exists("calc.py"));
}

#[test]
fn abort_at_the_runner_error_gate_removes_the_worktree_and_branch_and_keeps_the_lineage() {
    let broken = breaking_conftest(4);
    let env = python_project(&[&broken]);
    assert_exit(&start(&env), 3);
    let out = env.run(&["resume", "1", "--choice", "abort"]);
    let text = show_output(&out);
    assert!(
        text.contains("the worktree and branch gavel/1-impl are removed"),
        "{text}"
    );
    assert!(text.contains("docs/lineage/active/1-impl"), "{text}");
    assert_cleaned_up(&env, "gavel/1-impl", "docs/lineage/active/1-impl");
    let audit = show_output(&env.run(&["audit"]));
    assert!(audit.contains("ABORTED"), "{audit}");
}

#[test]
fn regression_abort_at_the_test_timeout_gate_removes_the_worktree_and_branch() {
    let hanging = "=== gavel:write tests/test_calc.py\nimport time\n\n\ndef test_slow():\n    time.sleep(30)\n=== gavel:end\n";
    let env = python_project(&[hanging]);
    env.write(
        "gavel.toml",
        &(env.read("gavel.toml") + "\n[implement]\ntimeout_secs = 3\n"),
    );
    env.git(&["commit", "-qam", "a short timeout"]);
    let out = start(&env);
    assert_exit(&out, 3);
    assert!(show_output(&out).contains("The red run timed out"));
    let out = env.run(&["resume", "1", "--choice", "abort"]);
    assert!(
        show_output(&out).contains("its lineage kept in docs/lineage/active/1-impl"),
        "{}",
        show_output(&out)
    );
    assert_cleaned_up(&env, "gavel/1-impl", "docs/lineage/active/1-impl");
    assert!(
        env.ls("docs/lineage/active/1-impl")
            .iter()
            .any(|n| n.ends_with("-red.md")),
        "the timed-out run's output is kept"
    );
}

#[test]
fn gavel_abort_after_a_halt_at_the_red_gate_cleans_up_the_same_way() {
    let env = python_project(&[BROKEN, BROKEN, BROKEN, BROKEN]);
    assert_exit(&start(&env), 4);
    assert_exit(&env.run(&["abort", "1"]), 0);
    assert_cleaned_up(&env, "gavel/1-impl", "docs/lineage/active/1-impl");
    let audit = show_output(&env.run(&["audit"]));
    assert!(
        audit.contains("ABORTED") && audit.contains("gavel abort"),
        "{audit}"
    );
}

#[test]
fn regression_a_reject_at_the_diff_gate_is_in_the_audit_and_keeps_the_lineage() {
    let env = python_project(&[TESTS, CODE]);
    assert_exit(&start(&env), 3);
    let editor = crate::pty::fake_editor(&env);
    let mut p = crate::pty::spawn(&env, &["resume", "1"], &editor.to_string_lossy());
    p.exp_string("Your choice [approve/reject/P]: ")
        .expect("diff gate");
    p.send_line("reject").expect("reject");
    p.exp_eof().expect("eof");
    assert_cleaned_up(&env, "gavel/1-impl", "docs/lineage/active/1-impl");
    let out = env.run(&["audit"]);
    assert_exit(&out, 0);
    let audit = show_output(&out);
    assert!(audit.contains("REJECTED"), "{audit}");
    let json = show_output(&env.run(&["audit", "--json"]));
    assert!(json.contains("\"decision\":\"REJECTED\""), "{json}");
}

#[test]
fn a_rust_test_file_that_does_not_compile_goes_back_and_a_missing_function_is_red() {
    let broken = "=== gavel:write tests/add.rs\nuse sample::add;\n\n#[test]\nfn adds() {\n    assert_eq!(add(2, 3), 5)\n    let x: u8 = \"a\";\n}\n=== gavel:end\n";
    let env = rust_crate(&[broken, RUST_TESTS, RUST_CODE]);
    let mut cmd = with_rust_toolchain(implement_command(&env, "cargo test", &[]));
    let out = cmd.output().expect("run");
    assert_exit(&out, 3);
    let text = show_output(&out);
    assert!(
        text.contains("tests/add.rs:5: error: expected `;`"),
        "{text}"
    );
    assert!(text.contains("red gate: build failed"), "{text}");
    assert!(text.contains("green gate: 1 passed"), "{text}");
    assert_eq!(implementer_calls(&env), 3);
}

#[test]
fn code_that_kills_the_green_run_stops_at_a_gate_and_back_goes_to_the_implementer() {
    let killer = "=== gavel:write calc.py\nimport os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n=== gavel:end\n";
    let env = python_project(&[TESTS, killer, CODE]);
    let out = start(&env);
    assert_exit(&out, 3);
    let text = show_output(&out);
    assert!(
        text.contains("The green command did not run properly ("),
        "{text}"
    );
    let out = env.run(&["resume", "1", "--choice", "back"]);
    assert_exit(&out, 3);
    let text = show_output(&out);
    assert!(text.contains("green gate: 1 passed"), "{text}");
    assert_eq!(implementer_calls(&env), 3);
    approve_in_a_terminal(&env, "1");
    assert_eq!(env.read("calc.py"), "def add(a, b):\n    return a + b\n");
}
