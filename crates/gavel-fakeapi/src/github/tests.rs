//! The fake GitHub checked with a real HTTP client (reqwest): tokens, repositories, labels and
//! pagination as GitHub's REST API documents them, and the helpers the other GitHub tests use.

use reqwest::StatusCode;
use reqwest::blocking::{Client, Response};
use serde_json::{Value, json};

use crate::{FakeRepo, FakeServer, Permission};

/// A server with a classic token `t` (scopes `repo, read:org`) and a fine-grained token `fg`,
/// both octo's, and the public repository `octo/app` where users are admins.
pub(super) fn setup() -> (FakeServer, Client) {
    let server = FakeServer::start().expect("start");
    let gh = server.github();
    gh.add_token("t", "octo", Some("repo, read:org"));
    gh.add_token("fg", "octo", None);
    gh.add_repo(FakeRepo::new("octo/app"));
    let client = Client::builder().no_proxy().build().expect("client");
    (server, client)
}

pub(super) fn get(server: &FakeServer, client: &Client, token: &str, path: &str) -> Response {
    client
        .get(format!("{}{path}", server.url()))
        .bearer_auth(token)
        .send()
        .expect("GET")
}

pub(super) fn post(
    server: &FakeServer,
    client: &Client,
    token: &str,
    path: &str,
    body: &Value,
) -> Response {
    client
        .post(format!("{}{path}", server.url()))
        .bearer_auth(token)
        .json(body)
        .send()
        .expect("POST")
}

pub(super) fn header(resp: &Response, name: &str) -> Option<String> {
    resp.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

pub(super) fn json(resp: Response) -> Value {
    resp.json().expect("a JSON body")
}

pub(super) fn numbers(list: &Value) -> Vec<u64> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|i| i["number"].as_u64().expect("a number"))
        .collect()
}

#[test]
fn user_names_the_scopes_of_classic_tokens_only() {
    let (server, client) = setup();
    let resp = client
        .get(format!("{}/user", server.url()))
        .header("Authorization", "token t")
        .send()
        .expect("GET");
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(
        header(&resp, "content-type").as_deref(),
        Some("application/json; charset=utf-8")
    );
    assert_eq!(
        header(&resp, "x-oauth-scopes").as_deref(),
        Some("repo, read:org")
    );
    assert_eq!(
        header(&resp, "x-github-api-version-selected").as_deref(),
        Some("2022-11-28")
    );
    let me = json(resp);
    assert_eq!(me["login"], "octo");
    assert_eq!(me["type"], "User");
    assert!(me["id"].as_u64().is_some_and(|id| id > 0));
    assert!(me["node_id"].is_string());
    assert!(
        me["html_url"]
            .as_str()
            .is_some_and(|u| u.ends_with("/octo"))
    );

    let resp = get(&server, &client, "fg", "/user");
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(header(&resp, "x-oauth-scopes"), None);
    let resp = get(&server, &client, "t", "/repos/octo/app");
    assert_eq!(
        header(&resp, "x-oauth-scopes").as_deref(),
        Some("repo, read:org"),
        "GitHub names the scopes in every answer"
    );
}

#[test]
fn a_missing_or_unknown_token_gets_bad_credentials() {
    let (server, client) = setup();
    let expected = json!({
        "message": "Bad credentials",
        "documentation_url": "https://docs.github.com/rest",
        "status": "401",
    });
    let resp = get(&server, &client, "nope", "/repos/octo/app");
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(json(resp), expected);
    let resp = client
        .get(format!("{}/user", server.url()))
        .send()
        .expect("GET");
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(header(&resp, "x-ratelimit-limit").as_deref(), Some("60"));
    assert_eq!(json(resp), expected);
}

#[test]
fn repository_permissions_follow_the_role_and_hidden_repositories_are_not_found() {
    let (server, client) = setup();
    let gh = server.github();
    gh.add_repo(FakeRepo {
        permission: Permission::Triage,
        ..FakeRepo::new("octo/triaged")
    });
    gh.add_repo(FakeRepo {
        private: true,
        permission: Permission::None,
        ..FakeRepo::new("other/secret")
    });
    let repo = json(get(&server, &client, "t", "/repos/octo/triaged"));
    assert_eq!(repo["full_name"], "octo/triaged");
    assert_eq!(repo["name"], "triaged");
    assert_eq!(repo["owner"]["login"], "octo");
    assert_eq!(repo["private"], false);
    assert_eq!(repo["has_issues"], true);
    assert_eq!(repo["archived"], false);
    assert_eq!(repo["default_branch"], "main");
    assert!(
        repo["html_url"]
            .as_str()
            .is_some_and(|u| u.ends_with("/octo/triaged"))
    );
    assert_eq!(
        repo["permissions"],
        json!({"admin": false, "maintain": false, "push": false, "triage": true, "pull": true})
    );
    let admin = json(get(&server, &client, "t", "/repos/octo/app"));
    assert_eq!(
        admin["permissions"],
        json!({"admin": true, "maintain": true, "push": true, "triage": true, "pull": true})
    );
    for path in ["/repos/other/secret", "/repos/octo/nothing-here"] {
        let resp = get(&server, &client, "t", path);
        assert_eq!(resp.status(), StatusCode::NOT_FOUND, "{path}");
        let body = json(resp);
        assert_eq!(body["message"], "Not Found");
        assert_eq!(body["status"], "404");
    }
}

