//! `gavel diff-gate`, end to end: typed approval through a real terminal, rejection, re-asking,
//! end of input, the approval timeout, the audit log, failing fast without a terminal, and
//! every bypass attempt (`--yes`/`--auto`-style flags, gavel's variables, closed stdin,
//! `approve` piped in), which must change nothing and be recorded.

use std::process::Stdio;
use std::time::{Duration, Instant};

use rexpect::process::WaitStatus;
use rexpect::session::{PtySession, spawn_command};
use serde_json::Value;

use crate::util::*;

/// A repository with a 270-line `state.py` committed and replaced by 56 lines, staged: the
/// PR #165 recreation.
fn replaced_state_py() -> Env {
    let env = Env::new();
    let before: String = (1..=270)
        .map(|i| format!("state_line_{i} = {i}\n"))
        .collect();
    env.write("src/state.py", &before);
    env.git(&["add", "src/state.py"]);
    env.git(&["commit", "-q", "-m", "state.py"]);
    let after: String = (1..=56).map(|i| format!("new_{i} = {i}\n")).collect();
    env.write("src/state.py", &after);
    env.write("src/small.py", "x = 1\n");
    env.git(&["add", "src/state.py", "src/small.py"]);
    env
}

/// Where the gate's decisions go by default: a file the team commits.
const AUDIT_LOG: &str = "docs/audit/diff-gate.jsonl";

fn audit(env: &Env) -> Vec<Value> {
    audit_at(env, AUDIT_LOG)
}

fn audit_at(env: &Env, path: &str) -> Vec<Value> {
    std::fs::read_to_string(env.repo.join(path))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("audit line is JSON"))
        .collect()
}

fn staged(env: &Env) -> String {
    env.git(&["diff", "--cached", "--name-only"])
}

fn spawn(env: &Env, args: &[&str]) -> PtySession {
    let mut cmd = env.gavel(args);
    cmd.env("TERM", "dumb");
    spawn_command(cmd, Some(30_000)).expect("spawn in a pty")
}

fn exit_code(p: &PtySession) -> i32 {
    match p.process().wait().expect("wait") {
        WaitStatus::Exited(_, code) => code,
        other => panic!("unexpected wait status {other:?}"),
    }
}

const PROMPT: &str = "Type 'approve' to commit these changes, or 'reject' to abort: ";

#[test]
fn t010_nothing_staged_has_nothing_to_review() {
    let env = Env::new();
    let out = env.run(&["diff-gate"]);
    assert_exit(&out, 0);
    assert!(String::from_utf8_lossy(&out.stdout).contains("nothing is staged"));
}

#[test]
fn t080_t120_typing_approve_approves_and_pr165_is_flagged_replaced() {
    let env = replaced_state_py();
    let mut p = spawn(&env, &["diff-gate"]);
    p.exp_string("src/state.py").expect("stat summary");
    p.exp_string("REPLACED")
        .expect("PR #165 recreation flagged REPLACED");
    p.exp_string("270").expect("before line count");
    p.exp_string(PROMPT).expect("prompt");
    p.send_line("approve").expect("approve");
    p.exp_string("approved").expect("approved");
    p.exp_eof().expect("eof");
    assert_eq!(exit_code(&p), 0);
    let log = audit(&env);
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["decision"], "APPROVED");
    assert_eq!(
        log[0]["flagged_files"],
        serde_json::json!(["src/state.py"]),
        "only the flagged file: {}",
        log[0]
    );
}

#[test]
fn issue10_the_summary_lists_new_files_and_is_printed_once() {
    // Regression (issue 10, defects 1 and 2): new files were not called out, and the counts
    // were printed twice (by the report and again by the command after it).
    let env = replaced_state_py();
    let mut p = spawn(&env, &["diff-gate"]);
    let shown = p.exp_string(PROMPT).expect("prompt");
    assert!(shown.contains("NEW  src/small.py (1 line)"), "{shown}");
    assert_eq!(
        shown
            .matches("2 files staged; 1 flagged for review")
            .count(),
        1,
        "{shown}"
    );
    assert_eq!(shown.matches("2 files changed, ").count(), 1, "{shown}");
    assert!(!shown.contains("file(s)"), "summary repeated: {shown}");
    p.send_line("reject").expect("reject");
    p.exp_eof().expect("eof");
    assert_eq!(exit_code(&p), 5);
}

