//! `gavel change list` and `gavel change status`: changes in OpenSpec's layout, their phase
//! from STATE.yaml (a bad file named with its line), the command that fits, and their tasks.

use serde_json::Value;

use crate::util::*;

fn json(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", show_output(out)))
}

fn changes(env: &Env) {
    env.write(
        "openspec/changes/add-login/STATE.yaml",
        "format: 1\nchange_id: add-login\nphase: implementing\nupdated_at: 2026-01-30T14:33:20Z\n",
    );
    env.write(
        "openspec/changes/add-login/tasks.md",
        "---\nchange_id: add-login\n---\n\n## 1. Data Layer\n- [x] 1.1 Users table\n\n## 2. Logic Layer\n- [ ] 2.1 Password check\n\n## 3. Odds and ends\n- [ ] 3.1 Tidy up\n",
    );
    env.write(
        "openspec/changes/from-openspec/proposal.md",
        "# A change made by OpenSpec\n",
    );
    env.write(
        "openspec/changes/archive/2026-01-01-old/proposal.md",
        "# Archived\n",
    );
}

#[test]
fn changes_are_listed_with_their_phase_next_command_and_tasks() {
    let env = Env::new();
    changes(&env);
    let out = env.run(&["change", "list", "--json"]);
    assert_exit(&out, 0);
    let rows = json(&out);
    let ids: Vec<&str> = rows
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    assert_eq!(
        ids,
        ["add-login", "from-openspec"],
        "the archive is not a change"
    );
    let login = &rows[0];
    assert_eq!(login["phase"], "implementing");
    assert_eq!(login["next"], "impl");
    assert_eq!(
        (login["tasks_done"].as_u64(), login["tasks_total"].as_u64()),
        (Some(1), Some(3))
    );
    assert_eq!(login["open_tasks"][0], "Password check");
    assert_eq!(
        login["unclassified"],
        serde_json::json!(["Tidy up"]),
        "reported, never dropped"
    );
    assert!(rows[1]["phase"].is_null());
    let text = env.run(&["change", "status", "add-login"]);
    assert_exit(&text, 0);
    let shown = String::from_utf8_lossy(&text.stdout);
    assert!(
        shown.contains("implementing") && shown.contains("next: gavel change impl add-login"),
        "{shown}"
    );
    assert!(shown.contains("[ ] Password check"), "{shown}");
}