#[test]
fn a_classic_token_without_repo_scope_cannot_write_or_see_private_repositories() {
    let (server, client) = setup();
    let gh = server.github();
    gh.add_token("ro", "octo", Some("read:org"));
    gh.add_repo(FakeRepo {
        private: true,
        ..FakeRepo::new("octo/private")
    });
    let issue = json!({"title": "t"});
    let resp = post(&server, &client, "ro", "/repos/octo/app/issues", &issue);
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        json(resp)["message"],
        "Resource not accessible by personal access token"
    );
    let resp = post(&server, &client, "ro", "/repos/octo/private/issues", &issue);
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    assert!(gh.issues("octo/private").is_empty());
    assert!(gh.issues("octo/app").is_empty());
    // The fine-grained token has no scopes to lack.
    let resp = post(&server, &client, "fg", "/repos/octo/private/issues", &issue);
    assert_eq!(resp.status(), StatusCode::CREATED);
}

/// The `link` header's relations and their URLs.
pub(super) fn links(resp: &Response) -> Vec<(String, String)> {
    let Some(link) = header(resp, "link") else {
        return Vec::new();
    };
    link.split(", ")
        .map(|part| {
            let (url, rel) = part.split_once("; ").expect("URL; rel");
            let url = url.trim_start_matches('<').trim_end_matches('>');
            let rel = rel.trim_start_matches("rel=\"").trim_end_matches('"');
            (rel.to_owned(), url.to_owned())
        })
        .collect()
}

#[test]
fn labels_are_paginated_with_githubs_link_header() {
    let (server, client) = setup();
    let gh = server.github();
    for name in ["a", "b", "c", "d", "e"] {
        gh.add_label("octo/app", name);
    }
    let base = format!("{}/repos/octo/app/labels", server.url());
    let resp = get(&server, &client, "t", "/repos/octo/app/labels?per_page=2");
    let rels = links(&resp);
    assert_eq!(
        rels,
        [
            ("next".to_owned(), format!("{base}?per_page=2&page=2")),
            ("last".to_owned(), format!("{base}?per_page=2&page=3")),
        ]
    );
    let first = json(resp);
    assert_eq!(first.as_array().map(Vec::len), Some(2));
    let label = &first[0];
    assert_eq!(label["name"], "a");
    assert_eq!(label["color"], "ededed");
    assert_eq!(label["default"], false);
    assert!(label["id"].is_u64() && label["node_id"].is_string());
    assert_eq!(label["url"], format!("{base}/a"));

    // The middle page names all four neighbours; the client follows "next" to the end.
    let middle = client.get(&rels[0].1).bearer_auth("t").send().expect("GET");
    let rels = links(&middle);
    let names: Vec<&str> = rels.iter().map(|(rel, _)| rel.as_str()).collect();
    assert_eq!(names, ["prev", "next", "last", "first"]);
    assert_eq!(rels[0].1, format!("{base}?per_page=2&page=1"));
    assert_eq!(rels[3].1, format!("{base}?per_page=2&page=1"));
    let last = client.get(&rels[1].1).bearer_auth("t").send().expect("GET");
    let names: Vec<String> = links(&last).into_iter().map(|(rel, _)| rel).collect();
    assert_eq!(names, ["prev", "first"]);
    let body = json(last);
    assert_eq!(body.as_array().map(Vec::len), Some(1));
    assert_eq!(body[0]["name"], "e");

    let all = get(&server, &client, "t", "/repos/octo/app/labels");
    assert!(links(&all).is_empty(), "one page: no link header");
}

#[test]
fn creating_labels_refuses_duplicates_bad_colors_and_readers() {
    let (server, client) = setup();
    let gh = server.github();
    gh.add_label("octo/app", "Bug");
    let path = "/repos/octo/app/labels";
    let new = json!({"name": "triage", "color": "FBCA04", "description": "To sort"});
    let resp = post(&server, &client, "t", path, &new);
    assert_eq!(resp.status(), StatusCode::CREATED);
    let label = json(resp);
    assert_eq!(label["name"], "triage");
    assert_eq!(label["color"], "FBCA04");
    assert_eq!(label["description"], "To sort");

    let resp = post(
        &server,
        &client,
        "t",
        path,
        &json!({"name": "bug", "color": "ff0000"}),
    );
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let body = json(resp);
    assert_eq!(body["message"], "Validation Failed");
    assert_eq!(
        body["errors"],
        json!([{"resource": "Label", "code": "already_exists", "field": "name"}])
    );
    assert_eq!(body["status"], "422");
    let resp = post(
        &server,
        &client,
        "t",
        path,
        &json!({"name": "x", "color": "red"}),
    );
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        json(resp)["errors"],
        json!([{"resource": "Label", "code": "invalid", "field": "color"}])
    );

    gh.add_repo(FakeRepo {
        permission: Permission::Triage,
        ..FakeRepo::new("octo/triaged")
    });
    let resp = post(&server, &client, "t", "/repos/octo/triaged/labels", &new);
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        json(resp)["message"],
        "Must have admin rights to Repository."
    );
    let names: Vec<String> = gh.labels("octo/app").into_iter().map(|l| l.name).collect();
    assert_eq!(names, ["Bug", "triage"]);
    assert!(gh.labels("octo/triaged").is_empty());
}
