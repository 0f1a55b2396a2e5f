//! `gavel issue --tracker github` when GitHub refuses: every refusal at filing pauses at the
//! filing gate with its reason and what to do, files nothing, and a retry files once; every
//! pre-flight refusal stops before any model call and writes nothing. The token is in no
//! artifact or output.

use std::process::Output;

use gavel_fakeapi::{FakeRepo, FakeServer, Fault, FaultKind, Permission};
use serde_json::json;

use crate::github::{REPO, TOKEN, assert_token_nowhere, file_auto, gavel_gh, github_env};
use crate::util::*;

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
