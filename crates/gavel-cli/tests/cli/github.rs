//! `gavel issue --tracker github` end to end against the fake GitHub (gavel-fakeapi): labels
//! created, the issue filed once with its marker, `filed.json` and one commit; a kill -9
//! during a slow reply and a lost reply still leave exactly one issue; server errors and short
//! rate limits are retried; the run keeps its tracker. Refusals: `github_failures.rs`.

use std::fs;
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use gavel_fakeapi::{FakeRepo, FakeServer, Fault, FaultKind};
use serde_json::{Value, json};

use crate::util::*;

pub const TOKEN: &str = "ghp_gavelTestToken0123456789abcdef";
pub const REPO: &str = "octo/app";

/// A repository whose origin is github.com/octo/app, filing to the fake's API.
pub fn github_env(fake: &FakeServer) -> Env {
    let env = Env::new();
    env.git(&["remote", "add", "origin", "git@github.com:octo/app.git"]);
    env.set_config_line(
        "# api_url",
        &format!("api_url = \"{}\"\nretry_delay_ms = 10", fake.url()),
    );
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "github"]);
    fake.github()
        .add_token(TOKEN, "octo", Some("repo, read:org"));
    fake.github().add_repo(FakeRepo::new(REPO));
    fake.github().add_label(REPO, "enhancement");
    env
}

pub fn gavel_gh(env: &Env, args: &[&str]) -> Output {
    env.gavel(args)
        .env("GH_TOKEN", TOKEN)
        .output()
        .expect("run gavel")
}

pub fn file_auto(env: &Env) -> Output {
    env.script(&script(1, &[APPROVED]));
    let brief = env.brief("dark-mode");
    gavel_gh(env, &["issue", &brief, "--auto", "--tracker", "github"])
}

fn posts(fake: &FakeServer, suffix: &str) -> usize {
    fake.requests()
        .iter()
        .filter(|r| r.method == "POST" && r.path.ends_with(suffix))
        .count()
}

/// Asserts the token appears in no file under `dir` (the state database, logs and lineage
/// included) and in no output.
#[track_caller]
pub fn assert_token_nowhere(dir: &Path, outputs: &[&Output]) {
    for out in outputs {
        assert!(!show_output(out).contains(TOKEN), "token in output");
    }
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).expect("read_dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(bytes) = fs::read(&path) {
                let found = bytes.windows(TOKEN.len()).any(|w| w == TOKEN.as_bytes());
                assert!(!found, "the token is in {}", path.display());
            }
        }
    }
}

#[test]
fn an_approved_issue_is_filed_on_github_once_with_labels_marker_and_one_commit() {
    let fake = FakeServer::start().expect("fake");
    let env = github_env(&fake);
    let out = file_auto(&env);
    assert_exit(&out, 0);
    let issues = fake.github().issues(REPO);
    assert_eq!(issues.len(), 1, "{issues:?}");
    let issue = &issues[0];
    assert_eq!(issue.title, "Add dark mode v1");
    assert!(
        issue.body.contains("<!-- gavel-key: gavel-"),
        "{}",
        issue.body
    );
    assert_eq!(issue.labels, vec!["enhancement", "ui"]);
    let labels: Vec<String> = fake
        .github()
        .labels(REPO)
        .into_iter()
        .map(|l| l.name)
        .collect();
    assert!(labels.contains(&"ui".to_owned()), "{labels:?}");
    assert_eq!(
        posts(&fake, "/labels"),
        1,
        "only the missing label is created"
    );
    assert_eq!(posts(&fake, "/issues"), 1);

    let done = done_dir(&env, issue.number, "dark-mode");
    let filed_name = env
        .ls(&done)
        .into_iter()
        .find(|n| n.ends_with("filed.json"))
        .expect("filed.json");
    let filed: Value =
        serde_json::from_str(&env.read(&format!("{done}/{filed_name}"))).expect("json");
    assert_eq!(filed["issue_number"], json!(issue.number));
    assert!(
        filed["issue_url"]
            .as_str()
            .is_some_and(|u| u.ends_with(&format!("/octo/app/issues/{}", issue.number))),
        "{filed}"
    );
    assert!(
        filed["tracker"]
            .as_str()
            .is_some_and(|t| t.starts_with("github (octo/app"))
    );
    let log = env.git(&["log", "--format=%s"]);
    assert_eq!(
        log.lines()
            .filter(|l| l.starts_with("gavel: file issue #1"))
            .count(),
        1,
        "{log}"
    );
    assert_eq!(env.status(), "", "clean tree after filing");
    let show = gavel_gh(&env, &["show", "1"]);
    assert_exit(&show, 0);
    assert_token_nowhere(&env.root, &[&out, &show]);
}

