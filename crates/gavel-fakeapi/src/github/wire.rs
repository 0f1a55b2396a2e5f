//! GitHub's JSON: users, repositories, labels, issues and error bodies, in the field names and
//! shapes of the REST API (version 2022-11-28), with URLs on the host the client called.
//!
//! Real clients (octocrab, `gh`, gavel's own) deserialize these into typed structs, so a field
//! they require must be there with the right type even when the fake has nothing to say (a
//! `null` milestone, an empty assignee list).

use serde_json::{Value, json};

use super::pages::encode;
use super::{Issue, Label, Permission, Repo};

/// Where GitHub's REST documentation lives; error bodies point there.
pub(crate) const DOCS: &str = "https://docs.github.com/rest";

/// The URLs of this request's GitHub: the API root (`http://HOST` or `http://HOST/api/v3`) and
/// the web root (`http://HOST`).
#[derive(Debug, Clone)]
pub(crate) struct Base {
    pub api: String,
    pub html: String,
}

/// `YYYY-MM-DDTHH:MM:SSZ` for unix seconds.
pub(crate) fn time(secs: i64) -> String {
    jiff::Timestamp::from_second(secs)
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH)
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// Unix seconds for an ISO 8601 time (`2024-05-01T12:00:00Z`, with an offset, or a date).
pub(crate) fn parse_time(s: &str) -> Option<i64> {
    if let Ok(ts) = s.parse::<jiff::Timestamp>() {
        return Some(ts.as_second());
    }
    let date: jiff::civil::Date = s.parse().ok()?;
    let zoned = date.to_zoned(jiff::tz::TimeZone::UTC).ok()?;
    Some(zoned.timestamp().as_second())
}

/// GitHub's global node id for an object (`kind` is GitHub's prefix: `U`, `R`, `I`, `PR`,
/// `LA`).
fn node_id(kind: &str, id: u64) -> String {
    format!("{kind}_kgDOFAKE{id:04}")
}

/// GitHub's error body.
pub(crate) fn error(status: u16, message: &str, docs: &str, errors: Option<Value>) -> Value {
    let mut body = json!({"message": message});
    if let Some(errors) = errors {
        body["errors"] = errors;
    }
    body["documentation_url"] = json!(docs);
    body["status"] = json!(status.to_string());
    body
}

/// A "Validation Failed" body with one error.
pub(crate) fn validation(resource: &str, field: &str, code: &str, docs: &str) -> Value {
    let errors = json!([{"resource": resource, "code": code, "field": field}]);
    error(422, "Validation Failed", docs, Some(errors))
}

/// The short user object GitHub nests in repositories and issues.
pub(crate) fn user(base: &Base, login: &str, id: u64) -> Value {
    let api = format!("{}/users/{login}", base.api);
    json!({
        "login": login,
        "id": id,
        "node_id": node_id("U", id),
        "avatar_url": format!("{}/avatars/{login}", base.html),
        "gravatar_id": "",
        "url": api,
        "html_url": format!("{}/{login}", base.html),
        "followers_url": format!("{api}/followers"),
        "following_url": format!("{api}/following{{/other_user}}"),
        "gists_url": format!("{api}/gists{{/gist_id}}"),
        "starred_url": format!("{api}/starred{{/owner}}{{/repo}}"),
        "subscriptions_url": format!("{api}/subscriptions"),
        "organizations_url": format!("{api}/orgs"),
        "repos_url": format!("{api}/repos"),
        "events_url": format!("{api}/events{{/privacy}}"),
        "received_events_url": format!("{api}/received_events"),
        "type": "User",
        "user_view_type": "public",
        "site_admin": false,
    })
}

/// The authenticated user (`GET /user`): the short object and the profile fields.
pub(crate) fn me(base: &Base, login: &str, id: u64, created_at: i64) -> Value {
    let mut v = user(base, login, id);
    let profile = json!({
        "name": null, "company": null, "blog": "", "location": null, "email": null,
        "hireable": null, "bio": null, "twitter_username": null, "public_repos": 0,
        "public_gists": 0, "followers": 0, "following": 0,
        "created_at": time(created_at), "updated_at": time(created_at),
    });
    if let (Some(obj), Value::Object(extra)) = (v.as_object_mut(), profile) {
        obj.extend(extra);
    }
    v
}

