//! Roles belong to the run (issue 32): the implementer given when an `implement` or `change
//! impl` run starts is the one every resume calls, whatever `gavel.toml` says by then (the real
//! Claude Code too); `gavel resume --role` changes a role on the record; a run stored before
//! the implementer was pinned says what it uses. The checks before a run exists are in
//! `roles_checks.rs`.

use serde_json::Value;

use crate::change_impl;
use crate::util::*;

/// Writes `name` (a script the scripted provider reads) answering the implementer `answers`
/// in order; `name` is git-ignored, so the person's checkout stays clean while it logs.
fn write_script(env: &Env, name: &str, answers: &[&str]) {
    env.write(name, &implementer_script(name, answers));
}

/// Ignores the `script-*` files these tests write (their call logs sit next to them).
fn ignore_scripts(env: &Env) {
    env.write(".gitignore", &(env.read(".gitignore") + "script-*\n"));
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "ignore the test scripts"]);
}

/// Finished calls of `role` made through the script at `name`.
fn finished(env: &Env, name: &str, role: &str) -> usize {
    gavel_llm::read_call_log(&env.repo.join(name))
        .expect("call log")
        .iter()
        .filter(|c| {
            c.role == gavel_llm::Role::named(role) && c.event == gavel_llm::CallEvent::Finish
        })
        .count()
}

/// `gavel implement 1` with `--implementer scripted:NAME`, killed (-9) right after the red
/// gate's checkpoint.
fn implement_killed_after_the_red_gate(env: &Env, implementer: &str) {
    let out = implement_command(env, PYTEST, &["--implementer", implementer])
        .env("GAVEL_CRASH_AT", "after:N2_red_gate")
        .output()
        .expect("run gavel");
    assert_eq!(out.status.code(), None, "killed: {}", show_output(&out));
}

fn timeline(env: &Env, run: &str) -> String {
    env.show(run)["timeline"].to_string()
}

#[test]
fn regression_the_implementer_given_at_the_start_is_the_one_a_resume_calls() {
    // gavel.toml's roles (the drafter, which the implementer defaults to) answer nothing.
    let env = python_project(&[]);
    ignore_scripts(&env);
    write_script(&env, "script-a.yaml", &[TESTS, CODE]);
    implement_killed_after_the_red_gate(&env, "scripted:script-a.yaml");
    assert_eq!(finished(&env, "script-a.yaml", "implementer"), 1);
    let resumed = env.run(&["resume", "1"]);
    assert_exit(&resumed, 3);
    assert_eq!(
        finished(&env, "script-a.yaml", "implementer"),
        2,
        "the implementation went to the run's implementer: {}",
        show_output(&resumed)
    );
    assert!(env.calls().is_empty(), "gavel.toml's model was not called");
    let t = timeline(&env, "1");
    assert!(!t.contains("role changed"), "{t}");
    // A second resume still keeps it (it is in the run's state, not in this invocation).
    let state = env.show("1");
    assert_eq!(state["run"]["status"], "waiting", "{state}");
}

#[test]
fn resume_role_implementer_changes_the_implementer_on_the_record() {
    let env = python_project(&[]);
    ignore_scripts(&env);
    write_script(&env, "script-a.yaml", &[TESTS, CODE]);
    write_script(&env, "script-b.yaml", &[TESTS, CODE]);
    implement_killed_after_the_red_gate(&env, "scripted:script-a.yaml");
    let bad = env.run(&["resume", "1", "--role", "implementer=not-a-provider"]);
    assert_exit(&bad, 2);
    assert!(
        stderr(&bad).contains("not-a-provider"),
        "{}",
        show_output(&bad)
    );
    let resumed = env.run(&[
        "resume",
        "1",
        "--role",
        "implementer=scripted:script-b.yaml",
    ]);
    assert_exit(&resumed, 3);
    assert_eq!(finished(&env, "script-a.yaml", "implementer"), 1);
    assert_eq!(finished(&env, "script-b.yaml", "implementer"), 1);
    let t = timeline(&env, "1");
    assert!(
        t.contains(
            "role changed (gavel resume --role): implementer scripted:script-a.yaml -> scripted:script-b.yaml"
        ),
        "{t}"
    );
    assert_eq!(t.matches("role changed").count(), 1, "noted once: {t}");
}

#[test]
fn regression_a_change_run_keeps_its_implementer_and_reviewer_and_a_role_change_is_recorded() {
    let env = Env::new();
    change_impl::script(
        &env,
        &[TESTS, CODE],
        &[change_impl::review("APPROVED", &[])],
    );
    change_impl::challenged_change(&env);
    ignore_scripts(&env);
    let out = env
        .gavel(&["change", "impl", change_impl::ID, "--test-cmd", PYTEST])
        .env("GAVEL_CRASH_AT", "after:N2_red_gate")
        .output()
        .expect("run gavel");
    assert_eq!(out.status.code(), None, "killed: {}", show_output(&out));
    // The configuration moves on: its roles now name a script that answers nothing.
    let toml = env.read("gavel.toml").replace(
        "implementer = \"scripted:script.yaml\"",
        "implementer = \"scripted:script-nobody.yaml\"",
    );
    env.write("gavel.toml", &toml);
    let reviewer = serde_json::json!({
        "model": "scripted-r",
        "roles": {"reviewer": [{"text": change_impl::review("APPROVED", &[])}]},
    });
    env.write("script-r.yaml", &reviewer.to_string());
    let resumed = env.run(&["resume", "1", "--role", "reviewer=scripted:script-r.yaml"]);
    assert_exit(&resumed, 3);
    assert_eq!(
        env.finished(gavel_llm::Role::named("implementer")),
        2,
        "{}",
        show_output(&resumed)
    );
    assert_eq!(finished(&env, "script-r.yaml", "reviewer"), 1);
    assert_eq!(env.finished(gavel_llm::Role::named("reviewer")), 0);
    let t = timeline(&env, "1");
    assert!(
        t.contains(
            "role changed (gavel resume --role): reviewer scripted:script.yaml -> scripted:script-r.yaml"
        ),
        "{t}"
    );
    assert!(!t.contains("implementer scripted"), "{t}");
}