#[test]
fn t090_t130_reject_leaves_the_changes_staged_and_is_logged() {
    let env = replaced_state_py();
    let mut p = spawn(&env, &["diff-gate"]);
    p.exp_string(PROMPT).expect("prompt");
    p.send_line("reject").expect("reject");
    p.exp_eof().expect("eof");
    assert_eq!(exit_code(&p), 5);
    assert!(staged(&env).contains("src/state.py"), "still staged");
    let log = audit(&env);
    assert_eq!(
        (log[0]["decision"].as_str(), log[0]["timestamp"].as_str()),
        (Some("REJECTED"), Some(FIXED_NOW))
    );
    assert_eq!(log[0]["files_changed"], 2);
}

#[test]
fn t100_empty_and_other_answers_are_asked_again_never_approved() {
    let env = replaced_state_py();
    let mut p = spawn(&env, &["diff-gate"]);
    for answer in ["", "yes", "y", "APPROVE", "approve it"] {
        p.exp_string(PROMPT).expect("prompt");
        p.send_line(answer).expect("answer");
    }
    p.exp_string("neither 'approve' nor 'reject'")
        .expect("re-asked");
    p.exp_string(PROMPT).expect("prompt again");
    p.send_control('d').expect("end of input");
    p.exp_eof().expect("eof");
    assert_eq!(exit_code(&p), 5, "end of input rejects");
    assert_eq!(audit(&env)[0]["decision"], "REJECTED");
}

#[test]
fn an_unanswered_gate_times_out_as_a_rejection() {
    let env = replaced_state_py();
    env.set_config_line("approval_timeout_secs", "approval_timeout_secs = 2");
    let mut p = spawn(&env, &["diff-gate"]);
    p.exp_string(PROMPT).expect("prompt");
    p.exp_string("no answer within 2 seconds")
        .expect("timeout message");
    p.exp_eof().expect("eof");
    assert_eq!(exit_code(&p), 5);
    assert_eq!(audit(&env)[0]["reason"], "no answer within 2 seconds");
}

#[test]
fn t140_without_a_terminal_it_aborts_at_once_with_its_own_code() {
    let env = replaced_state_py();
    let started = Instant::now();
    let out = env
        .gavel(&["diff-gate"])
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert_exit(&out, 6);
    assert!(started.elapsed() < Duration::from_secs(10), "no hang");
    assert!(
        stderr(&out).contains("approval needs a person at a terminal")
            && stderr(&out).contains("src/state.py"),
        "{}",
        show_output(&out)
    );
    assert!(staged(&env).contains("src/state.py"));
    assert_eq!(audit(&env)[0]["decision"], "ABORTED_NON_INTERACTIVE");
}

#[test]
fn issue10_the_audit_record_goes_to_a_file_the_team_can_commit() {
    // Regression (issue 10, defect 3): the record went to .gavel/audit.jsonl, which gavel init
    // puts in .gitignore, so no team ever saw it.
    let env = replaced_state_py();
    let gate = |env: &Env| {
        env.gavel(&["diff-gate"])
            .stdin(Stdio::null())
            .output()
            .expect("run")
    };
    assert_exit(&gate(&env), 6);
    assert_eq!(audit(&env).len(), 1);
    assert!(!env.repo.join(".gavel/audit.jsonl").exists());
    let status = env.git(&["status", "--porcelain", "--untracked-files=all"]);
    assert!(
        status.lines().any(|l| l == format!("?? {AUDIT_LOG}")),
        "git sees the log, ready to commit:\n{status}"
    );
    // [diff_gate] audit_log moves it, relative to the repository root.
    env.set_config_line("audit_log", "audit_log = \"audit/gate.jsonl\"");
    assert_exit(&gate(&env), 6);
    assert_eq!(audit(&env).len(), 1, "the old log is not written");
    let moved = audit_at(&env, "audit/gate.jsonl");
    assert_eq!(moved[0]["decision"], "ABORTED_NON_INTERACTIVE");
    // A path outside the repository is refused before anything is reviewed.
    env.set_config_line("audit_log", "audit_log = \"../outside.jsonl\"");
    let out = gate(&env);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("diff_gate.audit_log"),
        "{}",
        show_output(&out)
    );
}

