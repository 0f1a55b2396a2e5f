//! `gavel lld ISSUE` end to end: brief → issue → LLD on the local tracker and on the fake
//! GitHub, in auto mode and paused/resumed at each gate; every reference form; the context
//! validator refusing before anything is written; closed issues; collisions with an approved
//! LLD.

use gavel_fakeapi::FakeServer;
use gavel_llm::Role;
use serde_json::Value;

use crate::github::{REPO, TOKEN, github_env};
use crate::util::*;

/// Issue `n` of the local tracker (see [`Env::local_issue`]).
pub fn local_issue(env: &Env, n: u64, state: &str) {
    env.local_issue(n, state);
}

/// `approved.json` of a done LLD lineage folder.
fn approved_json(env: &Env, folder: &str) -> Value {
    let name = env
        .ls(folder)
        .into_iter()
        .find(|n| n.ends_with("approved.json"))
        .expect("approved.json");
    serde_json::from_str(&env.read(&format!("{folder}/{name}"))).expect("json")
}

#[test]
fn a_filed_issue_becomes_an_approved_lld_in_one_commit() {
    let env = Env::new();
    env.script(&script(1, &[APPROVED]));
    let brief = env.brief("dark-mode");
    assert_exit(&env.run(&["issue", &brief, "--auto"]), 0);
    env.script(&script(2, &[REVISE, APPROVED]));
    let out = env.run(&["lld", "1", "--auto"]);
    assert_exit(&out, 0);
    assert!(
        show_output(&out).contains("LLD for issue #1 approved: docs/lld/active/LLD-1.md"),
        "{}",
        show_output(&out)
    );
    assert!(
        env.read("docs/lld/active/LLD-1.md")
            .starts_with("# Add dark mode v2")
    );
    let done = "docs/lineage/done/1-lld";
    let names = env.ls(done);
    assert_eq!(
        names,
        [
            "001-issue.md",
            "002-draft.md",
            "003-verdict.md",
            "004-draft.md",
            "005-verdict.md",
            "006-approved.json"
        ]
    );
    assert!(
        env.read(&format!("{done}/001-issue.md"))
            .contains("**Issue:** #1")
    );
    let verdict = env.read(&format!("{done}/005-verdict.md"));
    assert!(
        verdict.contains("rubric: docs/skills/0702c-lld-review-prompt.md"),
        "{verdict}"
    );
    assert!(verdict.contains("rubric_sha256:"), "{verdict}");
    let a = approved_json(&env, done);
    assert_eq!(a["issue_number"], 1);
    assert_eq!(a["issue_reference"], "1");
    assert_eq!(a["issue_url"], "docs/issues/0001-dark-mode.md");
    assert_eq!(a["lld_path"], "docs/lld/active/LLD-1.md");
    assert_eq!(
        (a["draft_count"].as_u64(), a["verdict_count"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(a["reviewer"], "scripted:script.yaml");
    assert_eq!(a["reviewer_model"], "scripted-test");
    assert_eq!(a["auto_mode"], true);
    assert_eq!(a["approved_at"], FIXED_NOW);
    assert!(
        a["rubric_sha256"].as_str().is_some_and(|h| h.len() == 64),
        "{a}"
    );
    let subjects = env.git(&["log", "--format=%s"]);
    assert_eq!(
        subjects.matches("gavel: approve LLD for #1").count(),
        1,
        "{subjects}"
    );
    assert_eq!(env.status(), "", "everything is committed");
    // The drafter was given the issue and the LLD template.
    let prompt = env.prompt(Role::DRAFTER, 0);
    assert!(
        prompt.contains("## Issue") && prompt.contains("## 2. Proposed Changes"),
        "{prompt}"
    );
    let runs = env.runs();
    assert_eq!(runs[0]["workflow"], "lld", "the newest run first");
    assert_eq!(runs[0]["slug"], "1-lld");
    let show = env.run(&["show", "2"]);
    assert!(
        String::from_utf8_lossy(&show.stdout).starts_with("run 2 · lld · 1-lld"),
        "{}",
        show_output(&show)
    );
}

#[test]
fn an_lld_run_pauses_at_each_gate_and_resumes_with_choices() {
    let env = Env::new();
    local_issue(&env, 4, "open");
    env.script(&script(2, &[APPROVED, APPROVED]));
    let out = env.run(&["lld", "#4"]);
    assert_exit(&out, 3);
    assert!(
        stderr(&out).contains("--choice send"),
        "{}",
        show_output(&out)
    );
    let out = env.run(&["resume", "1", "--choice", "send"]);
    assert_exit(&out, 3);
    assert!(
        stderr(&out).contains("--choice approve"),
        "{}",
        show_output(&out)
    );
    // The person wants another round although the reviewer approved.
    env.write("feedback.md", "Name the CSS variables.\n");
    let out = env.run(&[
        "resume",
        "1",
        "--choice",
        "revise",
        "--feedback-file",
        "feedback.md",
    ]);
    assert_exit(&out, 3);
    assert_exit(&env.run(&["resume", "1", "--choice", "send"]), 3);
    let out = env.run(&["resume", "1", "--choice", "approve"]);
    assert_exit(&out, 0);
    let names = env.ls("docs/lineage/done/4-lld");
    assert_gap_free(&names);
    assert!(
        names.iter().any(|n| n.ends_with("feedback.md")),
        "{names:?}"
    );
    assert!(
        env.prompt(Role::DRAFTER, 1)
            .contains("Name the CSS variables.")
    );
    assert!(env.exists("docs/lld/active/LLD-4.md"));
    assert_eq!(
        approved_json(&env, "docs/lineage/done/4-lld")["auto_mode"],
        false
    );
    env.assert_no_finished_call_repeated();
}

#[test]
fn an_issue_on_github_becomes_an_lld_by_every_reference_form() {
    let fake = FakeServer::start().expect("fake");
    let env = github_env(&fake);
    let n = fake
        .github()
        .add_issue(REPO, "octo", "Dark mode", "Too bright at night.");
    let pr = fake.github().add_pull(REPO, "octo", "A change");
    let url = format!("https://github.com/octo/app/issues/{n}");
    for (i, reference) in [format!("{n}"), format!("octo/app#{n}"), url.clone()]
        .iter()
        .enumerate()
    {
        env.script(&script(1, &[APPROVED]));
        let mut args = vec!["lld", reference.as_str(), "--auto", "--tracker", "github"];
        if i > 0 {
            args.extend(["--on-collision", "new"]);
        }
        let out = env
            .gavel(&args)
            .env("GH_TOKEN", TOKEN)
            .output()
            .expect("run");
        assert_exit(&out, 0);
    }
    let a = approved_json(&env, &format!("docs/lineage/done/{n}-lld"));
    assert!(
        a["issue_url"]
            .as_str()
            .is_some_and(|u| u.ends_with(&format!("/octo/app/issues/{n}"))),
        "{a}"
    );
    let a3 = approved_json(&env, &format!("docs/lineage/done/{n}-lld-3"));
    assert_eq!(a3["issue_reference"], url.as_str());
    let subjects = env.git(&["log", "--format=%s"]);
    assert_eq!(
        subjects.matches("gavel: approve LLD for #").count(),
        3,
        "{subjects}"
    );
    // A pull request is not an issue, and nothing is written for it.
    let out = env
        .gavel(&["lld", &pr.to_string(), "--auto", "--tracker", "github"])
        .env("GH_TOKEN", TOKEN)
        .output()
        .expect("run");
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("is a pull request, not an issue"),
        "{}",
        show_output(&out)
    );
    assert!(!env.exists(&format!("docs/lineage/active/{pr}-lld")));
    crate::github::assert_token_nowhere(&env.root, &[&out]);
}

#[test]
fn a_closed_issue_needs_allow_closed_and_a_missing_one_is_a_clear_error() {
    let env = Env::new();
    local_issue(&env, 2, "closed");
    env.script(&script(1, &[APPROVED]));
    let out = env.run(&["lld", "2", "--auto"]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("issue #2 (Dark mode) is closed"),
        "{}",
        show_output(&out)
    );
    assert!(stderr(&out).contains("--allow-closed"));
    assert!(!env.state_db().exists(), "nothing written");
    assert_exit(&env.run(&["lld", "2", "--auto", "--allow-closed"]), 0);
    let out = env.run(&["lld", "9", "--auto"]);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("there is no issue 9"),
        "{}",
        show_output(&out)
    );
    let out = env.run(&["lld", "octo/app#2", "--auto"]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("names a repository"),
        "{}",
        show_output(&out)
    );
}

#[test]
fn an_approved_lld_is_a_collision_resumed_renewed_or_left() {
    let env = Env::new();
    local_issue(&env, 1, "open");
    env.script(&script(1, &[APPROVED]));
    assert_exit(&env.run(&["lld", "1", "--auto"]), 0);
    let first = env.read("docs/lld/active/LLD-1.md");
    let out = env.run(&["lld", "1", "--auto"]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out)
            .contains("issue #1 already has an LLD: docs/lld/active/LLD-1.md is already approved"),
        "{}",
        show_output(&out)
    );
    assert_exit(
        &env.run(&["lld", "1", "--auto", "--on-collision", "abort"]),
        0,
    );
    let out = env.run(&["lld", "1", "--auto", "--on-collision", "resume"]);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("no unfinished LLD run"),
        "{}",
        show_output(&out)
    );
    env.script(&script(1, &[APPROVED]).replace("Add dark mode v1", "Add dark mode, again"));
    assert_exit(
        &env.run(&["lld", "1", "--auto", "--on-collision", "new"]),
        0,
    );
    assert_ne!(
        env.read("docs/lld/active/LLD-1.md"),
        first,
        "the new design replaced it"
    );
    assert!(env.exists("docs/lineage/done/1-lld-2"));
    // An unfinished run for the issue is resumed.
    env.script(&script(1, &[APPROVED]));
    local_issue(&env, 5, "open");
    assert_exit(&env.run(&["lld", "5"]), 3);
    let out = env.run(&["lld", "5", "--on-collision", "resume"]);
    assert_exit(&out, 3);
    assert!(
        stderr(&out).contains("resuming run"),
        "{}",
        show_output(&out)
    );
}

