//! The client's parsing: `Link` headers, rate-limit headers, GitHub's error entries, times.

use super::*;
use reqwest::header::HeaderValue;

fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
    let mut h = HeaderMap::new();
    for (k, v) in pairs {
        h.insert(*k, HeaderValue::from_str(v).expect("value"));
    }
    h
}

#[test]
fn the_next_link_is_found_among_the_others() {
    let h = headers(&[(
        "link",
        "<https://api.github.com/repos/o/r/labels?page=1>; rel=\"prev\", <https://api.github.com/repos/o/r/labels?page=3>; rel=\"next\", <https://api.github.com/repos/o/r/labels?page=5>; rel=\"last\"",
    )]);
    assert_eq!(
        next_link(&h).as_deref(),
        Some("https://api.github.com/repos/o/r/labels?page=3")
    );
    let last = headers(&[("link", "<https://x/?page=1>; rel=\"first\"")]);
    assert_eq!(next_link(&last), None);
    assert_eq!(next_link(&HeaderMap::new()), None);
    assert!(same_origin(
        "https://API.github.com/x?y",
        "https://api.github.com"
    ));
    assert!(!same_origin(
        "https://evil.example/x",
        "https://api.github.com"
    ));
    assert!(!same_origin(
        "http://api.github.com/x",
        "https://api.github.com"
    ));
}

#[test]
fn rate_limits_are_told_apart() {
    let primary = headers(&[
        ("x-ratelimit-remaining", "0"),
        ("x-ratelimit-reset", "1700000000"),
    ]);
    assert_eq!(
        rate_limited(403, &primary, "API rate limit exceeded"),
        Some(RateLimited::Primary {
            reset: 1_700_000_000
        })
    );
    let secondary = headers(&[("retry-after", "7")]);
    assert_eq!(
        rate_limited(403, &secondary, "x"),
        Some(RateLimited::Secondary {
            retry_after: Duration::from_secs(7)
        })
    );
    assert_eq!(
        rate_limited(
            403,
            &HeaderMap::new(),
            "You have exceeded a secondary rate limit."
        ),
        Some(RateLimited::Secondary {
            retry_after: Duration::from_secs(60)
        })
    );
    assert_eq!(
        rate_limited(403, &HeaderMap::new(), "Resource not accessible"),
        None
    );
    assert_eq!(rate_limited(500, &primary, "x"), None);
}

#[test]
fn github_error_entries_read_as_sentences() {
    let e = serde_json::json!({"resource": "Issue", "code": "missing_field", "field": "title"});
    assert_eq!(describe_error(&e), "Issue title is missing");
    let e = serde_json::json!({"resource": "Issue", "code": "custom", "field": "body", "message": "body is too long"});
    assert_eq!(describe_error(&e), "body is too long");
    assert_eq!(describe_error(&serde_json::json!("plain")), "plain");
}

#[test]
fn times_are_shown_in_utc_with_the_distance() {
    assert_eq!(when(0), "1970-01-01T00:00:00Z");
    assert!(
        when(now_secs() + 3600).contains("(in 60 min)")
            || when(now_secs() + 3600).contains("(in 59 min)")
    );
    assert_eq!(human(7300), "2 h 1 min");
}

#[test]
fn loopback_apis_are_recognised() {
    for url in [
        "http://127.0.0.1:4000",
        "http://localhost/api",
        "http://[::1]:80/x",
        "http://127.1.2.3",
    ] {
        assert!(is_loopback(url), "{url}");
    }
    for url in [
        "https://api.github.com",
        "https://10.0.0.1/api/v3",
        "http://localhost.evil.com",
    ] {
        assert!(!is_loopback(url), "{url}");
    }
}