#[test]
fn t110_bypass_attempts_never_approve() {
    let env = replaced_state_py();
    // --auto is accepted only to be recorded: without a terminal the gate still aborts.
    let out = env
        .gavel(&["diff-gate", "--auto"])
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert_exit(&out, 6);
    assert_eq!(
        audit(&env)[0]["bypass_attempts"],
        serde_json::json!(["--auto"])
    );
    // Every gavel variable, and some that sound like approval.
    let mut cmd = env.gavel(&["diff-gate"]);
    for (k, v) in [
        ("GAVEL_AUTO", "1"),
        ("GAVEL_APPROVE", "approve"),
        ("GAVEL_DIFF_GATE", "approve"),
        ("GAVEL_NONINTERACTIVE", "1"),
        ("GAVEL_CRASH_AT", ""),
        ("GAVEL_STATE_DIR", ".gavel"),
        ("CI", "true"),
    ] {
        cmd.env(k, v);
    }
    assert_exit(&cmd.stdin(Stdio::null()).output().expect("run"), 6);
    // stdin closed.
    assert_exit(
        &env.gavel(&["diff-gate"])
            .stdin(Stdio::null())
            .output()
            .expect("run"),
        6,
    );
    // stdin a file that says approve: not a terminal, so it must abort, not approve.
    let answer = env.write("answer.txt", "approve\n");
    let file = std::fs::File::open(answer).expect("open");
    assert_exit(
        &env.gavel(&["diff-gate"]).stdin(file).output().expect("run"),
        6,
    );
    let log = audit(&env);
    let decisions: Vec<_> = log
        .iter()
        .map(|e| e["decision"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(decisions, ["ABORTED_NON_INTERACTIVE"; 4]);
    // The variables that look like answers are named; gavel's own hooks and CI are not.
    assert_eq!(
        log[1]["bypass_attempts"],
        serde_json::json!([
            "GAVEL_APPROVE",
            "GAVEL_AUTO",
            "GAVEL_DIFF_GATE",
            "GAVEL_NONINTERACTIVE"
        ]),
        "{}",
        log[1]
    );
    // Nothing was tried in the last two: no terminal alone is the decision, not an attempt.
    for record in &log[2..] {
        assert_eq!(record["bypass_attempted"], false, "{record}");
        assert!(record.get("bypass_attempts").is_none(), "{record}");
    }
}

#[test]
fn issue10_yes_flag_and_approve_variable_are_recorded_and_change_nothing() {
    // Regression (issue 10, defect 4): attempts to skip the gate were refused (--auto) or
    // silently ignored (variables) and never recorded.
    let env = replaced_state_py();
    let out = env
        .gavel(&["diff-gate", "--yes"])
        .env("GAVEL_AUTO_APPROVE", "secret-value-1")
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert_exit(&out, 6);
    let err = stderr(&out);
    let yes = err
        .find("warning: ignored --yes: the diff gate cannot be skipped")
        .unwrap_or_else(|| panic!("{}", show_output(&out)));
    let var = err
        .find("warning: ignored GAVEL_AUTO_APPROVE: the diff gate cannot be skipped")
        .unwrap_or_else(|| panic!("{}", show_output(&out)));
    let abort = err
        .find("approval needs a person at a terminal")
        .unwrap_or_else(|| panic!("{}", show_output(&out)));
    assert!(yes < abort && var < abort, "{}", show_output(&out));
    let log = audit(&env);
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["decision"], "ABORTED_NON_INTERACTIVE");
    assert_eq!(log[0]["bypass_attempted"], true);
    assert_eq!(
        log[0]["bypass_attempts"],
        serde_json::json!(["--yes", "GAVEL_AUTO_APPROVE"])
    );
    let text = std::fs::read_to_string(env.repo.join(AUDIT_LOG)).expect("log");
    assert!(
        !text.contains("secret-value-1"),
        "a value was recorded: {text}"
    );
    assert!(!err.contains("secret-value-1"), "a value was shown: {err}");
    assert!(staged(&env).contains("src/state.py"));
}

#[test]
fn issue10_yes_at_a_terminal_still_asks_and_the_approval_records_the_attempt() {
    let env = replaced_state_py();
    let mut p = spawn(&env, &["diff-gate", "-y", "--force", "--no-verify"]);
    let shown = p.exp_string(PROMPT).expect("the prompt, despite -y");
    let warning = shown
        .find("warning: ignored --yes: the diff gate cannot be skipped")
        .unwrap_or_else(|| panic!("{shown}"));
    let report = shown
        .find("Staged changes")
        .unwrap_or_else(|| panic!("{shown}"));
    assert!(warning < report, "warned before the report: {shown}");
    assert!(shown.contains("warning: ignored --no-verify"), "{shown}");
    p.send_line("approve").expect("approve");
    p.exp_string("approved").expect("approved");
    p.exp_eof().expect("eof");
    assert_eq!(exit_code(&p), 0);
    let log = audit(&env);
    assert_eq!(log[0]["decision"], "APPROVED");
    assert_eq!(
        log[0]["bypass_attempts"],
        serde_json::json!(["--yes", "--force", "--no-verify"])
    );
    assert_eq!(log[0]["bypass_attempted"], true);
}

#[test]
fn the_bypass_flags_are_hidden_from_help() {
    let env = Env::new();
    let out = env.run(&["diff-gate", "--help"]);
    assert_exit(&out, 0);
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("--worktree"), "{help}");
    for flag in [
        "--yes",
        "--auto",
        "--force",
        "--no-verify",
        "--skip",
        "--approve",
        "-y",
    ] {
        assert!(!help.contains(flag), "{flag} in help:\n{help}");
    }
}