#[test]
fn validated_context_reaches_the_drafter_and_its_manifest_the_lineage() {
    let env = Env::new();
    local_issue(&env, 1, "open");
    env.write("src/theme.css", ":root { --bg: #fff; }\n");
    env.write("src/header.js", "export function toggle() {}\n");
    env.write("src/target/big.bin", "ignored build output\n");
    env.write("src/.gitignore", "target/\n");
    env.script(&script(1, &[APPROVED]));
    let out = env.run(&["lld", "1", "--auto", "--context", "src"]);
    assert_exit(&out, 0);
    assert!(
        stderr(&out).contains("3 context files"),
        "{}",
        show_output(&out)
    );
    let prompt = env.prompt(Role::DRAFTER, 0);
    assert!(
        prompt.contains("--bg: #fff") && prompt.contains("export function toggle"),
        "{prompt}"
    );
    assert!(!prompt.contains("ignored build output"));
    let manifest: Value =
        serde_json::from_str(&env.read("docs/lineage/done/1-lld/002-context.json")).expect("json");
    let paths: Vec<&str> = manifest["files"]
        .as_array()
        .expect("files")
        .iter()
        .filter_map(|f| f["path"].as_str())
        .collect();
    assert_eq!(paths, ["src/.gitignore", "src/header.js", "src/theme.css"]);
    assert!(
        manifest["files"][0]["sha256"]
            .as_str()
            .is_some_and(|h| h.len() == 64)
    );
    assert!(
        !env.read("docs/lineage/done/1-lld/002-context.json")
            .contains("toggle()"),
        "a manifest, not a copy"
    );
    assert_eq!(
        approved_json(&env, "docs/lineage/done/1-lld")["context_manifest"],
        "docs/lineage/done/1-lld/002-context.json"
    );
}

