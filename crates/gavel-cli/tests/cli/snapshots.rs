//! Snapshot tests (insta) of what a person reads: the paused gate with its resume commands,
//! `gavel runs`, `gavel show`, and the diff-gate report. A change to any of them shows up as a
//! reviewed snapshot diff, never silently.

use crate::util::*;

/// Text with what differs between runs replaced (the temporary folder, commit ids, which
/// depend on the wall clock), so snapshots are the same everywhere.
fn stable(env: &Env, text: &str) -> String {
    let mut text = text.replace(&env.root.to_string_lossy().into_owned(), "[TMP]");
    for sha in env.git(&["log", "--format=%H"]).lines() {
        text = text.replace(&sha[..12], "[COMMIT]");
    }
    text
}

fn out_text(env: &Env, out: &std::process::Output) -> String {
    stable(env, &String::from_utf8_lossy(&out.stdout))
}

fn err_text(env: &Env, out: &std::process::Output) -> String {
    stable(env, &stderr(out))
}

#[test]
fn snapshot_a_paused_verdict_gate_and_its_resume_commands() {
    let env = Env::new();
    env.script(&script(1, &[REVISE]));
    let run = start_paused(&env, "dark-mode");
    let out = env.run(&["resume", &run, "--choice", "send"]);
    assert_exit(&out, 3);
    insta::assert_snapshot!(err_text(&env, &out));
}

#[test]
fn snapshot_runs_and_show() {
    let env = Env::new();
    env.script(&script(2, &[REVISE, APPROVED]));
    let brief = env.brief("dark-mode");
    assert_exit(&env.run(&["issue", &brief, "--auto"]), 0);
    env.script(&script(1, &[]));
    start_paused(&env, "paused-one");
    let runs = env.run(&["runs"]);
    assert_exit(&runs, 0);
    insta::assert_snapshot!("runs", out_text(&env, &runs));
    let show = env.run(&["show", "1"]);
    assert_exit(&show, 0);
    insta::assert_snapshot!("show", out_text(&env, &show));
}
