//! Listings on the default SQLite store: `gavel runs` pages newest first, and `gavel audit`
//! reads the diff gate's log file.

use crate::util::*;

#[test]
fn runs_pages_newest_first_and_says_when_older_ones_are_left_out() {
    let env = Env::new();
    env.script(&script(0, &[]));
    for slug in ["one", "two", "three"] {
        let brief = env.brief(slug);
        // No drafter answer: each run fails at its first call, which is enough to list it.
        env.run(&["issue", &brief, "--auto"]);
    }
    let out = env.run(&["runs", "--limit", "2"]);
    assert_exit(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout);
    let slugs: Vec<&str> = text
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect();
    assert_eq!(slugs[..2], ["three", "two"], "{text}");
    assert!(
        text.contains("(the newest 2 runs; older ones: gavel runs --limit 4)"),
        "{text}"
    );
    let all = env.run(&["runs", "--limit", "3"]);
    assert!(!String::from_utf8_lossy(&all.stdout).contains("older ones"));
    assert_exit(&env.run(&["runs", "--limit", "0"]), 2);
}

#[test]
fn audit_reads_the_diff_gates_log_newest_first() {
    let env = Env::new();
    let out = env.run(&["audit"]);
    assert_exit(&out, 0);
    assert!(String::from_utf8_lossy(&out.stdout).contains("no diff-gate decisions"));
    for n in 1..=2 {
        env.write(&format!("src/f{n}.rs"), "pub fn f() {}\n");
        env.git(&["add", &format!("src/f{n}.rs")]);
        // No terminal: the gate fails fast and records that.
        assert_exit(&env.run(&["diff-gate"]), 6);
        env.git(&["commit", "-q", "-m", &format!("f{n}")]);
    }
    let out = env.run(&["audit", "--json", "--limit", "1"]);
    assert_exit(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    assert_eq!(lines.len(), 1, "{text}");
    assert_eq!(lines[0]["decision"], "ABORTED_NON_INTERACTIVE");
    assert_eq!(lines[0]["by"], "Test Person <test@example.invalid>");
    let table = env.run(&["audit"]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert_eq!(
        text.lines().count(),
        3,
        "a header and two decisions: {text}"
    );
}

/// Issue 32: every decision is kept, in every workflow: a gate's answer and an abort of a
/// brief → issue run are listed by `gavel audit` (from the store), with who and when.
#[test]
fn audit_lists_the_gates_answered_and_the_aborts_of_every_workflow() {
    let env = Env::new();
    env.script(&script(2, &[APPROVED]));
    let run = start_paused(&env, "dark-mode");
    assert_exit(&env.run(&["resume", &run, "--choice", "send"]), 3);
    assert_exit(&env.run(&["abort", &run]), 0);
    let out = env.run(&["audit", "--json"]);
    assert_exit(&out, 0);
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    let aborted = lines
        .iter()
        .find(|l| l["decision"] == "ABORTED")
        .expect("the abort is listed");
    assert_eq!(aborted["workflow"], "issue");
    assert_eq!(aborted["timestamp"], FIXED_NOW);
    assert!(
        aborted["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("gavel abort"),
        "{aborted}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l["decision"] == "SEND" && l["by"] == "person"),
        "the draft gate's answer is listed: {lines:?}"
    );
    let table = String::from_utf8_lossy(&env.run(&["audit"]).stdout).into_owned();
    assert!(
        table.contains("ABORTED") && table.contains(&format!("run {run}")),
        "{table}"
    );
}