#[test]
fn refused_context_stops_before_anything_is_written() {
    let env = Env::new();
    local_issue(&env, 1, "open");
    env.script(&script(1, &[APPROVED]));
    let aws = format!("aws_access_key_id = AKIA{}\n", "QYLPMN5HXYZ2ABCD");
    env.write("config/.env", "DB=1\n");
    env.write("config/settings.toml", &format!("region = \"eu\"\n{aws}"));
    std::fs::write(env.root.join("pass"), "outside\n").expect("outside");
    env.write(".env", "API_TOKEN=1\n");
    for (args, expected) in [
        // The seed's TS-03 and TS-05.
        (vec!["--context", ".env"], "secret-name"),
        (vec!["--context", "missing.md"], "not-found"),
        (vec!["--context", "config/.env"], "secret-name"),
        (vec!["--context", "../pass"], "outside-repository"),
        (vec!["--context", ".git/config"], "git-folder"),
        (
            vec!["--context", "config"],
            "secret-content:aws-access-key-id",
        ),
    ] {
        let mut all = vec!["lld", "1", "--auto"];
        all.extend(args.iter().copied());
        let out = env.run(&all);
        assert_exit(&out, 2);
        let text = stderr(&out);
        assert!(
            text.contains(expected),
            "{args:?}: expected {expected} in {text}"
        );
        assert!(
            !text.contains("QYLPMN5HXYZ2ABCD"),
            "the secret is never shown"
        );
        assert!(!env.state_db().exists(), "{args:?}: nothing written");
        assert!(env.calls().is_empty(), "{args:?}: no model call");
    }
    // Both refusals of a folder at once: the name and the content.
    let out = env.run(&["lld", "1", "--auto", "--context", "config"]);
    let text = stderr(&out);
    assert!(
        text.contains("config/.env") && text.contains("config/settings.toml` line 2"),
        "{text}"
    );
}