#[test]
fn t120_a_rejected_gate_blocks_the_commit_that_follows_it() {
    let env = replaced_state_py();
    let before = env.git(&["rev-parse", "HEAD"]);
    let gavel = assert_cmd::cargo::cargo_bin("gavel");
    let script = format!(
        "{} diff-gate && git commit -q -m 'should not happen'",
        gavel.display()
    );
    let mut cmd = std::process::Command::new("sh");
    env.clean_env(&mut cmd);
    let out = cmd
        .args(["-c", &script])
        .current_dir(&env.repo)
        .stdin(Stdio::null())
        .output()
        .expect("sh");
    assert_eq!(out.status.code(), Some(6));
    assert_eq!(env.git(&["rev-parse", "HEAD"]), before, "no commit");
}

#[test]
fn the_gate_reviews_another_worktree() {
    let env = replaced_state_py();
    env.git(&["stash", "-q"]);
    let wt = env.root.join("wt");
    env.git(&[
        "worktree",
        "add",
        "-q",
        &wt.to_string_lossy(),
        "-b",
        "feature",
    ]);
    std::fs::remove_file(wt.join("src/state.py")).expect("delete in worktree");
    let mut git = std::process::Command::new("git");
    env.clean_env(&mut git);
    assert!(
        git.args(["add", "-A"])
            .current_dir(&wt)
            .status()
            .expect("git add")
            .success()
    );
    let out = env
        .gavel(&["diff-gate", "--worktree", &wt.to_string_lossy()])
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert_exit(&out, 6);
    assert!(
        stderr(&out).contains("src/state.py"),
        "{}",
        show_output(&out)
    );
    let log = audit(&env);
    assert!(
        log[0]["repo"].as_str().is_some_and(|r| r.ends_with("/wt")),
        "{}",
        log[0]
    );
}