#[test]
fn a_bad_state_file_is_named_with_its_line_and_bad_ids_are_usage_errors() {
    let env = Env::new();
    changes(&env);
    env.write(
        "openspec/changes/add-login/STATE.yaml",
        "format: 1\nchange_id: add-login\nphase: shipping\nupdated_at: 2026-01-30T14:33:20Z\n",
    );
    let out = env.run(&["change", "status", "add-login", "--json"]);
    assert_exit(&out, 0);
    let problem = json(&out)[0]["problem"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(problem.contains("STATE.yaml:3"), "{problem}");
    assert_eq!(json(&out)[0]["has_state"], true);
    let out = env.run(&["change", "status", "add-login"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("STATE.yaml unreadable"),
        "{}",
        show_output(&out)
    );
    for bad in ["Add_Login", "../x", &"a".repeat(65)] {
        let out = env.run(&["change", "status", bad]);
        assert_exit(&out, 2);
        assert!(
            stderr(&out).contains("invalid change id"),
            "{bad}: {}",
            show_output(&out)
        );
    }
    let out = env.run(&["change", "status", "nope"]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("there is no change `nope`"),
        "{}",
        show_output(&out)
    );
}

#[test]
fn the_changes_root_is_configurable() {
    let env = Env::new();
    env.write("specs-here/changes/tiny/tasks.md", "- [ ] 1.1 One\n");
    env.write(
        "gavel.toml",
        &(env.read("gavel.toml") + "\n[changes]\nroot = \"specs-here\"\n"),
    );
    let out = env.run(&["change", "list", "--json"]);
    assert_exit(&out, 0);
    assert_eq!(json(&out)[0]["id"], "tiny");
    env.write(
        "gavel.toml",
        &(env.read("gavel.toml").replace("specs-here", "../elsewhere")),
    );
    let out = env.run(&["change", "list"]);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("changes.root"),
        "{}",
        show_output(&out)
    );
}

/// Runs gavel, killing it and failing the test if it has not finished within a minute: a
/// command that reads a FIFO as a file never finishes at all.
fn run_within_a_minute(env: &Env, args: &[&str]) -> std::process::Output {
    let mut child = env
        .gavel(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn gavel");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().expect("wait").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("gavel {args:?} hung (a FIFO read as a file?)");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

fn mkfifo(path: &std::path::Path) {
    let out = std::process::Command::new("mkfifo")
        .arg(path)
        .output()
        .expect("mkfifo");
    assert!(out.status.success(), "mkfifo: {}", show_output(&out));
}

#[test]
fn regression_a_fifo_state_file_is_refused_by_every_change_command_not_waited_on() {
    let env = Env::new();
    changes(&env);
    let state = env.repo.join("openspec/changes/add-login/STATE.yaml");
    std::fs::remove_file(&state).expect("rm");
    mkfifo(&state);
    let out = run_within_a_minute(&env, &["change", "list", "--json"]);
    assert_exit(&out, 0);
    let problem = json(&out)[0]["problem"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        problem.contains("STATE.yaml") && problem.contains("named pipe (FIFO)"),
        "{problem}"
    );
    for args in [
        &["change", "status", "add-login"][..],
        &["change", "plan", "add-login"],
        &["change", "impl", "add-login"],
        &["change", "archive", "add-login"],
    ] {
        let out = run_within_a_minute(&env, args);
        if args[1] == "status" {
            assert_exit(&out, 0);
            assert!(
                String::from_utf8_lossy(&out.stdout).contains("FIFO"),
                "{}",
                show_output(&out)
            );
        } else {
            assert_exit(&out, 2);
            assert!(
                stderr(&out).contains("STATE.yaml") && stderr(&out).contains("FIFO"),
                "{args:?}: {}",
                show_output(&out)
            );
        }
    }
    assert!(env.runs().is_empty(), "no run was started");
}

#[test]
fn regression_a_tasks_file_linked_to_dev_zero_is_refused_not_read() {
    let env = Env::new();
    changes(&env);
    let tasks = env.repo.join("openspec/changes/add-login/tasks.md");
    std::fs::remove_file(&tasks).expect("rm");
    std::os::unix::fs::symlink("/dev/zero", &tasks).expect("symlink");
    let out = run_within_a_minute(&env, &["change", "status", "add-login", "--json"]);
    assert_exit(&out, 0);
    let problem = json(&out)[0]["problem"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        problem.contains("tasks.md") && problem.contains("symbolic link"),
        "{problem}"
    );
    let out = run_within_a_minute(&env, &["change", "impl", "add-login"]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("tasks.md is a symbolic link"),
        "{}",
        show_output(&out)
    );
}

#[test]
fn regression_ids_archive_and_leading_dash_are_refused_naming_the_id() {
    let env = Env::new();
    let cases: [(&[&str], &str); 4] = [
        (&["change", "plan", "archive", "Archive things"], "archive"),
        (&["change", "plan", "--", "-rf", "Remove things"], "-rf"),
        (&["change", "status", "archive"], "archive"),
        (&["change", "archive", "--", "--help"], "--help"),
    ];
    for (args, id) in cases {
        let out = env.run(args);
        assert_exit(&out, 2);
        assert!(
            stderr(&out).contains(&format!("invalid change id `{id}`")),
            "{args:?}: {}",
            show_output(&out)
        );
    }
    assert!(!env.exists("openspec/changes/archive/STATE.yaml"));
    assert!(!env.exists("openspec/changes/-rf"));
    assert!(env.runs().is_empty());
}

#[test]
fn regression_a_state_file_naming_another_change_is_refused() {
    let env = Env::new();
    changes(&env);
    env.write(
        "openspec/changes/add-login/STATE.yaml",
        "format: 1\nchange_id: other-change\nphase: implementing\nupdated_at: 2026-01-30T14:33:20Z\n",
    );
    let out = env.run(&["change", "impl", "add-login"]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("STATE.yaml:2")
            && stderr(&out).contains(
                "change_id `other-change` is not the name of the change's folder `add-login`"
            ),
        "{}",
        show_output(&out)
    );
    let out = env.run(&["change", "status", "add-login", "--json"]);
    assert!(
        json(&out)[0]["problem"]
            .as_str()
            .is_some_and(|p| p.contains("other-change")),
        "{}",
        show_output(&out)
    );
}
