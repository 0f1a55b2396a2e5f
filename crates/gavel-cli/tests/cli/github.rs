//! `gavel issue --tracker github` end to end against the fake GitHub (gavel-fakeapi): labels
//! created, the issue filed once with its marker, `filed.json` and one commit; a kill -9
//! during a slow reply and a lost reply still leave exactly one issue; every failure GitHub
//! can answer with is retried or reported with what to do; the token is in no artifact.

use std::fs;
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use gavel_fakeapi::{FakeRepo, FakeServer, Fault, FaultKind, Permission};
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

fn gavel_gh(env: &Env, args: &[&str]) -> Output {
    env.gavel(args)
        .env("GH_TOKEN", TOKEN)
        .output()
        .expect("run gavel")
}

fn file_auto(env: &Env) -> Output {
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
        show_output(&out).contains("issue #1 filed"),
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

/// Files with a fault on every issue creation; returns the paused run's output.
fn filing_refused(kind: FaultKind, configure: impl Fn(&FakeServer)) -> (FakeServer, Env, Output) {
    let fake = FakeServer::start().expect("fake");
    let env = github_env(&fake);
    configure(&fake);
    fake.github()
        .fault(Fault::new(kind).on("POST", "/issues").times(100));
    let out = file_auto(&env);
    (fake, env, out)
}

#[test]
fn every_refusal_at_filing_pauses_with_its_reason_and_files_nothing() {
    let cases: Vec<(FaultKind, &str)> = vec![
        (
            FaultKind::Status {
                status: 422,
                message: "Validation Failed".into(),
                errors: Some(
                    json!([{"resource": "Issue", "code": "missing_field", "field": "title"}]),
                ),
            },
            "Issue title is missing",
        ),
        (
            FaultKind::Status {
                status: 401,
                message: "Bad credentials".into(),
                errors: None,
            },
            "gh auth login",
        ),
        (
            FaultKind::Status {
                status: 403,
                message: "Resource not accessible by personal access token".into(),
                errors: None,
            },
            "needs write access",
        ),
        (
            FaultKind::Status {
                status: 404,
                message: "Not Found".into(),
                errors: None,
            },
            "was not found",
        ),
        (
            FaultKind::Status {
                status: 410,
                message: "Issues are disabled for this repo".into(),
                errors: None,
            },
            "issues are disabled in octo/app",
        ),
        (
            FaultKind::Status {
                status: 503,
                message: "Service Unavailable".into(),
                errors: None,
            },
            "Retry tries again",
        ),
        (
            FaultKind::RateLimit {
                reset_in_secs: 3600,
            },
            "rate limit resets at",
        ),
    ];
    for (kind, expected) in cases {
        let (fake, env, out) = filing_refused(kind.clone(), |_| {});
        assert_exit(&out, 3);
        let text = show_output(&out);
        assert!(text.contains("Filing the issue failed"), "{kind:?}: {text}");
        assert!(
            text.contains(expected),
            "{kind:?}: expected {expected:?} in {text}"
        );
        assert!(text.contains("--choice retry"), "{kind:?}: {text}");
        assert!(
            fake.github().issues(REPO).is_empty(),
            "{kind:?}: nothing filed"
        );
        assert!(
            env.ls("docs/lineage/active")
                .iter()
                .any(|n| n == "dark-mode")
        );
        assert_token_nowhere(&env.root, &[&out]);
    }
}

#[test]
fn retry_after_a_refusal_files_exactly_once() {
    let fake = FakeServer::start().expect("fake");
    let env = github_env(&fake);
    fake.github().fault(
        Fault::new(FaultKind::Status {
            status: 422,
            message: "Validation Failed".into(),
            errors: Some(json!([{"resource": "Issue", "code": "custom", "field": "body", "message": "body is too long (maximum is 65536 characters)"}])),
        })
        .on("POST", "/issues"),
    );
    let out = file_auto(&env);
    assert_exit(&out, 3);
    assert!(
        show_output(&out).contains("body is too long"),
        "{}",
        show_output(&out)
    );
    let retried = gavel_gh(&env, &["resume", "1", "--choice", "retry"]);
    assert_exit(&retried, 0);
    assert_eq!(fake.github().issues(REPO).len(), 1);
    let again = gavel_gh(&env, &["resume", "1"]);
    assert_exit(&again, 1);
    assert_eq!(fake.github().issues(REPO).len(), 1);
}

#[test]
fn a_label_someone_else_just_created_is_not_an_error() {
    let fake = FakeServer::start().expect("fake");
    let env = github_env(&fake);
    fake.github().fault(
        Fault::new(FaultKind::Status {
            status: 422,
            message: "Validation Failed".into(),
            errors: Some(json!([{"resource": "Label", "code": "already_exists", "field": "name"}])),
        })
        .on("POST", "/labels"),
    );
    let out = file_auto(&env);
    assert_exit(&out, 0);
    assert_eq!(fake.github().issues(REPO).len(), 1);
}

#[test]
fn a_token_that_cannot_create_labels_pauses_at_filing_with_the_permission_it_needs() {
    let fake = FakeServer::start().expect("fake");
    let env = github_env(&fake);
    let mut repo = FakeRepo::new("octo/triaged");
    repo.permission = Permission::Triage;
    fake.github().add_repo(repo);
    env.set_config_line(
        "dir = \"docs/issues\"",
        "dir = \"docs/issues\"\nrepo = \"octo/triaged\"",
    );
    let out = file_auto(&env);
    assert_exit(&out, 3);
    let text = show_output(&out);
    assert!(text.contains("creating the label `enhancement`"), "{text}");
    assert!(text.contains("needs write access"), "{text}");
    assert!(fake.github().issues("octo/triaged").is_empty());
}

/// A pre-flight case: its name, how the fake and the repository are set up, the token given
/// and what the message must say.
type PreflightCase = (
    &'static str,
    Box<dyn Fn(&FakeServer, &Env)>,
    Option<&'static str>,
    &'static str,
);

#[test]
fn preflight_refuses_before_any_model_call_and_writes_nothing() {
    let cases: Vec<PreflightCase> = vec![
        (
            "no token",
            Box::new(|_, _| {}),
            None,
            "no GitHub token found",
        ),
        (
            "bad token",
            Box::new(|_, _| {}),
            Some("ghp_wrong"),
            "gh auth login",
        ),
        (
            "no repo scope",
            Box::new(|f, _| {
                f.github()
                    .add_token("ghp_scopeless", "octo", Some("read:org"))
            }),
            Some("ghp_scopeless"),
            "without the `repo` scope",
        ),
        (
            "missing repository",
            Box::new(|_, e| {
                e.git(&[
                    "remote",
                    "set-url",
                    "origin",
                    "https://github.com/octo/missing.git",
                ]);
            }),
            Some(TOKEN),
            "octo/missing was not found",
        ),
        (
            "issues disabled",
            Box::new(|f, e| {
                let mut repo = FakeRepo::new("octo/quiet");
                repo.has_issues = false;
                f.github().add_repo(repo);
                e.git(&[
                    "remote",
                    "set-url",
                    "origin",
                    "https://github.com/octo/quiet",
                ]);
            }),
            Some(TOKEN),
            "issues are disabled in octo/quiet",
        ),
        (
            "read access only",
            Box::new(|f, e| {
                let mut repo = FakeRepo::new("octo/readonly");
                repo.permission = Permission::Read;
                f.github().add_repo(repo);
                e.git(&[
                    "remote",
                    "set-url",
                    "origin",
                    "https://github.com/octo/readonly.git",
                ]);
            }),
            Some(TOKEN),
            "read access only",
        ),
    ];
    for (name, setup, token, expected) in cases {
        let fake = FakeServer::start().expect("fake");
        let env = github_env(&fake);
        setup(&fake, &env);
        env.script(&script(1, &[APPROVED]));
        let brief = env.brief("dark-mode");
        let mut cmd = env.gavel(&["issue", &brief, "--auto", "--tracker", "github"]);
        if let Some(t) = token {
            cmd.env("GH_TOKEN", t);
        }
        let out = cmd.output().expect("run");
        assert_exit(&out, 1);
        let text = show_output(&out);
        assert!(
            text.contains(expected),
            "{name}: expected {expected:?} in {text}"
        );
        assert!(env.calls().is_empty(), "{name}: no model call");
        assert!(
            !env.exists("docs/lineage/active/dark-mode"),
            "{name}: nothing written"
        );
        assert!(fake.github().issues(REPO).is_empty());
        assert!(
            !text.contains(TOKEN) && !text.contains("ghp_wrong") && !text.contains("ghp_scopeless")
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
