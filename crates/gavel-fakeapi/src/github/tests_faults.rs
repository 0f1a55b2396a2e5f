//! The fake GitHub's faults seen by a real HTTP client: error statuses, the two rate limits, a
//! reply lost after the work was done and a reply slow enough to give up on.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use reqwest::blocking::Client;
use serde_json::json;

use super::tests::{get, header, post, setup};
use crate::{Fault, FaultKind};

#[test]
fn a_status_fault_answers_githubs_error_body_and_does_nothing() {
    let (server, client) = setup();
    let gh = server.github();
    gh.fault(
        Fault::new(FaultKind::Status {
            status: 422,
            message: "Validation Failed".into(),
            errors: Some(json!([{"resource": "Issue", "code": "invalid", "field": "labels"}])),
        })
        .on("POST", "/issues"),
    );
    gh.fault(Fault::new(FaultKind::status(502, "Server Error")).times(2));
    let resp = get(&server, &client, "t", "/user");
    assert_eq!(resp.status(), StatusCode::BAD_GATEWAY);
    let body: serde_json::Value = resp.json().expect("JSON");
    assert_eq!(body["message"], "Server Error");
    assert_eq!(body["status"], "502");
    assert!(body["documentation_url"].is_string());
    let resp = post(
        &server,
        &client,
        "t",
        "/repos/octo/app/issues",
        &json!({"title": "t"}),
    );
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let body: serde_json::Value = resp.json().expect("JSON");
    assert_eq!(body["errors"][0]["field"], "labels");
    assert!(gh.issues("octo/app").is_empty(), "nothing was filed");
    assert_eq!(
        get(&server, &client, "t", "/user").status(),
        StatusCode::BAD_GATEWAY
    );
    assert_eq!(get(&server, &client, "t", "/user").status(), StatusCode::OK);
}

#[test]
fn the_primary_rate_limit_says_when_it_resets() {
    let (server, client) = setup();
    server
        .github()
        .fault(Fault::new(FaultKind::RateLimit { reset_in_secs: 120 }));
    let resp = get(&server, &client, "t", "/repos/octo/app");
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    assert_eq!(header(&resp, "x-ratelimit-remaining").as_deref(), Some("0"));
    assert_eq!(header(&resp, "x-ratelimit-used").as_deref(), Some("5000"));
    let reset: i64 = header(&resp, "x-ratelimit-reset")
        .and_then(|v| v.parse().ok())
        .expect("reset");
    let expected = super::now() + 120;
    assert!(
        (expected - 2..=expected).contains(&reset),
        "{reset} vs {expected}"
    );
    let body: serde_json::Value = resp.json().expect("JSON");
    let message = body["message"].as_str().expect("message");
    assert!(
        message.starts_with("API rate limit exceeded for user ID "),
        "{message}"
    );
    assert_eq!(body["status"], "403");
}

#[test]
fn a_secondary_rate_limit_says_when_to_retry() {
    let (server, client) = setup();
    server.github().fault(
        Fault::new(FaultKind::SecondaryRateLimit {
            retry_after_secs: 7,
        })
        .on("POST", ""),
    );
    let resp = post(
        &server,
        &client,
        "t",
        "/repos/octo/app/issues",
        &json!({"title": "t"}),
    );
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    assert_eq!(header(&resp, "retry-after").as_deref(), Some("7"));
    let body: serde_json::Value = resp.json().expect("JSON");
    let message = body["message"].as_str().expect("message");
    assert!(
        message.starts_with("You have exceeded a secondary rate limit"),
        "{message}"
    );
    assert!(server.github().issues("octo/app").is_empty());
}

#[test]
fn a_lost_reply_comes_after_the_issue_was_filed() {
    let (server, client) = setup();
    let gh = server.github();
    gh.fault(Fault::new(FaultKind::Lost).on("POST", "/repos/octo/app/issues"));
    let sent = client
        .post(format!("{}/repos/octo/app/issues", server.url()))
        .bearer_auth("t")
        .json(&json!({"title": "Filed once"}))
        .send();
    assert!(sent.is_err(), "no reply: {sent:?}");
    let issues = gh.issues("octo/app");
    assert_eq!(issues.len(), 1);
    assert_eq!(issues[0].title, "Filed once");
    // The next request is answered (on a new connection).
    let list: serde_json::Value = get(&server, &client, "t", "/repos/octo/app/issues")
        .json()
        .expect("JSON");
    assert_eq!(list[0]["title"], "Filed once");
}

#[test]
fn a_slow_reply_comes_after_the_issue_is_visible() {
    let (server, _) = setup();
    let gh = server.github();
    gh.fault(Fault::new(FaultKind::Slow { millis: 1500 }).on("POST", "/issues"));
    let url = format!("{}/repos/octo/app/issues", server.url());
    let start = Instant::now();
    let waiting = std::thread::spawn(move || {
        let client = Client::builder().no_proxy().build().expect("client");
        client
            .post(url)
            .bearer_auth("t")
            .json(&json!({"title": "Slow one"}))
            .send()
            .map(|r| (r.status(), Instant::now()))
    });
    let seen = loop {
        if gh.issues("octo/app").len() == 1 {
            break Instant::now();
        }
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "the issue never appeared"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    let (status, answered) = waiting.join().expect("thread").expect("an answer");
    assert_eq!(status, StatusCode::CREATED);
    assert!(answered.duration_since(seen) >= Duration::from_millis(1000));
    assert!(answered.duration_since(start) >= Duration::from_millis(1500));
}

#[test]
fn github_requests_are_recorded_without_their_token_outside_the_headers() {
    let (server, client) = setup();
    let _ = post(
        &server,
        &client,
        "t",
        "/repos/octo/app/issues",
        &json!({"title": "t"}),
    );
    let requests = server.requests();
    let r = requests.last().expect("recorded");
    assert_eq!(
        (r.method.as_str(), r.path.as_str()),
        ("POST", "/repos/octo/app/issues")
    );
    assert_eq!(r.api, None);
    assert_eq!(r.key, None);
    assert_eq!(r.body["title"], "t");
    assert!(
        r.headers
            .iter()
            .any(|(k, v)| k == "authorization" && v == "Bearer t")
    );
}
