//! Bad input gets a clear error naming the offending value, a non-zero exit, and changes
//! nothing: no state database, no lineage folder, no commit.

use crate::util::*;

/// Runs `gavel args`, expects `code` and `needle` in stderr, and that nothing was written.
#[track_caller]
fn refused(env: &Env, args: &[&str], code: i32, needle: &str) {
    let before = env.status();
    let out = env.run(args);
    assert_exit(&out, code);
    assert!(
        stderr(&out).contains(needle),
        "expected {needle:?} in\n{}",
        show_output(&out)
    );
    assert!(
        !env.state_db().exists(),
        "{args:?} created the state database"
    );
    assert_eq!(env.status(), before, "{args:?} changed the repository");
    assert!(
        env.ls("docs/lineage/active")
            .iter()
            .all(|n| n == ".gitkeep"),
        "{args:?} made a lineage folder"
    );
}

#[test]
fn a_missing_brief_is_refused() {
    let env = Env::new();
    refused(
        &env,
        &["issue", "missing.md"],
        1,
        "missing.md does not exist",
    );
}

#[test]
fn an_empty_brief_is_refused() {
    let env = Env::new();
    env.write("empty.md", "\n  \n");
    env.git(&["add", "empty.md"]);
    refused(&env, &["issue", "empty.md"], 1, "empty.md is empty");
}

#[test]
fn a_directory_is_refused() {
    let env = Env::new();
    refused(&env, &["issue", "docs"], 1, "is a directory");
}

#[test]
fn non_utf8_bytes_are_refused() {
    let env = Env::new();
    std::fs::write(env.repo.join("bytes.md"), b"# ok\n\xff\xfe").expect("write");
    env.git(&["add", "bytes.md"]);
    refused(
        &env,
        &["issue", "bytes.md"],
        1,
        "not valid UTF-8 (first bad byte at offset 5)",
    );
}

#[test]
fn a_brief_over_1mb_is_refused() {
    let env = Env::new();
    std::fs::write(env.repo.join("big.md"), vec![b'a'; 1024 * 1024 + 1]).expect("write");
    env.git(&["add", "big.md"]);
    refused(
        &env,
        &["issue", "big.md"],
        1,
        "1048577 bytes; the limit is 1048576 bytes",
    );
}

#[test]
fn slugs_that_would_escape_are_refused() {
    let env = Env::new();
    env.write("ok.md", "# idea\n");
    env.git(&["add", "ok.md"]);
    for (slug, why) in [
        ("../escape", "`..`"),
        ("a/b", "path separator"),
        ("a\u{1}b", "control characters"),
        ("..", "`..`"),
    ] {
        refused(&env, &["issue", "ok.md", "--slug", slug], 1, why);
    }
    std::fs::write(env.repo.join("bad\u{7}name.md"), "# idea\n").expect("write");
    env.git(&["add", "-A"]);
    refused(&env, &["issue", "bad\u{7}name.md"], 1, "control characters");
}

#[test]
fn an_invalid_provider_string_is_a_usage_error_listing_the_valid_forms() {
    let env = Env::new();
    env.write("ok.md", "# idea\n");
    env.git(&["add", "ok.md"]);
    refused(
        &env,
        &["issue", "ok.md", "--drafter", "gpt-4"],
        2,
        "openai-compatible:MODEL@BASE_URL",
    );
}

#[test]
fn an_unknown_run_id_is_an_error() {
    let env = Env::new();
    env.script(&script(1, &[APPROVED]));
    let brief = env.brief("dark-mode");
    assert_exit(&env.run(&["issue", &brief, "--auto"]), 0);
    for args in [["resume", "99"], ["show", "99"], ["abort", "99"]] {
        let out = env.run(&args);
        assert_exit(&out, 1);
        assert!(
            stderr(&out).contains("run 99 does not exist"),
            "{}",
            show_output(&out)
        );
    }
}

#[test]
fn resuming_a_finished_run_is_an_error() {
    let env = Env::new();
    env.script(&script(1, &[APPROVED]));
    let brief = env.brief("dark-mode");
    assert_exit(&env.run(&["issue", &brief, "--auto"]), 0);
    let out = env.run(&["resume", "1"]);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("run 1 is already done"),
        "{}",
        show_output(&out)
    );
    assert_eq!(env.issues().len(), 1);
}

#[test]
fn a_corrupt_state_database_is_reported_and_left_alone() {
    let env = Env::new();
    std::fs::create_dir_all(env.repo.join(".gavel")).expect("mkdir");
    let garbage = b"this is not a sqlite database, just some text".repeat(100);
    std::fs::write(env.state_db(), &garbage).expect("write");
    env.script(&script(1, &[APPROVED]));
    let brief = env.brief("dark-mode");
    for args in [vec!["runs"], vec!["issue", &brief, "--auto"]] {
        let out = env.run(&args);
        assert_exit(&out, 1);
        assert!(
            stderr(&out).contains("is not usable"),
            "{}",
            show_output(&out)
        );
    }
    assert_eq!(
        std::fs::read(env.state_db()).expect("read"),
        garbage,
        "the file is unchanged"
    );
}

#[test]
fn an_invalid_gate_answer_is_refused_and_changes_nothing() {
    let env = Env::new();
    env.script(&script(1, &[APPROVED]));
    let brief = env.brief("dark-mode");
    assert_exit(&env.run(&["issue", &brief]), 3);
    let before = env.show("1");
    let out = env.run(&["resume", "1", "--choice", "approve"]);
    assert_exit(&out, 2);
    let err = stderr(&out);
    assert!(
        err.contains("`approve` is not a valid answer") && err.contains("send, revise"),
        "{err}"
    );
    assert_eq!(env.show("1")["status"], before["status"]);
    assert_eq!(env.show("1")["checkpoints"], before["checkpoints"]);
}

#[test]
fn a_bad_config_names_the_key() {
    let env = Env::new();
    env.write("gavel.toml", "[limits]\nmax_iteration = 3\n");
    let out = env.run(&["runs"]);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("max_iteration"),
        "{}",
        show_output(&out)
    );
}

#[test]
fn outside_a_git_repository_is_a_clear_error() {
    let env = Env::new();
    let outside = env.root.join("not-a-repo");
    std::fs::create_dir_all(&outside).expect("mkdir");
    let out = env
        .gavel(&["runs"])
        .current_dir(&outside)
        .env("GIT_CEILING_DIRECTORIES", &env.root)
        .output()
        .expect("run");
    assert_exit(&out, 1);
    let err = stderr(&out);
    assert!(
        err.contains("is not inside a git repository") && err.contains("git init"),
        "{err}"
    );
}

#[test]
fn a_bad_provider_string_lists_the_valid_forms_once() {
    // Regression: the forms were printed in the error and again in a hint.
    let env = Env::new();
    env.write("ok.md", "# idea\n");
    env.git(&["add", "ok.md"]);
    let out = env.run(&["issue", "ok.md", "--drafter", "bogus:x"]);
    assert_exit(&out, 2);
    let err = stderr(&out);
    assert_eq!(err.matches("scripted:FILE").count(), 1, "{err}");
    assert!(err.contains("bogus"), "{err}");
}