/// In a terminal, a closed issue is asked about: no leaves everything as it was, yes designs
/// for it; an approved LLD is asked about as a collision.
#[test]
fn a_person_confirms_a_closed_issue_and_answers_the_collision_in_a_terminal() {
    let env = Env::new();
    env.local_issue(2, "closed");
    env.script(&script(1, &[APPROVED]));
    let editor = crate::pty::fake_editor(&env);
    let editor = editor.to_string_lossy();
    let mut p = crate::pty::spawn(&env, &["lld", "2"], &editor);
    p.exp_string("Issue #2 (Dark mode) is closed. Design for it anyway? [y/N] ")
        .expect("asked");
    p.send_line("n").expect("no");
    p.exp_string("nothing was done").expect("says so");
    p.exp_eof().expect("eof");
    assert_eq!(crate::pty::exit_code(&p), 0);
    assert!(!env.state_db().exists(), "nothing written");
    let mut p = crate::pty::spawn(&env, &["lld", "2"], &editor);
    p.exp_string("Design for it anyway? [y/N] ").expect("asked");
    p.send_line("y").expect("yes");
    p.exp_string("Your choice [S/R/P]: ").expect("draft gate");
    p.send_line("S").expect("send");
    p.exp_string("Your choice [A/R/E/P]: ")
        .expect("verdict gate");
    p.send_line("A").expect("approve");
    p.exp_string("LLD for issue #2 approved").expect("approved");
    p.exp_eof().expect("eof");
    assert_eq!(crate::pty::exit_code(&p), 0);
    let mut p = crate::pty::spawn(&env, &["lld", "2", "--allow-closed"], &editor);
    p.exp_string("Issue #2 already has an LLD: docs/lld/active/LLD-2.md is already approved.")
        .expect("collision");
    p.exp_string("[R]esume existing / [N]ew name / [A]bort? ")
        .expect("choices");
    p.send_line("A").expect("abort");
    p.exp_eof().expect("eof");
    assert_eq!(crate::pty::exit_code(&p), 0);
}

#[test]
fn an_lld_from_github_pauses_at_each_gate_and_resumes() {
    let fake = FakeServer::start().expect("fake");
    let env = github_env(&fake);
    let n = fake
        .github()
        .add_issue(REPO, "octo", "Dark mode", "Too bright.");
    env.script(&script(1, &[APPROVED]));
    let run = |args: &[&str]| {
        env.gavel(args)
            .env("GH_TOKEN", TOKEN)
            .output()
            .expect("run")
    };
    let reference = format!("octo/app#{n}");
    assert_exit(&run(&["lld", &reference, "--tracker", "github"]), 3);
    // The run keeps reading from GitHub without the flag.
    assert_exit(&run(&["resume", "1", "--choice", "send"]), 3);
    assert_exit(&run(&["resume", "1", "--choice", "approve"]), 0);
    let a = approved_json(&env, &format!("docs/lineage/done/{n}-lld"));
    assert_eq!(a["issue_reference"], reference.as_str());
    assert_eq!(a["issue_title"], "Dark mode");
    assert_eq!(env.status(), "");
}
