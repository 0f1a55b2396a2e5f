//! The fake GitHub's issues checked with a real HTTP client: creation and its validation,
//! listing with GitHub's filters and orders, pull requests among issues, disabled issues,
//! archived repositories, the Enterprise prefix and the rate-limit headers.

use reqwest::StatusCode;
use reqwest::blocking::Response;
use serde_json::{Value, json};

use super::tests::{get, header, json, links, numbers, post, setup};
use super::wire;
use crate::{FakeRepo, Permission};

#[test]
fn issues_are_created_and_listed_with_githubs_filters_and_orders() {
    let (server, client) = setup();
    let gh = server.github();
    gh.add_label("octo/app", "bug");
    let old = gh.add_issue("octo/app", "hubot", "Old report", "from long ago");
    gh.backdate("octo/app", old, 7200);
    let pr = gh.add_pull("octo/app", "hubot", "A fix");
    let new = json!({"title": "Crash on start", "body": "It crashes.", "labels": ["BUG", "needs-triage"], "assignees": ["octo"]});
    let resp = post(&server, &client, "t", "/repos/octo/app/issues", &new);
    assert_eq!(resp.status(), StatusCode::CREATED);
    let issue = json(resp);
    assert_eq!(
        issue["number"], 3,
        "one counter for issues and pull requests"
    );
    assert_eq!(issue["title"], "Crash on start");
    assert_eq!(issue["body"], "It crashes.");
    assert_eq!(issue["state"], "open");
    assert_eq!(issue["state_reason"], Value::Null);
    assert_eq!(issue["user"]["login"], "octo");
    assert_eq!(issue["author_association"], "OWNER");
    assert_eq!(issue["locked"], false);
    assert_eq!(issue["comments"], 0);
    assert_eq!(issue["closed_at"], Value::Null);
    assert_eq!(issue["assignees"][0]["login"], "octo");
    assert_eq!(issue["pull_request"], Value::Null);
    assert_eq!(
        issue["html_url"],
        format!("{}/octo/app/issues/3", server.url())
    );
    assert_eq!(
        issue["url"],
        format!("{}/repos/octo/app/issues/3", server.url())
    );
    assert_eq!(
        issue["repository_url"],
        format!("{}/repos/octo/app", server.url())
    );
    let created = issue["created_at"].as_str().expect("created_at");
    assert!(wire::parse_time(created).is_some() && created.ends_with('Z') && created.len() == 20);
    let labels: Vec<&str> = issue["labels"]
        .as_array()
        .expect("labels")
        .iter()
        .filter_map(|l| l["name"].as_str())
        .collect();
    assert_eq!(labels, ["bug", "needs-triage"], "an unknown label is made");
    let stored = gh.issues("octo/app");
    assert_eq!(stored[2].labels, ["bug", "needs-triage"]);
    assert_eq!(stored[2].user, "octo");
    assert!(stored[1].is_pull);
    gh.close("octo/app", old);

    let list = |query: &str| {
        json(get(
            &server,
            &client,
            "t",
            &format!("/repos/octo/app/issues{query}"),
        ))
    };
    let open = list("");
    assert_eq!(numbers(&open), [3, 2], "open ones, newest first");
    assert_eq!(
        open[1]["pull_request"]["html_url"],
        format!("{}/octo/app/pull/2", server.url())
    );
    assert_eq!(numbers(&list("?state=all")), [3, 2, 1]);
    assert_eq!(numbers(&list("?state=closed")), [1]);
    assert_eq!(numbers(&list("?state=all&creator=hubot")), [2, 1]);
    assert_eq!(
        numbers(&list("?state=all&sort=created&direction=asc")),
        [1, 2, 3]
    );
    assert_eq!(numbers(&list("?labels=bug,needs-triage")), [3]);
    // Closing the old one updated it; backdating it again moves it out of `since`.
    gh.backdate("octo/app", old, 7200);
    let since = wire::time(super::now() - 3600);
    assert_eq!(numbers(&list(&format!("?state=all&since={since}"))), [3, 2]);

    let one = json(get(&server, &client, "t", "/repos/octo/app/issues/3"));
    assert_eq!(one["title"], "Crash on start");
    let pull = json(get(
        &server,
        &client,
        "t",
        &format!("/repos/octo/app/issues/{pr}"),
    ));
    assert_eq!(
        pull["pull_request"]["url"],
        format!("{}/repos/octo/app/pulls/2", server.url())
    );
    let resp = get(&server, &client, "t", "/repos/octo/app/issues/99");
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
}