#[test]
fn resume_role_challenger_changes_a_change_plans_challenger_on_the_record() {
    use crate::change_plan::{proposal, setup, specs, tasks, verdict};
    let env = Env::new();
    setup(
        &env,
        &[
            proposal(""),
            specs(),
            tasks(),
            proposal(" (WebAuthn level 3)"),
        ],
        &[verdict("NEEDS_REVISION", &["Name the WebAuthn level"])],
        1,
    );
    ignore_scripts(&env);
    assert_exit(&env.run(&["change", "plan", "add-passkeys", "Passkeys"]), 3);
    let challenger = serde_json::json!({
        "model": "scripted-c",
        "roles": {"challenger": [
            {"text": verdict("NEEDS_REVISION", &["unused"])},
            {"text": verdict("APPROVED", &[])},
        ]},
    });
    env.write("script-c.yaml", &challenger.to_string());
    let out = env.run(&[
        "resume",
        "1",
        "--choice",
        "continue",
        "--role",
        "challenger=scripted:script-c.yaml",
    ]);
    assert_exit(&out, 3);
    assert_eq!(
        finished(&env, "script-c.yaml", "challenger"),
        1,
        "{}",
        show_output(&out)
    );
    let t = timeline(&env, "1");
    assert!(
        t.contains(
            "role changed (gavel resume --role): challenger scripted:script.yaml -> scripted:script-c.yaml"
        ),
        "{t}"
    );
}

#[test]
fn regression_real_claude_code_given_with_implementer_implements_after_a_kill_and_resume() {
    use gavel_fakeapi::{Api, FakeServer, Reply};
    let server = FakeServer::start().expect("fake API");
    // gavel.toml's drafter (the implementer's default) is a script that answers nothing.
    let env = python_project(&[]);
    let vars = crate::agents::claude_env(&env, &server);
    let worktree = worktree(&env);
    let write = |rel: &str, content: &str| claude_write(&worktree.join(rel), content);
    server.push(
        Api::Anthropic,
        Reply::tool_use("Write", write("tests/test_calc.py", TEST_FILE)),
    );
    server.push(Api::Anthropic, Reply::text("The failing test is written."));
    let claude = format!("claude:{CLAUDE_MODEL}");
    let mut cmd = implement_command(&env, PYTEST, &["--implementer", &claude]);
    cmd.envs(vars.iter().map(|(k, v)| (k, v)))
        .env("GAVEL_CRASH_AT", "after:N2_red_gate");
    let out = cmd.output().expect("run gavel");
    assert_eq!(out.status.code(), None, "killed: {}", show_output(&out));
    server.push(
        Api::Anthropic,
        Reply::tool_use("Write", write("calc.py", CODE_FILE)),
    );
    server.push(Api::Anthropic, Reply::text("Implemented."));
    let mut cmd = env.gavel(&["resume", "1"]);
    cmd.envs(vars.iter().map(|(k, v)| (k, v)));
    let resumed = cmd.output().expect("resume");
    assert_exit(&resumed, 3);
    assert_eq!(
        server.pending(Api::Anthropic),
        0,
        "{}",
        show_output(&resumed)
    );
    assert_eq!(
        std::fs::read_to_string(worktree.join("calc.py")).expect("calc.py"),
        CODE_FILE
    );
    assert!(env.calls().is_empty(), "gavel.toml's model was not called");
}

#[test]
fn a_run_stored_without_a_pinned_implementer_resumes_with_the_configurations_and_says_so() {
    use gavel_core::RunStore;
    let env = python_project(&[]);
    ignore_scripts(&env);
    write_script(&env, "script-a.yaml", &[TESTS, CODE]);
    write_script(&env, "script-b.yaml", &[TESTS, CODE]);
    implement_killed_after_the_red_gate(&env, "scripted:script-a.yaml");
    // The run as a gavel that did not pin the implementer stored it.
    let store = gavel_store::SqliteStore::open(&env.state_db()).expect("store");
    let run = gavel_core::RunId(1);
    let head = store.head(run).expect("head").expect("a checkpoint");
    let mut state: Value = serde_json::from_slice(&head.state).expect("state");
    assert_eq!(state["implementer"], "scripted:script-a.yaml");
    state.as_object_mut().expect("object").remove("implementer");
    let record = store.run(run).expect("run").expect("record");
    let old = gavel_core::Checkpoint {
        seq: head.seq + 1,
        parent: Some(head.seq),
        state: serde_json::to_vec(&state).expect("json"),
        ..head
    };
    store.commit(&old, &[], &record.status).expect("commit");
    drop(store);
    // gavel.toml's implementer now (the drafter's) answers.
    env.set_roles("scripted:script-b.yaml", "scripted:script.yaml");
    let resumed = env.run(&["resume", "1"]);
    assert_exit(&resumed, 3);
    assert_eq!(finished(&env, "script-b.yaml", "implementer"), 1);
    let t = timeline(&env, "1");
    assert!(
        t.contains(
            "this run was started by a gavel that did not pin its implementer: it uses scripted:script-b.yaml"
        ),
        "{t}"
    );
}