/// Kills gavel once the fake has created the issue but before its (slow) reply arrives.
#[test]
fn a_kill_between_githubs_answer_and_the_checkpoint_still_leaves_one_issue() {
    let fake = FakeServer::start().expect("fake");
    let env = github_env(&fake);
    fake.github()
        .fault(Fault::new(FaultKind::Slow { millis: 20_000 }).on("POST", "/issues"));
    env.script(&script(1, &[APPROVED]));
    let brief = env.brief("dark-mode");
    let mut child = env
        .gavel(&["issue", &brief, "--auto", "--tracker", "github"])
        .env("GH_TOKEN", TOKEN)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let deadline = Instant::now() + Duration::from_secs(60);
    while fake.github().issues(REPO).is_empty() {
        assert!(Instant::now() < deadline, "the issue was never created");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().expect("kill -9");
    let _ = child.wait();
    let resumed = gavel_gh(&env, &["resume", "1"]);
    assert_exit(&resumed, 0);
    let issues = fake.github().issues(REPO);
    assert_eq!(issues.len(), 1, "exactly one issue: {issues:?}");
    assert_eq!(
        posts(&fake, "/issues"),
        1,
        "the resume found it and did not create again"
    );
    let done = done_dir(&env, issues[0].number, "dark-mode");
    assert!(env.ls(&done).iter().any(|n| n.ends_with("filed.json")));
    assert_eq!(env.status(), "");
}

#[test]
fn a_reply_lost_after_the_issue_was_created_is_found_by_its_marker() {
    let fake = FakeServer::start().expect("fake");
    let env = github_env(&fake);
    fake.github()
        .fault(Fault::new(FaultKind::Lost).on("POST", "/issues"));
    let out = file_auto(&env);
    assert_exit(&out, 0);
    assert_eq!(fake.github().issues(REPO).len(), 1);
    assert_eq!(posts(&fake, "/issues"), 1, "found, not created again");
    assert!(
        show_output(&out).contains("issue #1 was already filed by this run (found by its key"),
        "{}",
        show_output(&out)
    );
}

#[test]
fn server_errors_and_short_rate_limits_are_retried_and_file_once() {
    for kind in [
        FaultKind::Status {
            status: 502,
            message: "Server Error".into(),
            errors: None,
        },
        FaultKind::RateLimit { reset_in_secs: 1 },
        FaultKind::SecondaryRateLimit {
            retry_after_secs: 1,
        },
    ] {
        let fake = FakeServer::start().expect("fake");
        let env = github_env(&fake);
        fake.github()
            .fault(Fault::new(kind.clone()).on("POST", "/issues").times(2));
        let out = file_auto(&env);
        assert_exit(&out, 0);
        assert_eq!(fake.github().issues(REPO).len(), 1, "{kind:?}");
        assert_eq!(
            posts(&fake, "/issues"),
            3,
            "{kind:?}: two refusals, one success"
        );
    }
}

#[test]
fn the_run_keeps_filing_to_github_when_resumed_without_the_flag() {
    let fake = FakeServer::start().expect("fake");
    let env = github_env(&fake);
    env.script(&script(1, &[APPROVED]));
    let brief = env.brief("dark-mode");
    let paused = gavel_gh(&env, &["issue", &brief, "--tracker", "github"]);
    assert_exit(&paused, 3);
    // gavel.toml still says local; the run remembers github.
    let sent = gavel_gh(&env, &["resume", "1", "--choice", "send"]);
    assert_exit(&sent, 3);
    let approved = gavel_gh(&env, &["resume", "1", "--choice", "approve"]);
    assert_exit(&approved, 0);
    assert_eq!(fake.github().issues(REPO).len(), 1);
    assert!(!env.exists("docs/issues/0001-dark-mode.md"));
}

#[test]
fn a_lost_reply_that_stops_filing_is_found_by_the_resumed_run() {
    let fake = FakeServer::start().expect("fake");
    let env = github_env(&fake);
    // No retries: the lost reply stops the run at the filing gate.
    env.set_config_line(
        "api_url",
        &format!("api_url = \"{}\"\nretries = 0", fake.url()),
    );
    fake.github()
        .fault(Fault::new(FaultKind::Lost).on("POST", "/issues"));
    let out = file_auto(&env);
    assert_exit(&out, 3);
    assert!(
        show_output(&out).contains("no answer from GitHub"),
        "{}",
        show_output(&out)
    );
    assert_eq!(fake.github().issues(REPO).len(), 1, "GitHub did create it");
    let resumed = gavel_gh(&env, &["resume", "1", "--choice", "retry"]);
    assert_exit(&resumed, 0);
    assert_eq!(
        fake.github().issues(REPO).len(),
        1,
        "still exactly one issue"
    );
    assert_eq!(posts(&fake, "/issues"), 1);
    done_dir(&env, 1, "dark-mode");
}
