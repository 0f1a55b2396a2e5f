//! What is checked about roles before a run exists (issue 32): a flag a workflow does not use
//! and a provider string that does not parse are refused in every workflow, leaving no run,
//! worktree or lineage; `gavel doctor` checks the implementer, and a repository made by `gavel
//! init` gives the change reviewer the seed's Codex; `gavel change --help` names its five
//! subcommands.

use std::path::Path;

use serde_json::Value;

use crate::change_impl;
use crate::util::*;

/// The folders a run writes in: its worktree, the lineage, the change's folder.
fn run_folders(env: &Env) -> Vec<String> {
    [
        ".gavel/worktrees",
        "docs/lineage/active",
        "openspec/changes/add-x",
    ]
    .iter()
    .flat_map(|f| {
        let p = env.repo.join(f);
        std::fs::read_dir(Path::new(&p))
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .map(move |e| format!("{f}/{}", e.file_name().to_string_lossy()))
    })
    .collect()
}

/// Nothing of a run exists: no run row, no worktree, no lineage or change folder written.
fn assert_no_run(env: &Env, before: &[String], what: &str) {
    assert_eq!(env.runs(), Vec::<Value>::new(), "{what}: no run row");
    assert_eq!(run_folders(env), before, "{what}: nothing written");
    assert_eq!(env.status(), "", "{what}: the checkout is untouched");
}

#[test]
fn every_workflow_refuses_a_flag_it_does_not_use_and_a_bad_provider_before_its_run_exists() {
    let env = python_project(&[]);
    let brief = env.brief("dark-mode");
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "a brief"]);
    change_impl::challenged_change(&env);
    let implement = [
        "implement",
        "1",
        "--lld",
        "docs/design.md",
        "--test-cmd",
        PYTEST,
    ];
    let with = |base: &[&str], extra: &[&str]| -> Vec<String> {
        base.iter().chain(extra).map(|s| (*s).to_owned()).collect()
    };
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            with(&implement, &["--reviewer", "not-a-provider"]),
            "the implement workflow has no reviewer role",
        ),
        (
            with(&implement, &["--drafter", "claude:sonnet"]),
            "the implement workflow has no drafter role",
        ),
        (
            with(&implement, &["--implementer", "not-a-provider"]),
            "not-a-provider",
        ),
        (
            with(&["issue", &brief], &["--reviewer", "not-a-provider"]),
            "not-a-provider",
        ),
        (
            with(&["issue", &brief], &["--drafter", "bogus:x"]),
            "bogus:x",
        ),
        (
            with(&["lld", "1"], &["--drafter", "not-a-provider"]),
            "not-a-provider",
        ),
        (with(&["lld", "1"], &["--reviewer", "bogus:x"]), "bogus:x"),
        (
            with(&["lld", "1"], &["--implementer", "claude:sonnet"]),
            "--implementer",
        ),
        (
            with(
                &["change", "plan", "add-x", "Add x"],
                &["--planner", "not-a-provider"],
            ),
            "not-a-provider",
        ),
        (
            with(
                &["change", "plan", "add-x", "Add x"],
                &["--challenger", "bogus:x"],
            ),
            "bogus:x",
        ),
        (
            with(
                &["change", "plan", "add-x", "Add x"],
                &["--reviewer", "claude:sonnet"],
            ),
            "--reviewer",
        ),
        (
            with(
                &["change", "impl", change_impl::ID, "--test-cmd", PYTEST],
                &["--reviewer", "not-a-provider"],
            ),
            "not-a-provider",
        ),
        (
            with(
                &["change", "impl", change_impl::ID, "--test-cmd", PYTEST],
                &["--implementer", "bogus:x"],
            ),
            "bogus:x",
        ),
        (
            with(
                &["change", "impl", change_impl::ID],
                &["--planner", "claude:sonnet"],
            ),
            "--planner",
        ),
        (
            with(
                &["change", "archive", change_impl::ID],
                &["--reviewer", "claude:sonnet"],
            ),
            "--reviewer",
        ),
    ];
    let before = run_folders(&env);
    for (args, named) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = env.run(&args);
        let what = args.join(" ");
        assert_exit(&out, 2);
        assert!(
            stderr(&out).contains(named),
            "{what}: {}",
            show_output(&out)
        );
        assert_no_run(&env, &before, &what);
    }
}

#[test]
fn doctor_checks_the_implementer_and_gives_the_change_reviewer_the_seeds_codex() {
    let env = Env::new();
    env.write("openspec/changes/.keep", "");
    let out = env.run(&["doctor", "--json"]);
    let report: Value = serde_json::from_slice(&out.stdout).expect("doctor JSON");
    let row = |report: &Value, w: &str, r: &str| -> Value {
        report["roles"]
            .as_array()
            .expect("roles")
            .iter()
            .find(|x| x["workflow"] == w && x["role"] == r)
            .cloned()
            .unwrap_or_else(|| panic!("no {w} {r} row: {report}"))
    };
    // `gavel init`'s [roles] reviewer is the document workflows'; the change reviewer is the
    // seed's, as the README says.
    assert_eq!(
        row(&report, "change-impl", "reviewer")["provider"],
        "codex:gpt-5-codex",
        "{report}"
    );
    let implementer = row(&report, "implement", "implementer");
    assert_eq!(
        implementer["provider"], "scripted:script.yaml",
        "the drafter's: {report}"
    );
    assert_eq!(implementer["required"], true);
    env.write(
        "gavel.toml",
        &(env.read("gavel.toml") + "\n[workflows.implement.roles]\nimplementer = \"nonsense\"\n"),
    );
    let out = env.run(&["doctor", "--json"]);
    assert_exit(&out, 1);
    let report: Value = serde_json::from_slice(&out.stdout).expect("doctor JSON");
    let implementer = row(&report, "implement", "implementer");
    assert_eq!(implementer["ready"], false, "{report}");
    assert!(
        implementer["problem"]
            .as_str()
            .is_some_and(|p| p.contains("nonsense")),
        "{implementer}"
    );
    // A bad change role is fixed where the change roles live.
    env.write(
        "gavel.toml",
        &(env.read("gavel.toml") + "\n[changes.roles]\nreviewer = \"bogus\"\n"),
    );
    let out = env.run(&["doctor", "--json"]);
    let report: Value = serde_json::from_slice(&out.stdout).expect("doctor JSON");
    let reviewer = row(&report, "change-impl", "reviewer");
    assert_eq!(reviewer["ready"], false, "{report}");
    assert!(
        reviewer["fix"]
            .as_str()
            .is_some_and(|f| f.contains("[changes.roles]")),
        "{reviewer}"
    );
}

#[test]
fn change_help_lists_its_five_subcommands() {
    let env = Env::new();
    for args in [&["change", "--help"][..], &["--help"][..]] {
        let out = env.run(args);
        assert_exit(&out, 0);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let line = text
            .lines()
            .find(|l| l.contains("Spec-driven changes"))
            .unwrap_or_else(|| panic!("{text}"));
        for sub in ["list", "status", "plan", "impl", "archive"] {
            assert!(line.contains(sub), "{args:?}: {line}");
        }
    }
}
