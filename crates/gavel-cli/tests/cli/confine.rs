//! `gavel __confine`: an installed gavel is its own agent launcher. A program it starts may
//! write in the repository it is given and nowhere else (not beside it, not in `$HOME`), and
//! the launcher neither reads gavel.toml nor needs the state database.

use std::process::Command;

use crate::util::*;

/// `gavel __confine --write REPO -- sh -c script`, in the repository.
fn confined(env: &Env, script: &str) -> std::process::Output {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("gavel"));
    env.clean_env(&mut cmd);
    cmd.arg("__confine")
        .arg("--write")
        .arg(&env.repo)
        .args(["--", "sh", "-c", script])
        .current_dir(&env.repo)
        .output()
        .expect("run gavel __confine")
}

#[test]
fn gavel_confine_allows_writes_in_the_repository_and_denies_them_outside() {
    let env = Env::new();
    // A gavel.toml that does not parse: the launcher must not read it.
    env.write("gavel.toml", "this is [not toml\n");
    let out = confined(
        &env,
        "echo inside > agent.txt && mkdir -p src && echo x > src/new.rs",
    );
    assert_exit(&out, 0);
    assert_eq!(env.read("agent.txt"), "inside\n");
    assert!(env.exists("src/new.rs"));

    // Beside the repository (here under /tmp, which in the box is a private tmpfs): the
    // write lands in the box's own /tmp, never beside the person's repository.
    let _ = confined(&env, "echo escaped > ../escape.txt");
    assert!(
        !env.root.join("escape.txt").exists(),
        "a write outside landed"
    );
    // A folder outside /tmp that the person may write: refused.
    let outside = tempfile::Builder::new()
        .prefix("confine-outside-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("a folder outside /tmp");
    let out = confined(
        &env,
        &format!("echo escaped > '{}/escape.txt'", outside.path().display()),
    );
    assert_ne!(out.status.code(), Some(0), "{}", show_output(&out));
    assert!(
        stderr(&out).contains("Permission denied")
            || stderr(&out).contains("Read-only file system"),
        "{}",
        show_output(&out)
    );
    assert!(
        !outside.path().join("escape.txt").exists(),
        "a write outside landed"
    );

    // $HOME (here under /tmp too) and a grandchild's write beside the repository.
    let _ = confined(
        &env,
        "echo escaped > \"$HOME/x\"; sh -c 'echo escaped > ../deep.txt'",
    );
    assert!(!env.home().join("x").exists(), "a write in $HOME landed");
    assert!(
        !env.root.join("deep.txt").exists(),
        "a grandchild's write landed"
    );
}

#[test]
fn gavel_confine_refuses_a_missing_folder_and_a_missing_program() {
    let env = Env::new();
    let missing = env.root.join("not-there");
    let out = env.run(&[
        "__confine",
        "--write",
        missing.to_str().expect("UTF-8 temp path"),
        "--",
        "true",
    ]);
    assert_exit(&out, 126);
    assert!(
        stderr(&out).contains("gavel confine: cannot set up the confinement"),
        "{}",
        show_output(&out)
    );

    let out = env.run(&["__confine", "--", "gavel-no-such-agent"]);
    assert_exit(&out, 127);
    assert!(
        stderr(&out).contains("`gavel-no-such-agent` not found"),
        "{}",
        show_output(&out)
    );
}

#[test]
fn gavel_confine_is_hidden_from_help() {
    let env = Env::new();
    let out = env.run(&["--help"]);
    assert_exit(&out, 0);
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("confine"),
        "{}",
        show_output(&out)
    );
}
