//! The issue endpoints: list (with GitHub's filters, sort orders and pagination), create (with
//! its validation and its rules about who may set labels and assignees) and get one. As on
//! GitHub, pull requests are issues too: they share the numbers and the list, marked by a
//! `pull_request` object.

use std::cmp::Reverse;

use serde_json::{Value, json};

use super::pages::Page;
use super::routes::{Answer, paginated};
use super::wire::{self, Base};
use super::{Issue, Permission, Repo, State, now};

const DOCS_LIST: &str = "https://docs.github.com/rest/issues/issues#list-repository-issues";
const DOCS_CREATE: &str = "https://docs.github.com/rest/issues/issues#create-an-issue";
const DOCS_GET: &str = "https://docs.github.com/rest/issues/issues#get-an-issue";

/// The longest issue body GitHub accepts, in characters.
const MAX_BODY: usize = 65536;

fn disabled(docs: &str) -> Answer {
    Answer::error(410, "Issues are disabled for this repo", docs)
}

/// A query value GitHub would refuse.
fn invalid(field: &str, value: &str) -> Answer {
    let errors = json!([{"resource": "Issue", "field": field, "code": "invalid", "value": value}]);
    Answer::ok(
        422,
        wire::error(422, "Validation Failed", DOCS_LIST, Some(errors)),
    )
}

/// How the author of an issue relates to the repository.
fn association(repo: &Repo, login: &str, perm: Permission) -> &'static str {
    if login.eq_ignore_ascii_case(repo.owner()) {
        "OWNER"
    } else if perm >= Permission::Write {
        "COLLABORATOR"
    } else {
        "NONE"
    }
}

fn render(gh: &State, i: usize, perm: Permission, base: &Base, issue: &Issue) -> Value {
    let repo = &gh.repos[i];
    let ids = |login: &str| gh.users.get(login).copied().unwrap_or(0);
    wire::issue(
        base,
        repo,
        issue,
        association(repo, &issue.user, perm),
        &ids,
    )
}

