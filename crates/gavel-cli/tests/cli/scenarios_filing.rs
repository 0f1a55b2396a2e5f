//! Seed scenarios 110–190: filing errors (retry / edit / abort), resume after a closed
//! terminal, numbering over many loops, the move to done/, and the single commit.

use gavel_llm::Role;

use crate::util::*;

/// A run paused at the verdict gate with a broken tracker; returns the run id.
fn at_file_error(env: &Env) -> String {
    env.script(&script(1, &[APPROVED]));
    let run = start_paused(env, "dark-mode");
    assert_exit(&env.run(&["resume", &run, "--choice", "send"]), 3);
    std::fs::remove_dir_all(env.repo.join("docs/issues")).ok();
    env.write("docs/issues", "broken");
    let out = env.run(&["resume", &run, "--choice", "approve"]);
    assert_exit(&out, 3);
    assert!(
        stderr(&out).contains("--choice retry"),
        "{}",
        show_output(&out)
    );
    run
}

#[test]
fn scenario_110_tracker_rejection_offers_retry_edit_abort_and_keeps_files() {
    let env = Env::new();
    let run = at_file_error(&env);
    let shown = env.show(&run);
    assert_eq!(shown["status"]["gate"]["kind"], "file-error");
    assert!(
        shown["status"]["gate"]["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("not a folder")
    );
    assert_eq!(
        env.ls("docs/lineage/active/dark-mode"),
        ["001-brief.md", "002-draft.md", "003-verdict.md"]
    );
}

#[test]
fn scenario_120_retry_after_error_files_the_issue() {
    let env = Env::new();
    let run = at_file_error(&env);
    std::fs::remove_file(env.repo.join("docs/issues")).expect("repair");
    assert_exit(&env.run(&["resume", &run, "--choice", "retry"]), 0);
    assert_eq!(env.issues(), ["0001-dark-mode.md"]);
    let timeline = env.show(&run)["timeline"].to_string();
    assert!(timeline.contains("\"choice\":\"retry\""), "{timeline}");
}

#[test]
fn scenario_130_edit_after_error_returns_to_the_verdict_gate() {
    let env = Env::new();
    let run = at_file_error(&env);
    assert_exit(&env.run(&["resume", &run, "--choice", "edit"]), 3);
    assert_eq!(env.show(&run)["status"]["gate"]["kind"], "verdict");
}

#[test]
fn scenario_140_abort_after_error_leaves_files_in_active() {
    let env = Env::new();
    let run = at_file_error(&env);
    let out = env.run(&["resume", &run, "--choice", "abort"]);
    assert_exit(&out, 5);
    assert_eq!(env.runs()[0]["status"], "aborted");
    assert!(env.exists("docs/lineage/active/dark-mode/002-draft.md"));
    assert!(env.ls("docs/lineage/done").iter().all(|n| n == ".gitkeep"));
}

#[test]
fn scenario_150_resume_after_the_terminal_closed() {
    let env = Env::new();
    env.script(&script(1, &[APPROVED]));
    let brief = env.brief("dark-mode");
    let out = env
        .gavel(&["issue", &brief, "--auto"])
        .env("GAVEL_CRASH_AT", "after:N4_review")
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        None,
        "killed by a signal: {}",
        show_output(&out)
    );
    assert_eq!(env.runs()[0]["status"], "interrupted");
    assert_exit(&env.run(&["resume", "1"]), 0);
    assert_eq!(
        (env.finished(Role::DRAFTER), env.finished(Role::REVIEWER)),
        (1, 1)
    );
    assert_eq!(env.issues().len(), 1);
}

#[test]
fn scenario_170_sequential_numbering_over_ten_loops() {
    let env = Env::new();
    let mut verdicts = vec![REVISE; 9];
    verdicts.push(APPROVED);
    env.script(&script(10, &verdicts));
    let brief = env.brief("dark-mode");
    assert_exit(&env.run(&["issue", &brief, "--auto"]), 0);
    let names = env.ls(&done_dir(&env, 1, "dark-mode"));
    assert_eq!(names.len(), 22, "{names:?}");
    assert_gap_free(&names);
    assert!(names[0].ends_with("brief.md") && names[21].ends_with("filed.json"));
    for (i, pair) in names[1..21].chunks(2).enumerate() {
        assert!(
            pair[0].ends_with("-draft.md") && pair[1].ends_with("-verdict.md"),
            "loop {i}: {pair:?}"
        );
    }
    assert!(
        env.prompt(Role::DRAFTER, 9).contains("### Review #9"),
        "all verdicts are cumulative"
    );
}

#[test]
fn scenario_180_lineage_moves_to_done() {
    let env = Env::new();
    env.script(&script(1, &[APPROVED]));
    let brief = env.brief("dark-mode");
    assert_exit(&env.run(&["issue", &brief, "--auto"]), 0);
    done_dir(&env, 1, "dark-mode");
    assert!(!env.exists("docs/lineage/active/dark-mode"));
}

#[test]
fn scenario_190_everything_lands_in_one_commit() {
    let env = Env::new();
    env.script(&script(1, &[APPROVED]));
    let brief = env.brief("dark-mode");
    env.git(&["add", &brief]);
    env.git(&["commit", "-q", "-m", "idea"]);
    assert_exit(&env.run(&["issue", &brief, "--auto"]), 0);
    assert_eq!(env.git(&["rev-list", "--count", "HEAD"]).trim(), "3");
    let subject = env.git(&["log", "-1", "--format=%s"]);
    assert!(subject.starts_with("gavel: file issue #1 "), "{subject}");
    let files = env.git(&["show", "--name-status", "--no-renames", "--format=", "HEAD"]);
    for needle in [
        "docs/lineage/done/1-dark-mode/001-brief.md",
        "docs/lineage/done/1-dark-mode/004-filed.json",
        "docs/issues/0001-dark-mode.md",
        "docs/issues/labels.txt",
        "ideas/done/1-dark-mode.md",
    ] {
        assert!(
            files.contains(needle),
            "{needle} missing from the commit:\n{files}"
        );
    }
    assert!(files.contains("D\tideas/active/dark-mode.md"), "{files}");
    assert_eq!(env.status(), "", "nothing left uncommitted");
}
