//! Regression tests for issue 10's command-line defects: arguments that are not UTF-8, a FIFO
//! as the brief, help that lists exit codes and choices, abort twice, the success message,
//! quitting the picker, the interactive demo, and `--repo`. Each failed before its fix.

use std::process::Stdio;

use crate::util::*;

/// `gavel ARGS` with one argument that is not UTF-8: a clear error (or success), never a
/// panic with a backtrace (exit 101).
#[track_caller]
fn no_panic_with(env: &Env, args: &[&std::ffi::OsStr]) -> std::process::Output {
    let out = env.gavel(&[]).args(args).output().expect("run");
    assert_ne!(out.status.code(), Some(101), "{}", show_output(&out));
    assert!(!stderr(&out).contains("panicked"), "{}", show_output(&out));
    out
}

#[test]
fn arguments_that_are_not_utf8_never_panic() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let env = Env::new();
    env.script(&script(1, &[APPROVED]));
    let bad = OsStr::from_bytes(b"idea-\xff.md");
    std::fs::write(env.repo.join(bad), "# idea\n\nnotes\n").expect("write");
    let out = no_panic_with(&env, &[OsStr::new("issue"), bad]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("not valid UTF-8"),
        "{}",
        show_output(&out)
    );
    let state = OsStr::from_bytes(b"state-\xfe");
    let brief = env.brief("dark-mode");
    let out = no_panic_with(
        &env,
        &[
            OsStr::new("--state-dir"),
            state,
            OsStr::new("issue"),
            OsStr::new(&brief),
        ],
    );
    assert_exit(&out, 3);
    let out = no_panic_with(
        &env,
        &[
            OsStr::new("--state-dir"),
            state,
            OsStr::new("resume"),
            OsStr::new("1"),
            OsStr::new("--choice"),
            OsStr::new("revise"),
            OsStr::new("--feedback-file"),
            OsStr::from_bytes(b"missing-\xff.md"),
        ],
    );
    assert_exit(&out, 1);
    let dir = env.root.join(OsStr::from_bytes(b"demo-\xff"));
    no_panic_with(
        &env,
        &[OsStr::new("demo"), OsStr::new("--dir"), dir.as_os_str()],
    );
}

#[test]
fn a_fifo_given_as_the_brief_is_refused_at_once() {
    let env = Env::new();
    let fifo = env.repo.join("pipe.md");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let mut child = env
        .gavel(&["issue", "pipe.md"])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    // Before the fix gavel blocked forever opening the pipe: give up (and fail) after a minute.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().expect("try_wait").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("gavel hung reading a FIFO as the brief");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("wait");
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("not a regular file"),
        "{}",
        show_output(&out)
    );
    assert!(!env.state_db().exists());
}

