//! `gavel implement` beyond the happy path: a Rust crate with `cargo test` (a compile error is
//! the red), a base branch that moved (a merge commit), a merge conflict (a halt, nothing
//! lost, resumable after a manual merge), and the person's uncommitted work surviving abort
//! and Ctrl-C byte for byte.

use std::collections::BTreeMap;
use std::path::Path;

use crate::util::*;

/// The paths whose bytes differ between two trees (so a failure names them, not the bytes).
fn differing(a: &BTreeMap<String, Vec<u8>>, b: &BTreeMap<String, Vec<u8>>) -> Vec<String> {
    let mut paths: Vec<String> = a
        .keys()
        .chain(b.keys())
        .filter(|k| a.get(*k) != b.get(*k))
        .cloned()
        .collect();
    paths.dedup();
    paths
}

/// Every file under `root` except `.git/`, `.gavel/` and the scripted provider's own files
/// (its script and call log, test machinery), with its bytes.
fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read_dir").flatten() {
            let path = entry.path();
            let rel = path
                .strip_prefix(root)
                .expect("inside")
                .to_string_lossy()
                .into_owned();
            if rel == ".git" || rel == ".gavel" || rel.starts_with("script.yaml") {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                out.insert(rel, std::fs::read(&path).expect("read"));
            }
        }
    }
    out
}

#[test]
fn a_rust_crate_goes_red_on_a_compile_error_and_green_on_cargo_test() {
    let env = rust_crate(&[RUST_TESTS, RUST_CODE]);
    let mut cmd = with_rust_toolchain(implement_command(&env, "cargo test", &[]));
    let out = cmd.output().expect("run");
    assert_exit(&out, 3);
    let text = show_output(&out);
    assert!(
        text.contains("red gate: ") && text.contains("build failed"),
        "{text}"
    );
    assert!(text.contains("green gate: 1 passed"), "{text}");
    approve_in_a_terminal(&env, "1");
    assert!(env.read("src/lib.rs").contains("pub fn add"));
    assert!(env.exists("tests/add.rs"));
    assert_eq!(env.status(), "");
}

#[test]
fn a_base_that_moved_is_merged_with_a_merge_commit() {
    let env = python_project(&[TESTS, CODE]);
    assert_exit(&start(&env), 3);
    env.write("NOTES.md", "the person kept working\n");
    env.git(&["add", "NOTES.md"]);
    env.git(&["commit", "-qm", "meanwhile"]);
    approve_in_a_terminal(&env, "1");
    let parents = env.git(&["log", "-1", "--format=%P", "HEAD~1"]);
    assert_eq!(
        parents.split_whitespace().count(),
        2,
        "a merge commit: {parents}"
    );
    assert!(env.exists("calc.py") && env.exists("NOTES.md"));
}

#[test]
fn a_merge_conflict_halts_with_instructions_and_loses_nothing() {
    let env = python_project(&[TESTS, CODE]);
    assert_exit(&start(&env), 3);
    env.write(
        "calc.py",
        "def add(a, b):\n    return b + a  # the person's version\n",
    );
    env.git(&["add", "calc.py"]);
    env.git(&["commit", "-qm", "my own add"]);
    let before = tree(&env.repo);
    let editor = crate::pty::fake_editor(&env);
    let mut p = crate::pty::spawn(&env, &["resume", "1"], &editor.to_string_lossy());
    p.exp_string("Your choice [approve/reject/P]: ")
        .expect("diff gate");
    p.send_line("approve").expect("approve");
    p.exp_string("nothing is lost: the work is committed on branch gavel/1-impl")
        .expect("the halt says what to do");
    p.exp_eof().expect("eof");
    assert_eq!(crate::pty::exit_code(&p), 4);
    assert_eq!(
        differing(&tree(&env.repo), &before),
        Vec::<String>::new(),
        "the checkout is as it was"
    );
    assert_eq!(env.status(), "", "no merge left in progress");
    // The person merges by hand; resume finishes the lineage.
    let mut merge = std::process::Command::new("git");
    env.clean_env(&mut merge);
    let merged = merge
        .args(["merge", "--no-edit", "-X", "ours", "gavel/1-impl"])
        .current_dir(&env.repo)
        .output()
        .expect("git merge");
    assert!(merged.status.success(), "{}", show_output(&merged));
    let out = env.run(&["resume", "1"]);
    assert_exit(&out, 0);
    assert!(
        show_output(&out).contains("already merged"),
        "{}",
        show_output(&out)
    );
    assert!(env.exists("docs/lineage/done/1-impl"));
}