#[test]
fn issue_creation_validates_and_drops_labels_from_users_without_push() {
    let (server, client) = setup();
    let gh = server.github();
    let path = "/repos/octo/app/issues";
    let resp = post(
        &server,
        &client,
        "t",
        path,
        &json!({"title": "  ", "body": "b"}),
    );
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        json(resp)["errors"],
        json!([{"resource": "Issue", "code": "missing_field", "field": "title"}])
    );
    let long = "x".repeat(65537);
    let resp = post(
        &server,
        &client,
        "t",
        path,
        &json!({"title": "t", "body": long}),
    );
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        json(resp)["errors"],
        json!([{"resource": "Issue", "code": "custom", "field": "body",
                "message": "body is too long (maximum is 65536 characters)"}])
    );
    let resp = client
        .post(format!("{}{path}", server.url()))
        .bearer_auth("t")
        .body("{not json")
        .send()
        .expect("POST");
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    assert!(gh.issues("octo/app").is_empty());

    gh.add_repo(FakeRepo {
        permission: Permission::Triage,
        ..FakeRepo::new("other/lib")
    });
    gh.add_label("other/lib", "bug");
    let body = json!({"title": "t", "labels": ["bug", "new"], "assignees": ["octo"]});
    let resp = post(&server, &client, "t", "/repos/other/lib/issues", &body);
    assert_eq!(resp.status(), StatusCode::CREATED);
    let issue = json(resp);
    assert_eq!(issue["labels"], json!([]));
    assert_eq!(issue["assignees"], json!([]));
    assert_eq!(issue["author_association"], "NONE");
    assert_eq!(gh.labels("other/lib").len(), 1);
}

#[test]
fn disabled_issues_are_gone_and_archived_repositories_read_only() {
    let (server, client) = setup();
    let gh = server.github();
    gh.add_repo(FakeRepo {
        has_issues: false,
        ..FakeRepo::new("octo/no-issues")
    });
    gh.add_repo(FakeRepo {
        archived: true,
        ..FakeRepo::new("octo/old")
    });
    let gone = [
        get(&server, &client, "t", "/repos/octo/no-issues/issues"),
        get(&server, &client, "t", "/repos/octo/no-issues/issues/1"),
        post(
            &server,
            &client,
            "t",
            "/repos/octo/no-issues/issues",
            &json!({"title": "t"}),
        ),
    ];
    for resp in gone {
        assert_eq!(resp.status(), StatusCode::GONE);
        let body = json(resp);
        assert_eq!(body["message"], "Issues are disabled for this repo");
        assert_eq!(body["status"], "410");
    }
    let resp = post(
        &server,
        &client,
        "t",
        "/repos/octo/old/issues",
        &json!({"title": "t"}),
    );
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        json(resp)["message"],
        "Repository was archived so is read-only."
    );
    assert!(gh.issues("octo/old").is_empty());
    assert_eq!(
        json(get(&server, &client, "t", "/repos/octo/old"))["archived"],
        true
    );
}

#[test]
fn the_enterprise_prefix_serves_the_same_api_and_keeps_it_in_links() {
    let (server, client) = setup();
    let gh = server.github();
    for n in 0..3 {
        gh.add_issue("octo/app", "octo", &format!("issue {n}"), "");
    }
    let resp = get(
        &server,
        &client,
        "t",
        "/api/v3/repos/octo/app/issues?per_page=2&state=all",
    );
    assert_eq!(resp.status(), StatusCode::OK);
    let next = format!(
        "{}/api/v3/repos/octo/app/issues?per_page=2&state=all&page=2",
        server.url()
    );
    assert_eq!(links(&resp)[0], ("next".to_owned(), next));
    let list = json(resp);
    assert_eq!(numbers(&list), [3, 2]);
    assert_eq!(
        list[0]["url"],
        format!("{}/api/v3/repos/octo/app/issues/3", server.url())
    );
    assert_eq!(
        json(get(&server, &client, "t", "/api/v3/user"))["login"],
        "octo"
    );
}

#[test]
fn every_answer_counts_down_the_tokens_rate_limit() {
    let (server, client) = setup();
    let first = get(&server, &client, "t", "/user");
    let second = get(&server, &client, "t", "/repos/octo/app");
    let other = get(&server, &client, "fg", "/user");
    let remaining =
        |r: &Response| header(r, "x-ratelimit-remaining").and_then(|v| v.parse::<u64>().ok());
    assert_eq!(remaining(&first), Some(4999));
    assert_eq!(remaining(&second), Some(4998));
    assert_eq!(remaining(&other), Some(4999), "counted per token");
    assert_eq!(header(&second, "x-ratelimit-used").as_deref(), Some("2"));
    assert_eq!(
        header(&second, "x-ratelimit-limit").as_deref(),
        Some("5000")
    );
    assert_eq!(
        header(&second, "x-ratelimit-resource").as_deref(),
        Some("core")
    );
    assert!(header(&second, "x-github-request-id").is_some());
    let reset: i64 = header(&second, "x-ratelimit-reset")
        .and_then(|v| v.parse().ok())
        .expect("reset");
    assert!(reset > super::now());

    let limits = json(get(&server, &client, "t", "/rate_limit"));
    assert_eq!(limits["resources"]["core"]["remaining"], 4998);
    assert_eq!(limits["resources"]["core"]["limit"], 5000);
    assert_eq!(limits["rate"], limits["resources"]["core"]);
}
