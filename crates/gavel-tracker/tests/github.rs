//! The GitHub tracker against the fake GitHub: reading issues back by every reference form,
//! labels across pages, filing that finds its own earlier issue, and the token never in an
//! error.

use gavel_fakeapi::{FakeRepo, FakeServer, Fault, FaultKind};
use gavel_tracker::github::{GitHubConfig, GitHubTracker, RetryPolicy, Token};
use gavel_tracker::{NewIssue, Tracker, TrackerError};

const TOKEN: &str = "ghp_libTestToken";

fn tracker(fake: &FakeServer, repo: &str) -> GitHubTracker {
    GitHubTracker::new(
        GitHubConfig {
            api_url: fake.url(),
            repo: repo.into(),
            web_host: "github.com".into(),
            policy: RetryPolicy {
                base_delay: std::time::Duration::from_millis(5),
                ..RetryPolicy::default()
            },
        },
        Ok(Token::new(TOKEN, "GH_TOKEN")),
    )
}

fn fake() -> FakeServer {
    let fake = FakeServer::start().expect("fake");
    fake.github().add_token(TOKEN, "octo", None);
    fake.github().add_repo(FakeRepo::new("octo/app"));
    fake.github().add_repo(FakeRepo::new("octo/other"));
    fake
}

fn new_issue(key: &str) -> NewIssue {
    NewIssue {
        title: "Add dark mode".into(),
        body: "# Add dark mode\n\nText.".into(),
        labels: vec!["ui".into()],
        idempotency_key: key.into(),
        slug: "dark-mode".into(),
        run_started_at: "2026-01-30T14:33:20Z".into(),
    }
}

#[test]
fn an_issue_is_read_back_by_every_reference_form() {
    let fake = fake();
    let n = fake
        .github()
        .add_issue("octo/app", "octo", "Dark mode", "We want it.");
    let t = tracker(&fake, "octo/app");
    for reference in [
        n.to_string(),
        format!("#{n}"),
        format!("octo/app#{n}"),
        format!("https://github.com/octo/app/issues/{n}"),
    ] {
        let got = t.get_issue(&reference).expect(&reference);
        assert_eq!(got.number, n);
        assert_eq!(got.title, "Dark mode");
        assert_eq!(got.body, "We want it.");
        assert_eq!(got.state, "open");
        assert!(
            got.url.ends_with(&format!("/octo/app/issues/{n}")),
            "{}",
            got.url
        );
    }
    let other = fake
        .github()
        .add_issue("octo/other", "octo", "Elsewhere", "");
    assert_eq!(
        t.get_issue(&format!("octo/other#{other}"))
            .expect("other repo")
            .title,
        "Elsewhere"
    );
    fake.github().close("octo/app", n);
    assert!(t.get_issue(&n.to_string()).expect("closed").is_closed());
}

#[test]
fn pull_requests_missing_issues_and_foreign_hosts_are_clear_errors() {
    let fake = fake();
    let pr = fake.github().add_pull("octo/app", "octo", "A change");
    let t = tracker(&fake, "octo/app");
    let e = t.get_issue(&pr.to_string()).expect_err("pr");
    assert!(e.to_string().contains("is a pull request"), "{e}");
    let e = t
        .get_issue("https://github.com/octo/app/pull/1")
        .expect_err("pr url");
    assert!(e.to_string().contains("pull request"), "{e}");
    let e = t.get_issue("999").expect_err("missing");
    assert!(matches!(e, TrackerError::NotFound { .. }), "{e}");
    assert!(e.to_string().contains("no issue #999 in octo/app"), "{e}");
    let e = t
        .get_issue("https://gitlab.com/octo/app/issues/1")
        .expect_err("host");
    assert!(e.to_string().contains("is on gitlab.com"), "{e}");
    assert!(!e.to_string().contains(TOKEN));
}

#[test]
fn labels_are_listed_across_pages_and_only_the_missing_are_created() {
    let fake = fake();
    for i in 0..230 {
        fake.github().add_label("octo/app", &format!("area-{i:03}"));
    }
    let t = tracker(&fake, "octo/app");
    let created = t
        .ensure_labels(&["area-229".into(), "Area-001".into(), "new-one".into()])
        .expect("labels");
    assert_eq!(created, vec!["new-one"]);
    let colour = fake
        .github()
        .labels("octo/app")
        .into_iter()
        .find(|l| l.name == "new-one")
        .expect("created")
        .color;
    assert_eq!(colour, gavel_tracker::github::DEFAULT_LABEL_COLOR);
    let pages = fake
        .requests()
        .iter()
        .filter(|r| r.method == "GET" && r.path.ends_with("/labels"))
        .count();
    assert_eq!(pages, 3, "230 labels are three pages of 100");
}

