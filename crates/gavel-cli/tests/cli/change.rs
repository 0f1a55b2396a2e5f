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