#[test]
fn help_lists_the_exit_codes_and_every_choice() {
    let env = Env::new();
    let help = |args: &[&str]| {
        let out = env.run(args);
        assert_exit(&out, 0);
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let top = help(&["--help"]);
    for code in ["Exit codes", "  3 ", "  6 ", "  130 "] {
        assert!(top.contains(code), "gavel --help lacks {code:?}:\n{top}");
    }
    let resume = help(&["resume", "--help"]);
    for choice in [
        "send",
        "approve",
        "revise",
        "retry",
        "edit",
        "abort",
        "Exit codes",
    ] {
        assert!(
            resume.contains(choice),
            "resume --help lacks {choice:?}:\n{resume}"
        );
    }
    let gate = help(&["diff-gate", "--help"]);
    for code in ["Exit codes", "approve", "  5 ", "  6 "] {
        assert!(
            gate.contains(code),
            "diff-gate --help lacks {code:?}:\n{gate}"
        );
    }
}

#[test]
fn aborting_twice_names_the_run_in_its_hint() {
    let env = Env::new();
    env.script(&script(1, &[]));
    let run = start_paused(&env, "dark-mode");
    assert_exit(&env.run(&["abort", &run]), 0);
    let out = env.run(&["abort", &run]);
    assert_exit(&out, 1);
    let err = stderr(&out);
    assert!(
        err.contains(&format!("gavel show {run}")) && !err.contains("gavel show RUN"),
        "{}",
        show_output(&out)
    );
    assert!(err.contains("nothing to abort"), "{}", show_output(&out));
}

#[test]
fn the_success_message_names_the_lineage_the_idea_move_and_the_commit() {
    let env = Env::new();
    env.script(&script(1, &[APPROVED]));
    let brief = env.brief("dark-mode");
    let out = env.run(&["issue", &brief, "--auto"]);
    assert_exit(&out, 0);
    let head = env.git(&["rev-parse", "HEAD"]);
    let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    for needle in [
        "issue #1 filed",
        "docs/lineage/done/1-dark-mode",
        "idea moved to ideas/done/1-dark-mode.md",
        &head[..12],
    ] {
        assert!(all.contains(needle), "{needle:?} missing:\n{all}");
    }
}

#[test]
fn quitting_the_idea_picker_is_exit_0() {
    let env = Env::new();
    env.brief("alpha");
    let editor = crate::pty::fake_editor(&env);
    let mut p = crate::pty::spawn(&env, &["issue", "--select"], &editor.to_string_lossy());
    p.exp_string("Select idea [1-1, q]: ").expect("picker");
    p.send_line("q").expect("quit");
    p.exp_string("no idea selected").expect("says so");
    p.exp_eof().expect("eof");
    assert_eq!(crate::pty::exit_code(&p), 0);
    assert!(!env.state_db().exists(), "quitting writes nothing");
}

#[test]
fn the_interactive_demo_shows_a_person_every_gate() {
    let env = Env::new();
    let editor = crate::pty::fake_editor(&env);
    let dir = env.root.join("demo");
    let mut p = crate::pty::spawn(
        &env,
        &["demo", "--interactive", "--dir", &dir.to_string_lossy()],
        &editor.to_string_lossy(),
    );
    p.exp_string("you decide at each gate")
        .expect("interactive demo");
    p.exp_string("Your choice [S/R/P]: ").expect("draft gate");
    p.send_line("S").expect("send");
    p.exp_string("REVISE").expect("the first verdict");
    p.exp_string("Your choice [A/R/E/P]: ")
        .expect("verdict gate");
    p.send_line("R").expect("revise");
    p.exp_string("Feedback for the drafter")
        .expect("feedback prompt");
    p.send_line("").expect("no feedback");
    p.exp_string("Draft #2").expect("second draft");
    p.exp_string("Your choice [S/R/P]: ").expect("draft gate");
    p.send_line("S").expect("send");
    p.exp_string("Your choice [A/R/E/P]: ")
        .expect("verdict gate");
    p.send_line("A").expect("approve");
    p.exp_string("filed issue #1").expect("filed");
    // Act two: the issue becomes an LLD, through the same two gates.
    p.exp_string("issue #1 -> LLD").expect("act two");
    p.exp_string("Your choice [S/R/P]: ")
        .expect("LLD draft gate");
    p.send_line("S").expect("send");
    p.exp_string("Your choice [A/R/E/P]: ")
        .expect("LLD verdict gate");
    p.send_line("A").expect("approve");
    p.exp_string("approved LLD: docs/lld/active/LLD-1.md")
        .expect("approved");
    // Act three: red, green, then the diff gate wants the typed word.
    p.exp_string("Your choice [approve/reject/P]: ")
        .expect("the implementation's diff gate");
    p.send_line("approve").expect("approve");
    p.exp_string("implemented and merged into main")
        .expect("merged");
    p.exp_eof().expect("eof");
    assert_eq!(crate::pty::exit_code(&p), 0);
    let out = env.run(&["demo", "--interactive"]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("needs a terminal"),
        "{}",
        show_output(&out)
    );
}

#[test]
fn repo_targets_another_repository_from_anywhere() {
    let env = Env::new();
    env.script(&script(1, &[APPROVED]));
    let brief = env.brief("dark-mode");
    let elsewhere = env.root.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("mkdir");
    let repo = env.repo.to_string_lossy().into_owned();
    let brief_abs = env.repo.join(&brief).to_string_lossy().into_owned();
    let out = env
        .gavel(&["--repo", &repo, "issue", &brief_abs, "--auto"])
        .current_dir(&elsewhere)
        .output()
        .expect("run");
    assert_exit(&out, 0);
    assert_eq!(env.issues(), ["0001-dark-mode.md"]);
    assert!(
        env.exists("ideas/done/1-dark-mode.md"),
        "the idea moved in the target repo"
    );
    let runs = env
        .gavel(&["--repo", &repo, "runs"])
        .current_dir(&elsewhere)
        .output()
        .expect("runs");
    assert_exit(&runs, 0);
    assert!(String::from_utf8_lossy(&runs.stdout).contains("dark-mode"));
    let missing = env.run(&["--repo", "no-such-folder", "runs"]);
    assert_exit(&missing, 1);
    assert!(
        stderr(&missing).contains("no-such-folder"),
        "{}",
        show_output(&missing)
    );
}

#[test]
fn auto_open_opens_the_filed_lineage_folder_in_the_editor() {
    let env = Env::new();
    env.script(&script(1, &[APPROVED]));
    let brief = env.brief("dark-mode");
    // An editor that records what it was asked to open.
    let editor = env.root.join("record-editor");
    let opened = env.root.join("opened.txt");
    write_script(
        &editor,
        &format!("printf '%s\\n' \"$@\" >> '{}'", opened.display()),
    );
    let out = env
        .gavel(&["issue", &brief, "--auto", "--open"])
        .env("EDITOR", &editor)
        .output()
        .expect("run");
    assert_exit(&out, 0);
    let args = std::fs::read_to_string(&opened).expect("the editor ran");
    assert_eq!(args.trim(), "docs/lineage/done/1-dark-mode");
    assert!(
        stderr(&out).contains("opened docs/lineage/done/1-dark-mode"),
        "{}",
        show_output(&out)
    );
}

/// A workflow's subcommand comes from the registry, not from the derived command list: the
/// global `--state-dir` still reaches it when given after the subcommand's own arguments.
#[test]
fn a_global_flag_after_a_workflow_subcommand_is_honoured() {
    let env = Env::new();
    env.script(&script(1, &[APPROVED]));
    let brief = env.brief("dark-mode");
    let state = env.root.join("elsewhere-state");
    let state_arg = state.to_string_lossy().into_owned();
    let out = env.run(&["issue", &brief, "--auto", "--state-dir", &state_arg]);
    assert_exit(&out, 0);
    assert!(
        state.join("state.db").is_file(),
        "the run's store is where --state-dir said: {}",
        show_output(&out)
    );
}
