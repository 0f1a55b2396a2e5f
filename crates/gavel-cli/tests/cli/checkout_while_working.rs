//! The person works in their own checkout while a boxed model step runs (issue 32): the box
//! keeps the model's code out of the checkout, so the person's edits are theirs and the run
//! goes on to the diff gate and the merge, which keeps them. Unboxed (`sandbox = "none"`) the
//! checkout check still stops the run (`implement_agents::sandbox_none_is_recorded…`).

use std::time::{Duration, Instant};

use gavel_fakeapi::{Api, FakeServer, Reply};

use crate::util::*;

/// Waits until the run's worktree exists (N0 is done and the scaffold call is in flight).
fn wait_for_worktree(env: &Env) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !worktree(env).join(".git").exists() {
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

/// The same with the REAL Claude Code as the implementer, whose scaffold call streams slowly
/// (a real agent takes minutes): the person edits, stages and commits-to-be meanwhile.
#[test]
fn the_persons_edits_while_claude_code_works_boxed_are_theirs() {
    let server = FakeServer::start().expect("fake");
    let (env, vars) = claude_project(&server, "");
    let wt = worktree(&env);
    let write = |rel: &str, content: &str| claude_write(&wt.join(rel), content);
    server.push(
        Api::Anthropic,
        Reply::tool_use("Write", write("tests/test_calc.py", TEST_FILE)).with_event_delay(700),
    );
    server.push(Api::Anthropic, Reply::text("The failing test is written."));
    server.push(
        Api::Anthropic,
        Reply::tool_use("Write", write("calc.py", CODE_FILE)),
    );
    server.push(Api::Anthropic, Reply::text("Implemented."));
    let mut cmd = start_command(&env);
    cmd.envs(vars.iter().map(|(k, v)| (k, v)))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().expect("start gavel implement");
    wait_for_worktree(&env);
    // Claude Code's first answer is still streaming (seconds, event by event).
    let deadline = Instant::now() + Duration::from_secs(60);
    while server
        .requests()
        .iter()
        .all(|r| r.api != Some(Api::Anthropic) || r.model != CLAUDE_MODEL)
    {
        assert!(Instant::now() < deadline, "Claude Code never called");
        std::thread::sleep(Duration::from_millis(50));
    }
    env.write("README.md", "Edited while Claude Code works.\n");
    env.write("scratch.txt", "mine\n");
    let out = child.wait_with_output().expect("gavel implement");

    let text = show_output(&out);
    assert_exit(&out, 3);
    assert!(!text.contains("your checkout changed"), "{text}");
    assert!(text.contains("green gate: "), "{text}");
    assert_eq!(env.read("README.md"), "Edited while Claude Code works.\n");
    assert_eq!(env.read("scratch.txt"), "mine\n");
    assert_eq!(server.pending(Api::Anthropic), 0, "{text}");
}
