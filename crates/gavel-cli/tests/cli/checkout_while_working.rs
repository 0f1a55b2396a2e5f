//! The person works in their own checkout while a boxed model step runs (issue 32): the box
//! keeps the model's code out of the checkout, so the person's edits are theirs and the run
//! goes on to the diff gate and the merge, which keeps them. Unboxed (`sandbox = "none"`) the
//! checkout check still stops the run (`implement_agents::sandbox_none_is_recorded…`).

use std::time::{Duration, Instant};

use crate::implement::{CODE, TESTS, approve_in_a_terminal, python_project, start_command, yaml};
use crate::util::*;

/// Waits until the run's worktree exists (N0 is done and the scaffold call is in flight).
fn wait_for_worktree(env: &Env) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let wt = env.repo.join(".gavel/worktrees/1-impl");
    while !wt.join(".git").exists() {
        assert!(Instant::now() < deadline, "the run never made its worktree");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_persons_edits_while_a_boxed_step_runs_are_theirs_and_the_run_merges_around_them() {
    let env = python_project(&[]);
    // Each model answer takes seconds, as a real agent's takes minutes.
    env.script(&format!(
        "model: scripted-test\nroles:\n  implementer:\n    - text: {}\n      delay_ms: 6000\n    - text: {}\n      delay_ms: 1000\n",
        yaml(TESTS),
        yaml(CODE)
    ));
    let child = start_command(&env)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start gavel implement");
    wait_for_worktree(&env);
    // While the scaffold call runs (well inside its six seconds): a tracked file edited, a new
    // file, a staged change.
    std::thread::sleep(Duration::from_millis(2500));
    env.write(
        "README.md",
        "A tiny project, edited while the model works.\n",
    );
    env.write("notes.txt", "my own notes\n");
    env.write("docs/more.md", "staged meanwhile\n");
    env.git(&["add", "docs/more.md"]);
    let out = child.wait_with_output().expect("gavel implement");

    let text = show_output(&out);
    assert_exit(&out, 3);
    assert!(!text.contains("your checkout changed"), "{text}");
    assert!(text.contains("green gate: "), "{text}");
    let timeline = env.show("1").to_string();
    assert!(
        timeline.contains("your checkout is yours to edit meanwhile"),
        "{timeline}"
    );
    approve_in_a_terminal(&env, "1");
    assert_eq!(env.read("calc.py"), "def add(a, b):\n    return a + b\n");
    // The person's own work is as they left it: edited, new and staged.
    assert_eq!(
        env.read("README.md"),
        "A tiny project, edited while the model works.\n"
    );
    assert_eq!(env.read("notes.txt"), "my own notes\n");
    let status = env.status();
    assert!(status.contains(" M README.md"), "{status}");
    assert!(status.contains("?? notes.txt"), "{status}");
    assert!(status.contains("A  docs/more.md"), "{status}");
}