#[test]
fn filing_again_with_the_same_key_returns_the_first_issue() {
    let fake = fake();
    let t = tracker(&fake, "octo/app");
    let first = t
        .create_issue(&new_issue("gavel-k1"), "now")
        .expect("first");
    let again = t
        .create_issue(&new_issue("gavel-k1"), "now")
        .expect("again");
    assert_eq!((first.number, &first.url), (again.number, &again.url));
    assert!(again.found_existing && !first.found_existing);
    let other = t
        .create_issue(&new_issue("gavel-k2"), "now")
        .expect("other");
    assert_ne!(other.number, first.number);
    assert_eq!(fake.github().issues("octo/app").len(), 2);
    // Someone else's issue quoting the marker is not this run's issue: only the token's own
    // issues are looked at.
    fake.github().add_token("ghp_other", "mallory", None);
    fake.github().add_issue(
        "octo/app",
        "mallory",
        "Quote",
        "<!-- gavel-key: gavel-k3 -->",
    );
    let third = t
        .create_issue(&new_issue("gavel-k3"), "now")
        .expect("third");
    assert_eq!(fake.github().issues("octo/app").len(), 4);
    assert_eq!(
        t.get_issue(&third.number.to_string()).expect("read").body,
        "# Add dark mode\n\nText.",
        "the marker is not part of the issue as read back"
    );
}

#[test]
fn many_issues_of_the_user_are_searched_on_every_page() {
    let fake = fake();
    let t = tracker(&fake, "octo/app");
    let first = t
        .create_issue(&new_issue("gavel-early"), "now")
        .expect("first");
    for i in 0..150 {
        fake.github()
            .add_issue("octo/app", "octo", &format!("Filler {i}"), "");
    }
    fake.github()
        .fault(Fault::new(FaultKind::Lost).on("POST", "/issues"));
    let lost = t
        .create_issue(&new_issue("gavel-late"), "now")
        .expect("lost reply");
    let again = t
        .create_issue(&new_issue("gavel-early"), "now")
        .expect("again");
    assert_eq!(again.number, first.number);
    assert_eq!(fake.github().issues("octo/app").len(), 152);
    assert!(lost.number > first.number);
}

#[test]
fn a_missing_token_is_reported_by_every_call_with_what_to_do() {
    let fake = fake();
    let t = GitHubTracker::new(
        GitHubConfig {
            api_url: fake.url(),
            repo: "octo/app".into(),
            web_host: "github.com".into(),
            policy: RetryPolicy::default(),
        },
        Err(gavel_tracker::github::NoToken {
            tried: vec!["GH_TOKEN (not set)".into()],
        }),
    );
    for e in [
        t.check().expect_err("check"),
        t.get_issue("1").expect_err("get"),
        t.create_issue(&new_issue("k"), "now").expect_err("create"),
    ] {
        assert!(e.to_string().contains("gh auth login"), "{e}");
    }
    assert!(fake.requests().is_empty());
}

#[test]
fn a_reply_slower_than_the_timeout_is_found_instead_of_filed_again() {
    let fake = fake();
    let mut t = tracker(&fake, "octo/app");
    t = GitHubTracker::new(
        GitHubConfig {
            policy: RetryPolicy {
                timeout: std::time::Duration::from_secs(1),
                base_delay: std::time::Duration::from_millis(5),
                ..RetryPolicy::default()
            },
            ..t.config().clone()
        },
        Ok(Token::new(TOKEN, "GH_TOKEN")),
    );
    fake.github()
        .fault(Fault::new(FaultKind::Slow { millis: 2500 }).on("POST", "/issues"));
    let filed = t
        .create_issue(&new_issue("gavel-slow"), "now")
        .expect("filed");
    assert_eq!(fake.github().issues("octo/app").len(), 1);
    let posts = fake
        .requests()
        .iter()
        .filter(|r| r.method == "POST" && r.path.ends_with("/issues"))
        .count();
    assert_eq!(posts, 1, "timed out, looked, found: not created again");
    assert_eq!(filed.number, fake.github().issues("octo/app")[0].number);
}

#[test]
fn an_installation_token_without_a_user_still_files_once() {
    // GitHub Actions' GITHUB_TOKEN: `GET /user` is refused with 403.
    let fake = fake();
    fake.github().fault(
        Fault::new(FaultKind::Status {
            status: 403,
            message: "Resource not accessible by integration".into(),
            errors: None,
        })
        .on("GET", "/user")
        .times(100),
    );
    let t = tracker(&fake, "octo/app");
    t.check().expect("the repository checks decide");
    let first = t
        .create_issue(&new_issue("gavel-app"), "now")
        .expect("first");
    let again = t
        .create_issue(&new_issue("gavel-app"), "now")
        .expect("again");
    assert_eq!((first.number, &first.url), (again.number, &again.url));
    assert_eq!(fake.github().issues("octo/app").len(), 1);
}