#[test]
fn uncommitted_and_untracked_work_survives_abort_and_ctrl_c_byte_for_byte() {
    let slow = "=== gavel:write tests/test_calc.py\nimport time\nfrom calc import add\n\ntime.sleep(30)\n\ndef test_add():\n    assert add(2, 3) == 5\n=== gavel:end\n";
    let env = python_project(&[slow, CODE]);
    env.write("README.md", "A tiny project, edited but not committed.\n");
    env.write("scratch/notes.txt", "untracked notes\n");
    let before = tree(&env.repo);
    let child = start_command(&env)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    // Wait for the red gate's test run (the worktree has the slow test), then Ctrl-C.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !env.exists(".gavel/worktrees/1-impl/tests/test_calc.py") {
        assert!(
            std::time::Instant::now() < deadline,
            "the scaffold never landed"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let out = child.wait_with_output().expect("wait");
    assert_exit(&out, 130);
    assert_eq!(
        differing(&tree(&env.repo), &before),
        Vec::<String>::new(),
        "Ctrl-C leaves the checkout byte for byte"
    );
    assert!(
        env.exists(".gavel/worktrees/1-impl"),
        "the worktree is kept to resume"
    );
    assert_exit(&env.run(&["abort", "1"]), 0);
    // Every file the person had is byte for byte as it was; the only new files are the
    // aborted run's lineage, kept where every workflow keeps an aborted run's.
    let after = tree(&env.repo);
    let changed: Vec<String> = differing(&after, &before)
        .into_iter()
        .filter(|p| !p.starts_with("docs/lineage/active/1-impl/"))
        .collect();
    assert_eq!(
        changed,
        Vec::<String>::new(),
        "abort leaves the checkout byte for byte"
    );
    assert!(!env.exists(".gavel/worktrees/1-impl"));
    assert!(!env.git(&["branch", "--list"]).contains("gavel/1-impl"));
}

#[test]
fn a_kill_during_the_green_gate_leaves_no_orphan_and_repeats_no_model_call() {
    let env = python_project(&[]);
    // Outside /tmp, so that the boxed test run sees it.
    let marker = env.root.join("slow-green");
    std::fs::write(&marker, "").expect("marker");
    let code = format!(
        "=== gavel:write calc.py\nimport os, time\nif os.path.exists({:?}):\n    time.sleep(60)\n\n\ndef add(a, b):\n    return a + b\n=== gavel:end\n",
        marker.display().to_string()
    );
    env.script(&format!(
        "model: scripted-test\nroles:\n  implementer:\n    - text: {}\n    - text: {}\n",
        yaml(TESTS),
        yaml(&code)
    ));
    let mut child = start_command(&env)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let pid_file = env.repo.join(".gavel/worktrees/.1-impl.green.pid");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !pid_file.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the green gate never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let pgid: u32 = std::fs::read_to_string(&pid_file)
        .expect("pid")
        .trim()
        .parse()
        .expect("a pid");
    child.kill().expect("kill -9");
    let _ = child.wait();
    let alive = |pid: u32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| !s.split(") ").nth(1).is_some_and(|r| r.starts_with('Z')))
    };
    // The box dies with the gavel that started it: nothing is left for resume to clean.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while alive(pgid) {
        assert!(
            std::time::Instant::now() < deadline,
            "the test run outlived the killed gavel"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::fs::remove_file(&marker).expect("the green run is quick again");
    let out = env.run(&["resume", "1"]);
    assert_exit(&out, 3);
    env.assert_no_finished_call_repeated();
    approve_in_a_terminal(&env, "1");
    assert!(env.exists("calc.py"));
}

#[test]
fn doctor_reports_a_worktree_no_unfinished_run_uses() {
    let env = python_project(&[TESTS, CODE]);
    assert_exit(&start(&env), 3);
    let report = |env: &Env| -> serde_json::Value {
        let out = env.run(&["doctor", "--json"]);
        serde_json::from_slice(&out.stdout).expect("json")
    };
    assert_eq!(
        report(&env)["leftover_worktrees"],
        serde_json::json!([]),
        "its run is paused"
    );
    // A run that ended without cleaning up (an older gavel, a crash in abort).
    let store = gavel_store::SqliteStore::open(&env.state_db()).expect("store");
    gavel_core::RunStore::set_status(
        &store,
        gavel_core::RunId(1),
        &gavel_core::RunStatus::Aborted {
            reason: "test".into(),
        },
        &[],
        FIXED_NOW,
    )
    .expect("abort in the store");
    let leftovers = report(&env)["leftover_worktrees"].clone();
    let text = leftovers[0].as_str().unwrap_or_default();
    assert!(
        text.contains(".gavel/worktrees/1-impl (gavel/1-impl) belongs to no unfinished run"),
        "{leftovers}"
    );
    assert!(text.contains("git branch -D gavel/1-impl"), "{text}");
}