/// A repository, with the caller's `permissions`.
pub(crate) fn repo(base: &Base, r: &Repo, owner_id: u64, perm: Permission) -> Value {
    let full = &r.config.full_name;
    let api = format!("{}/repos/{full}", base.api);
    let open = r.issues.iter().filter(|i| i.open).count();
    json!({
        "id": r.id,
        "node_id": node_id("R", r.id),
        "name": r.name(),
        "full_name": full,
        "private": r.config.private,
        "owner": user(base, r.owner(), owner_id),
        "html_url": format!("{}/{full}", base.html),
        "description": null,
        "fork": false,
        "url": api,
        "issues_url": format!("{api}/issues{{/number}}"),
        "labels_url": format!("{api}/labels{{/name}}"),
        "pulls_url": format!("{api}/pulls{{/number}}"),
        "clone_url": format!("{}/{full}.git", base.html),
        "created_at": time(r.created_at),
        "updated_at": time(r.created_at),
        "pushed_at": time(r.created_at),
        "homepage": null,
        "size": 0,
        "language": null,
        "has_issues": r.config.has_issues,
        "has_projects": true,
        "has_wiki": true,
        "has_pages": false,
        "has_discussions": false,
        "forks_count": 0,
        "archived": r.config.archived,
        "disabled": false,
        "open_issues_count": open,
        "visibility": if r.config.private { "private" } else { "public" },
        "forks": 0,
        "open_issues": open,
        "watchers": 0,
        "default_branch": "main",
        "permissions": {
            "admin": perm >= Permission::Admin,
            "maintain": perm >= Permission::Maintain,
            "push": perm >= Permission::Write,
            "triage": perm >= Permission::Triage,
            "pull": perm >= Permission::Read,
        },
    })
}

/// A label of repository `full_name`.
pub(crate) fn label(base: &Base, full_name: &str, l: &Label) -> Value {
    json!({
        "id": l.id,
        "node_id": node_id("LA", l.id),
        "url": format!("{}/repos/{full_name}/labels/{}", base.api, encode(&l.name)),
        "name": l.name,
        "color": l.color,
        "default": false,
        "description": l.description,
    })
}

/// An issue (or pull request) of `r`. `ids` gives a login's user id.
pub(crate) fn issue(
    base: &Base,
    r: &Repo,
    i: &Issue,
    association: &str,
    ids: &dyn Fn(&str) -> u64,
) -> Value {
    let full = &r.config.full_name;
    let repo_api = format!("{}/repos/{full}", base.api);
    let api = format!("{repo_api}/issues/{}", i.number);
    let kind = if i.is_pull { "pull" } else { "issues" };
    let labels: Vec<Value> = i
        .labels
        .iter()
        .filter_map(|name| r.label(name))
        .map(|l| label(base, full, l))
        .collect();
    let assignees: Vec<Value> = i.assignees.iter().map(|a| user(base, a, ids(a))).collect();
    let mut v = json!({
        "id": i.id,
        "node_id": node_id(if i.is_pull { "PR" } else { "I" }, i.id),
        "url": api,
        "repository_url": repo_api,
        "labels_url": format!("{api}/labels{{/name}}"),
        "comments_url": format!("{api}/comments"),
        "events_url": format!("{api}/events"),
        "html_url": format!("{}/{full}/{kind}/{}", base.html, i.number),
        "number": i.number,
        "state": if i.open { "open" } else { "closed" },
        "state_reason": if i.open { Value::Null } else { json!("completed") },
        "title": i.title,
        "body": i.body,
        "user": user(base, &i.user, ids(&i.user)),
        "labels": labels,
        "assignee": assignees.first().cloned().unwrap_or(Value::Null),
        "assignees": assignees,
        "milestone": null,
        "locked": false,
        "active_lock_reason": null,
        "comments": 0,
        "created_at": time(i.created_at),
        "updated_at": time(i.updated_at),
        "closed_at": i.closed_at.map(time),
        "author_association": association,
    });
    if i.is_pull {
        let pr = format!("{repo_api}/pulls/{}", i.number);
        let html = format!("{}/{full}/pull/{}", base.html, i.number);
        v["pull_request"] = json!({
            "url": pr,
            "html_url": html,
            "diff_url": format!("{html}.diff"),
            "patch_url": format!("{html}.patch"),
            "merged_at": null,
        });
    }
    v
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn times_are_githubs_utc_format_and_parse_back() {
        assert_eq!(time(0), "1970-01-01T00:00:00Z");
        assert_eq!(time(1_714_564_800), "2024-05-01T12:00:00Z");
        assert_eq!(parse_time("2024-05-01T12:00:00Z"), Some(1_714_564_800));
        assert_eq!(parse_time("2024-05-01T14:00:00+02:00"), Some(1_714_564_800));
        assert_eq!(parse_time("2024-05-01"), Some(1_714_521_600));
        assert_eq!(parse_time("yesterday"), None);
    }
}
