//! Gates driven through a real pseudo-terminal, with a fake editor program standing in for
//! the person's editor: the prompts, re-asking on bad input, the editor round trip, the slug
//! collision choices, the editor pre-flight, and Ctrl-C.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use gavel_llm::Role;
use rexpect::process::WaitStatus;
use rexpect::session::{PtySession, spawn_command};

use crate::util::*;

/// A fake editor: appends a marker line to every file it is given, like a person's edit.
pub(crate) fn fake_editor(env: &Env) -> PathBuf {
    let path = env.root.join("fake-editor");
    std::fs::write(
        &path,
        "#!/bin/sh\nfor f in \"$@\"; do printf 'EDITED-BY-PERSON\\n' >> \"$f\"; done\n",
    )
    .expect("write editor");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

pub(crate) fn spawn(env: &Env, args: &[&str], editor: &str) -> PtySession {
    let mut cmd = env.gavel(args);
    cmd.env("EDITOR", editor).env("TERM", "dumb");
    spawn_command(cmd, Some(30_000)).expect("spawn in a pty")
}

pub(crate) fn exit_code(p: &PtySession) -> i32 {
    match p.process().wait().expect("wait") {
        WaitStatus::Exited(_, code) => code,
        other => panic!("unexpected wait status {other:?}"),
    }
}

#[test]
fn draft_gate_in_a_terminal_opens_the_editor_and_reasks_bad_answers() {
    let env = Env::new();
    env.script(&script(1, &[APPROVED]));
    let editor = fake_editor(&env);
    let brief = env.brief("dark-mode");
    let mut p = spawn(&env, &["issue", &brief], &editor.to_string_lossy());
    p.exp_string("Iteration 1 | Draft #1").expect("draft gate");
    p.exp_string("Your choice [S/R/P]: ").expect("prompt");
    p.send_line("x").expect("send");
    p.exp_string("`x` is not one of S, R, P").expect("re-asked");
    p.exp_string("Your choice [S/R/P]: ").expect("prompt again");
    p.send_line("s").expect("send");
    p.exp_string("(recommended)")
        .expect("verdict gate recommends");
    p.exp_string("Your choice [A/R/E/P]: ")
        .expect("verdict prompt");
    p.send_line("A").expect("approve");
    p.exp_string("issue #1 filed").expect("filed");
    p.exp_eof().expect("eof");
    assert_eq!(exit_code(&p), 0);
    let issue = env.read("docs/issues/0001-dark-mode.md");
    assert!(
        issue.contains("EDITED-BY-PERSON"),
        "the person's edit is what gets filed:\n{issue}"
    );
    assert!(
        env.prompt(Role::REVIEWER, 0).contains("EDITED-BY-PERSON"),
        "the reviewer saw the edited draft"
    );
}

#[test]
fn revise_feedback_is_typed_at_the_terminal() {
    let env = Env::new();
    env.script(&script(2, &[APPROVED]));
    let editor = fake_editor(&env);
    let brief = env.brief("dark-mode");
    let mut p = spawn(&env, &["issue", &brief], &editor.to_string_lossy());
    p.exp_string("Your choice [S/R/P]: ").expect("prompt");
    p.send_line("R").expect("revise");
    p.exp_string("Feedback for the drafter")
        .expect("feedback prompt");
    p.send_line("Name the toggle.").expect("feedback");
    p.send_line("").expect("end feedback");
    p.exp_string("Draft #2").expect("second draft gate");
    p.exp_string("Your choice [S/R/P]: ").expect("prompt");
    p.send_line("P").expect("pause");
    p.exp_eof().expect("eof");
    assert_eq!(exit_code(&p), 3);
    assert_eq!(
        env.read("docs/lineage/active/dark-mode/003-feedback.md"),
        "Name the toggle."
    );
}

#[test]
fn scenario_025_027_slug_collision_prompt_and_new_name() {
    let env = Env::new();
    env.script(&script(2, &[]));
    let brief = env.brief("dark-mode");
    assert_exit(&env.run(&["issue", &brief]), 3);
    let editor = fake_editor(&env);
    let mut p = spawn(&env, &["issue", &brief], &editor.to_string_lossy());
    p.exp_string("[R]esume existing / [N]ew name / [A]bort? ")
        .expect("collision prompt");
    p.send_line("N").expect("new");
    p.exp_string("New slug: ").expect("slug prompt");
    p.send_line("../up").expect("bad slug");
    p.exp_string("try again").expect("re-asked");
    p.send_line("foo").expect("slug");
    p.exp_string("Your choice [S/R/P]: ")
        .expect("draft gate of the new run");
    p.send_line("P").expect("pause");
    p.exp_eof().expect("eof");
    assert_eq!(exit_code(&p), 3);
    assert!(env.exists("docs/lineage/active/foo/002-draft.md"));
    assert_eq!(env.runs().len(), 2);
}

#[test]
fn scenario_030_editor_not_on_path_fails_preflight() {
    let env = Env::new();
    env.script(&script(1, &[APPROVED]));
    let brief = env.brief("dark-mode");
    let mut p = spawn(&env, &["issue", &brief], "no-such-editor-gavel --wait");
    p.exp_string("editor `no-such-editor-gavel` is not on PATH")
        .expect("clear error");
    p.exp_eof().expect("eof");
    assert_eq!(exit_code(&p), 1);
    assert!(
        env.calls().is_empty(),
        "no model call before pre-flight passes"
    );
}

#[test]
fn ctrl_c_at_a_gate_exits_130_and_the_run_stays_resumable() {
    let env = Env::new();
    env.script(&script(1, &[APPROVED]));
    let editor = fake_editor(&env);
    let brief = env.brief("dark-mode");
    let mut p = spawn(&env, &["issue", &brief], &editor.to_string_lossy());
    p.exp_string("Your choice [S/R/P]: ").expect("prompt");
    p.send_control('c').expect("ctrl-c");
    p.exp_eof().expect("eof");
    assert_eq!(exit_code(&p), 130);
    assert_eq!(env.runs()[0]["status"], "waiting");
    assert_exit(&env.run(&["resume", "1", "--choice", "send"]), 3);
}

#[test]
fn select_picks_an_idea_and_edit_reopens_the_verdict() {
    let env = Env::new();
    env.script(&script(1, &[REVISE]));
    env.brief("alpha");
    env.brief("beta");
    let editor = fake_editor(&env);
    let mut p = spawn(&env, &["issue", "--select"], &editor.to_string_lossy());
    p.exp_string("[2] beta.md").expect("picker lists ideas");
    p.exp_string("Select idea [1-2, q]: ")
        .expect("picker prompt");
    p.send_line("7").expect("out of range");
    p.exp_string("not a number from 1 to 2").expect("re-asked");
    p.send_line("2").expect("pick beta");
    p.exp_string("Your choice [S/R/P]: ").expect("draft gate");
    p.send_line("S").expect("send");
    p.exp_string("Your choice [A/R/E/P]: ")
        .expect("verdict gate");
    p.send_line("E").expect("edit");
    p.exp_string("Your choice [A/R/E/P]: ")
        .expect("asked again after editing");
    p.send_line("P").expect("pause");
    p.exp_eof().expect("eof");
    assert_eq!(exit_code(&p), 3);
    let verdict = env.read("docs/lineage/active/beta/003-verdict.md");
    assert!(
        verdict.contains("EDITED-BY-PERSON"),
        "[E]dit opened the verdict:\n{verdict}"
    );
    assert_eq!(env.runs()[0]["slug"], "beta");
}

#[test]
fn a_run_at_a_terminal_prompt_stays_locked_and_shows_the_verdict() {
    let env = Env::new();
    env.script(&script(1, &["Prose from the reviewer \u{1b}[31mwith escapes\u{1b}[0m.\n\n```json\n{\"verdict\": \"REVISE\", \"findings\": [\"name the toggle\"]}\n```\n"]));
    let editor = fake_editor(&env);
    let brief = env.brief("dark-mode");
    let mut p = spawn(&env, &["issue", &brief], &editor.to_string_lossy());
    p.exp_string("Your choice [S/R/P]: ").expect("draft gate");
    let out = env.run(&["resume", "1", "--choice", "send"]);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("being driven by another process"),
        "{}",
        show_output(&out)
    );
    p.send_line("S").expect("send");
    p.exp_string("Prose from the reviewer with escapes.")
        .expect("verdict preview, sanitized");
    p.exp_string("- name the toggle").expect("findings");
    p.exp_string("Your choice [A/R/E/P]: ")
        .expect("verdict gate");
    p.send_line("P").expect("pause");
    p.exp_eof().expect("eof");
    assert_eq!(exit_code(&p), 3);
}