#[test]
fn a_node_project_goes_red_on_a_missing_module_and_green_on_node_test() {
    let tests = "=== gavel:write test/calc.test.mjs\nimport { test } from 'node:test';\nimport assert from 'node:assert';\nimport { add } from '../calc.mjs';\n\ntest('adds', () => assert.strictEqual(add(2, 3), 5));\n=== gavel:end\n";
    let code = "=== gavel:write calc.mjs\nexport function add(a, b) {\n  return a + b;\n}\n=== gavel:end\n";
    let env = python_project(&[tests, code]);
    let out = env.run(&[
        "implement",
        "1",
        "--lld",
        "docs/design.md",
        "--test-cmd",
        "node --test",
        "--auto",
    ]);
    assert_exit(&out, 3);
    let text = show_output(&out);
    assert!(text.contains("red gate: missing import"), "{text}");
    assert!(text.contains("green gate: 1 passed"), "{text}");
    approve_in_a_terminal(&env, "1");
    assert!(env.read("calc.mjs").contains("export function add"));
}

#[test]
fn a_test_run_that_times_out_asks_a_person() {
    let hanging = "=== gavel:write tests/test_calc.py\nimport time\n\n\ndef test_slow():\n    time.sleep(30)\n=== gavel:end\n";
    let env = python_project(&[hanging, TESTS, CODE]);
    env.write(
        "gavel.toml",
        &(env.read("gavel.toml") + "\n[implement]\ntimeout_secs = 5\n"),
    );
    env.git(&["commit", "-qam", "a short timeout"]);
    let out = start(&env);
    assert_exit(&out, 3);
    let text = show_output(&out);
    assert!(text.contains("The red run timed out"), "{text}");
    assert!(text.contains("--choice back"), "{text}");
    // Back to the scaffold: the next answer writes real tests, and the run goes on.
    let out = env.run(&["resume", "1", "--choice", "back"]);
    assert_exit(&out, 3);
    assert!(
        show_output(&out).contains("green gate: 1 passed"),
        "{}",
        show_output(&out)
    );
}

#[test]
fn the_tests_a_model_wrote_run_confined_and_cannot_write_outside_the_worktree() {
    let env = python_project(&[]);
    let outside = env.root.join("stolen.txt");
    let tests = format!(
        "=== gavel:write tests/test_calc.py\ntry:\n    open({:?}, 'w').write('x')\nexcept OSError as e:\n    print('denied:', e)\nfrom calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n=== gavel:end\n",
        outside.display().to_string()
    );
    env.script(&format!(
        "model: scripted-test\nroles:\n  implementer:\n    - text: {}\n    - text: {}\n",
        yaml(&tests),
        yaml(CODE)
    ));
    let out = start(&env);
    assert_exit(&out, 3);
    assert!(
        !outside.exists(),
        "the red and green runs could not write outside the worktree"
    );
    assert!(
        show_output(&out).contains("green gate: 1 passed"),
        "{}",
        show_output(&out)
    );
    let lineage = ".gavel/worktrees/1-impl/docs/lineage/active/1-impl";
    let red = env
        .ls(lineage)
        .into_iter()
        .find(|n| n.ends_with("-red.md"))
        .expect("red output");
    let text = env.read(&format!("{lineage}/{red}"));
    assert!(
        text.contains("denied: [Errno 13] Permission denied")
            || text.contains("denied: [Errno 30] Read-only file system"),
        "{text}"
    );
}

#[test]
fn a_panic_keeps_the_checkout_byte_for_byte_and_the_run_resumes() {
    let env = python_project(&[TESTS, CODE]);
    env.write("README.md", "edited, not committed\n");
    env.write("scratch/todo.txt", "untracked\n");
    let before = tree(&env.repo);
    let out = start_command(&env)
        .env("GAVEL_CRASH_AT", "panic:before:N4_green_gate")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(101), "{}", show_output(&out));
    assert!(
        stderr(&out).contains("injected panic"),
        "{}",
        show_output(&out)
    );
    assert_eq!(differing(&tree(&env.repo), &before), Vec::<String>::new());
    assert!(
        env.exists(".gavel/worktrees/1-impl"),
        "the worktree is kept to resume"
    );
    assert_exit(&env.run(&["resume", "1"]), 3);
    env.assert_no_finished_call_repeated();
    approve_in_a_terminal(&env, "1");
    assert!(env.exists("calc.py"));
    assert_eq!(env.read("README.md"), "edited, not committed\n");
    assert_eq!(env.read("scratch/todo.txt"), "untracked\n");
}

#[test]
fn no_tests_go_back_to_the_scaffold_and_a_runner_usage_error_stops_at_a_gate() {
    let empty = "=== gavel:write tests/test_nothing.py\n# no tests yet\n=== gavel:end\n";
    let env = python_project(&[empty, TESTS, CODE]);
    let out = start(&env);
    assert_exit(&out, 3);
    assert!(
        show_output(&out).contains("the test command found no tests"),
        "{}",
        show_output(&out)
    );
    let env = python_project(&[TESTS, CODE]);
    let out = start_with(&env, "python3 -m pytest --no-such-flag");
    // Issue 32: not a halt but a gate (retry / back / abort) with the runner's output.
    assert_exit(&out, 3);
    let text = show_output(&out);
    assert!(text.contains("did not run properly (usage error"), "{text}");
    assert!(text.contains("--no-such-flag"), "{text}");
    assert!(text.contains("--choice retry"), "{text}");
}