/// `GET /repos/{o}/{r}/issues`
pub(crate) fn list(
    gh: &State,
    i: usize,
    perm: Permission,
    base: &Base,
    pairs: &[(String, String)],
) -> Answer {
    let repo = &gh.repos[i];
    if !repo.config.has_issues {
        return disabled(DOCS_LIST);
    }
    let get = |name: &str| {
        pairs
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let state = get("state").unwrap_or("open");
    if !matches!(state, "open" | "closed" | "all") {
        return invalid("state", state);
    }
    let sort = get("sort").unwrap_or("created");
    if !matches!(sort, "created" | "updated" | "comments") {
        return invalid("sort", sort);
    }
    let direction = get("direction").unwrap_or("desc");
    if !matches!(direction, "asc" | "desc") {
        return invalid("direction", direction);
    }
    let since = match get("since") {
        None => None,
        Some(s) => match wire::parse_time(s) {
            Some(t) => Some(t),
            None => return invalid("since", s),
        },
    };
    let creator = get("creator");
    let labels: Vec<&str> = get("labels")
        .map(|l| {
            l.split(',')
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let mut found: Vec<&Issue> = repo
        .issues
        .iter()
        .filter(|is| match state {
            "open" => is.open,
            "closed" => !is.open,
            _ => true,
        })
        .filter(|is| creator.is_none_or(|c| is.user.eq_ignore_ascii_case(c)))
        .filter(|is| since.is_none_or(|t| is.updated_at >= t))
        .filter(|is| {
            labels
                .iter()
                .all(|want| is.labels.iter().any(|have| have.eq_ignore_ascii_case(want)))
        })
        .collect();
    // Comments are never made here, so sorting by them is by number.
    let key = |is: &Issue| match sort {
        "updated" => (is.updated_at, is.number),
        "comments" => (0, is.number),
        _ => (is.created_at, is.number),
    };
    if direction == "asc" {
        found.sort_by_key(|is| key(is));
    } else {
        found.sort_by_key(|is| Reverse(key(is)));
    }
    let all: Vec<Value> = found
        .into_iter()
        .map(|is| render(gh, i, perm, base, is))
        .collect();
    let path = format!("/repos/{}/issues", repo.config.full_name);
    paginated(all, Page::from_query(pairs), base, &path, pairs)
}

/// `GET /repos/{o}/{r}/issues/{number}`
pub(crate) fn get(gh: &State, i: usize, perm: Permission, base: &Base, number: &str) -> Answer {
    let repo = &gh.repos[i];
    if !repo.config.has_issues {
        return disabled(DOCS_GET);
    }
    let found = number
        .parse::<u64>()
        .ok()
        .and_then(|n| repo.issues.iter().find(|is| is.number == n));
    match found {
        Some(issue) => Answer::ok(200, render(gh, i, perm, base, issue)),
        None => Answer::error(404, "Not Found", DOCS_GET),
    }
}

/// The names in a `labels` or `assignees` field: strings, or (labels) objects with a `name`.
fn names(field: &str, value: &Value) -> Result<Vec<String>, Answer> {
    match value {
        Value::Null => Ok(Vec::new()),
        Value::Array(items) => Ok(items
            .iter()
            .filter_map(|v| v.as_str().or_else(|| v["name"].as_str()))
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect()),
        other => {
            let message =
                format!("Invalid request.\n\nFor 'properties/{field}', {other} is not an array.");
            Err(Answer::error(422, &message, DOCS_CREATE))
        }
    }
}

/// `POST /repos/{o}/{r}/issues`. Labels and assignees are set only by users with push access
/// (GitHub drops them silently otherwise); a label that does not exist yet is made.
pub(crate) fn create(
    gh: &mut State,
    i: usize,
    perm: Permission,
    base: &Base,
    login: &str,
    body: &Value,
) -> Answer {
    let repo = &gh.repos[i];
    if repo.config.archived {
        return Answer::error(403, "Repository was archived so is read-only.", DOCS_CREATE);
    }
    if !repo.config.has_issues {
        return disabled(DOCS_CREATE);
    }
    let title = match &body["title"] {
        Value::String(s) => s.trim().to_owned(),
        Value::Number(n) => n.to_string(),
        _ => String::new(),
    };
    if title.is_empty() {
        let v = wire::validation("Issue", "title", "missing_field", DOCS_CREATE);
        return Answer::ok(422, v);
    }
    let text = body["body"].as_str().map(str::to_owned);
    if text.as_ref().is_some_and(|t| t.chars().count() > MAX_BODY) {
        let errors = json!([{
            "resource": "Issue",
            "code": "custom",
            "field": "body",
            "message": format!("body is too long (maximum is {MAX_BODY} characters)"),
        }]);
        let v = wire::error(422, "Validation Failed", DOCS_CREATE, Some(errors));
        return Answer::ok(422, v);
    }
    let (labels, assignees) = match (
        names("labels", &body["labels"]),
        names("assignees", &body["assignees"]),
    ) {
        (Ok(l), Ok(a)) => (l, a),
        (Err(answer), _) | (_, Err(answer)) => return answer,
    };
    let full = repo.config.full_name.clone();
    let (labels, assignees) = if perm >= Permission::Write {
        let labels = labels
            .iter()
            .filter_map(|name| gh.add_label(&full, name, "ededed", None))
            .fold(Vec::new(), |mut acc: Vec<String>, name| {
                if !acc.iter().any(|n| n.eq_ignore_ascii_case(&name)) {
                    acc.push(name);
                }
                acc
            });
        for a in &assignees {
            gh.user_id(a);
        }
        (labels, assignees)
    } else {
        (Vec::new(), Vec::new())
    };
    let t = now();
    let issue = Issue {
        id: 0,
        number: 0,
        title,
        body: text,
        labels,
        assignees,
        open: true,
        user: login.to_owned(),
        created_at: t,
        updated_at: t,
        closed_at: None,
        is_pull: false,
    };
    let Some(number) = gh.file(&full, issue) else {
        return Answer::not_found();
    };
    let Some(issue) = gh.repos[i].issues.iter().find(|is| is.number == number) else {
        return Answer::not_found();
    };
    let v = render(gh, i, perm, base, issue);
    let location = v["url"].as_str().unwrap_or_default().to_owned();
    Answer::ok(201, v).header("location", location)
}
