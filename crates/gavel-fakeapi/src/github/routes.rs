//! Answering one GitHub request: record it, count it against the token's rate limit, apply a
//! fault if one matches, check the token and the repository, run the endpoint, and send the
//! answer with GitHub's headers (rate limit, request id, API version).
//!
//! The endpoints are the ones gavel uses: `GET /user`, `GET /rate_limit`,
//! `GET /repos/{o}/{r}`, labels (list, create) and issues (list, create, get), under `/` as on
//! api.github.com or under `/api/v3` as on GitHub Enterprise Server.

use std::io;
use std::time::Duration;

use hyper::header::{HeaderName, HeaderValue};
use hyper::{Response, StatusCode};
use serde_json::{Value, json};

use super::faults::{self, FaultKind};
use super::issues;
use super::pages::{Page, query_pairs};
use super::wire::{self, Base, DOCS};
use super::{Permission, Repo, State, Token, now};
use crate::answer::Request;
use crate::body::Body;
use crate::server::{Recorded, Shared};

/// GitHub Enterprise Server's API prefix.
const ENTERPRISE: &str = "/api/v3";

/// The requests' rate limit per hour, with a token and without.
const LIMIT: u64 = 5000;
const ANONYMOUS_LIMIT: u64 = 60;

/// Whether `path` is GitHub's (and not a model vendor's).
pub(crate) fn serves(path: &str) -> bool {
    let path = path.strip_prefix(ENTERPRISE).unwrap_or(path);
    path.starts_with("/user") || path.starts_with("/repos/") || path == "/rate_limit"
}

/// An answer before it becomes a hyper response.
pub(crate) struct Answer {
    pub status: u16,
    pub body: Value,
    pub headers: Vec<(&'static str, String)>,
}

impl Answer {
    pub fn ok(status: u16, body: Value) -> Self {
        Self {
            status,
            body,
            headers: Vec::new(),
        }
    }

    /// GitHub's error body for `status`.
    pub fn error(status: u16, message: &str, docs: &str) -> Self {
        Self::ok(status, wire::error(status, message, docs, None))
    }

    pub fn not_found() -> Self {
        Self::error(404, "Not Found", DOCS)
    }

    #[must_use]
    pub fn header(mut self, name: &'static str, value: String) -> Self {
        self.headers.push((name, value));
        self
    }
}

/// The rate limit as reported in the headers and by `/rate_limit`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rate {
    pub limit: u64,
    pub used: u64,
    pub remaining: u64,
    pub reset: i64,
}

impl Rate {
    pub fn json(&self) -> Value {
        json!({
            "limit": self.limit,
            "used": self.used,
            "remaining": self.remaining,
            "reset": self.reset,
            "resource": "core",
        })
    }
}

/// What happens once the answer is ready.
enum After {
    Send,
    Lose,
    Delay(u64),
}

/// The token of an `Authorization: Bearer T` or `Authorization: token T` header.
fn bearer(req: &Request) -> Option<&str> {
    let auth = req.header("authorization")?.trim();
    let (scheme, token) = auth.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") || scheme.eq_ignore_ascii_case("token"))
        .then_some(token)
        .filter(|t| !t.is_empty())
}

/// Counts a request against its token's rate limit (`/rate_limit` itself is free, as on
/// GitHub); a new window starts every hour.
fn count(gh: &mut State, token: Option<&str>, known: bool, free: bool) -> Rate {
    let t = now();
    if gh.reset <= t {
        gh.reset = t + 3600;
        gh.used.clear();
    }
    let (key, limit) = match token {
        Some(token) if known => (token.to_owned(), LIMIT),
        _ => (String::new(), ANONYMOUS_LIMIT),
    };
    let used = gh.used.entry(key).or_insert(0);
    if !free {
        *used += 1;
    }
    Rate {
        limit,
        used: *used,
        remaining: limit.saturating_sub(*used),
        reset: gh.reset,
    }
}

/// The API and web roots for this request, from its `Host` header.
fn base(req: &Request) -> Base {
    let host = req.header("host").unwrap_or("127.0.0.1");
    let html = format!("http://{host}");
    let api = if req.path.starts_with(&format!("{ENTERPRISE}/")) {
        format!("{html}{ENTERPRISE}")
    } else {
        html.clone()
    };
    Base { api, html }
}

/// Answers one GitHub request; an error means "close the connection without a reply".
pub(crate) async fn respond(req: &Request, shared: &Shared) -> io::Result<Response<Body>> {
    let (resp, after) = {
        let mut st = shared.lock();
        st.requests.push(Recorded {
            api: None,
            method: req.method.clone(),
            path: req.path.clone(),
            query: req.query.clone(),
            headers: req.headers.clone(),
            body: serde_json::from_slice(&req.body).unwrap_or(Value::Null),
            model: String::new(),
            streamed: false,
            key: None,
        });
        let gh = &mut st.github;
        gh.requests += 1;
        let request_id = format!("FA4E:{:04X}:{:06X}", gh.requests >> 24, gh.requests);
        let fault = faults::take(&mut gh.faults, &req.method, &req.path);
        let path = req.path.strip_prefix(ENTERPRISE).unwrap_or(&req.path);
        let token = bearer(req);
        let user = token.and_then(|t| gh.tokens.get(t).cloned());
        let mut rate = count(gh, token, user.is_some(), path == "/rate_limit");
        let base = base(req);
        let run = |gh: &mut State, rate: &Rate| match &user {
            None => Answer::error(401, "Bad credentials", DOCS),
            Some(user) => route(gh, req, path, &base, user, rate),
        };
        let (mut answer, after) = match fault {
            None => (run(gh, &rate), After::Send),
            Some(FaultKind::Lost) => (run(gh, &rate), After::Lose),
            Some(FaultKind::Slow { millis }) => (run(gh, &rate), After::Delay(millis)),
            Some(FaultKind::Status {
                status,
                message,
                errors,
            }) => {
                let body = wire::error(status, &message, DOCS, errors);
                (Answer::ok(status, body), After::Send)
            }
            Some(FaultKind::RateLimit { reset_in_secs }) => {
                rate.remaining = 0;
                rate.used = rate.limit;
                rate.reset = now() + i64::try_from(reset_in_secs).unwrap_or(i64::MAX / 2);
                let id = user.as_ref().map_or(0, |u| gh.user_id(&u.login));
                let message = format!(
                    "API rate limit exceeded for user ID {id}. If you reach out to GitHub \
                     Support for help, please include the request ID {request_id}."
                );
                let docs =
                    "https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting";
                (Answer::error(403, &message, docs), After::Send)
            }
            Some(FaultKind::SecondaryRateLimit { retry_after_secs }) => {
                let message = format!(
                    "You have exceeded a secondary rate limit. Please wait a few minutes before \
                     you try again. If you reach out to GitHub Support for help, please include \
                     the request ID {request_id}."
                );
                let docs = "https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits";
                let answer = Answer::error(403, &message, docs)
                    .header("retry-after", retry_after_secs.to_string());
                (answer, After::Send)
            }
        };
        // GitHub names a classic token's scopes in every answer to it.
        if let Some(scopes) = user.and_then(|u| u.scopes) {
            answer = answer.header("x-oauth-scopes", scopes);
        }
        (response(answer, &rate, &request_id), after)
    };
    match after {
        After::Send => Ok(resp),
        After::Lose => Err(io::Error::new(
            io::ErrorKind::ConnectionAborted,
            "fake github: the reply is lost",
        )),
        After::Delay(millis) => {
            let mut stop = shared.stop.clone();
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(millis)) => {}
                _ = stop.wait_for(|stopped| *stopped) => {}
            }
            Ok(resp)
        }
    }
}

/// The hyper response: the JSON body and GitHub's headers.
fn response(answer: Answer, rate: &Rate, request_id: &str) -> Response<Body> {
    let mut resp = Response::new(Body::full(answer.body.to_string()));
    *resp.status_mut() =
        StatusCode::from_u16(answer.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut headers: Vec<(&str, String)> = vec![
        ("content-type", "application/json; charset=utf-8".to_owned()),
        ("x-github-api-version-selected", "2022-11-28".to_owned()),
        ("x-github-media-type", "github.v3; format=json".to_owned()),
        ("x-ratelimit-limit", rate.limit.to_string()),
        ("x-ratelimit-remaining", rate.remaining.to_string()),
        ("x-ratelimit-reset", rate.reset.to_string()),
        ("x-ratelimit-used", rate.used.to_string()),
        ("x-ratelimit-resource", "core".to_owned()),
        ("x-github-request-id", request_id.to_owned()),
    ];
    headers.extend(answer.headers);
    let map = resp.headers_mut();
    for (name, value) in headers {
        if let Ok(value) = HeaderValue::from_str(&value) {
            map.append(HeaderName::from_static(name), value);
        }
    }
    resp
}

/// Runs the endpoint for an authenticated request.
fn route(
    gh: &mut State,
    req: &Request,
    path: &str,
    base: &Base,
    user: &Token,
    rate: &Rate,
) -> Answer {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let pairs = query_pairs(&req.query);
    let body = || -> Result<Value, Answer> {
        serde_json::from_slice(&req.body)
            .map_err(|_| Answer::error(400, "Problems parsing JSON", DOCS))
    };
    match (req.method.as_str(), segments.as_slice()) {
        ("GET", ["user"]) => {
            let id = gh.user_id(&user.login);
            Answer::ok(200, wire::me(base, &user.login, id, 1_200_000_000))
        }
        ("GET", ["rate_limit"]) => {
            let core = rate.json();
            Answer::ok(200, json!({"resources": {"core": core}, "rate": core}))
        }
        ("GET", ["repos", owner, name]) => match access(gh, owner, name, user, false) {
            Ok((i, perm)) => {
                let owner_id = gh.user_id(owner);
                Answer::ok(200, wire::repo(base, &gh.repos[i], owner_id, perm))
            }
            Err(answer) => answer,
        },
        ("GET", ["repos", owner, name, "labels"]) => match access(gh, owner, name, user, false) {
            Ok((i, _)) => list_labels(&gh.repos[i], base, &pairs),
            Err(answer) => answer,
        },
        ("POST", ["repos", owner, name, "labels"]) => match access(gh, owner, name, user, true) {
            Ok((i, perm)) => match body() {
                Ok(body) => create_label(gh, i, perm, base, &body),
                Err(answer) => answer,
            },
            Err(answer) => answer,
        },
        ("GET", ["repos", owner, name, "issues"]) => match access(gh, owner, name, user, false) {
            Ok((i, perm)) => issues::list(gh, i, perm, base, &pairs),
            Err(answer) => answer,
        },
        ("POST", ["repos", owner, name, "issues"]) => match access(gh, owner, name, user, true) {
            Ok((i, perm)) => match body() {
                Ok(body) => issues::create(gh, i, perm, base, &user.login, &body),
                Err(answer) => answer,
            },
            Err(answer) => answer,
        },
        ("GET", ["repos", owner, name, "issues", number]) => {
            match access(gh, owner, name, user, false) {
                Ok((i, perm)) => issues::get(gh, i, perm, base, number),
                Err(answer) => answer,
            }
        }
        _ => Answer::not_found(),
    }
}

/// The repository `owner/name` as the token's user sees it: its index and the user's
/// permission there, or GitHub's refusal. A private repository the user cannot see is "Not
/// Found", as on GitHub; so is one a classic token without `repo` scope asks for. A write with
/// a classic token that lacks `repo` (or `public_repo`, on a public repository) is refused.
fn access(
    gh: &mut State,
    owner: &str,
    name: &str,
    user: &Token,
    write: bool,
) -> Result<(usize, Permission), Answer> {
    let full = format!("{owner}/{name}");
    let i = gh
        .repos
        .iter()
        .position(|r| r.config.full_name.eq_ignore_ascii_case(&full))
        .ok_or_else(Answer::not_found)?;
    let repo = &gh.repos[i].config;
    let perm = if repo.private {
        repo.permission
    } else {
        repo.permission.max(Permission::Read)
    };
    let classic = user.scopes.is_some();
    if perm == Permission::None || (repo.private && classic && !user.has_scope("repo")) {
        return Err(Answer::not_found());
    }
    if write && classic && !user.has_scope("repo") && !user.has_scope("public_repo") {
        return Err(Answer::error(
            403,
            "Resource not accessible by personal access token",
            DOCS,
        ));
    }
    Ok((i, perm))
}

/// `GET /repos/{o}/{r}/labels`
fn list_labels(repo: &Repo, base: &Base, pairs: &[(String, String)]) -> Answer {
    let page = Page::from_query(pairs);
    let full = &repo.config.full_name;
    let all: Vec<Value> = repo
        .labels
        .iter()
        .map(|l| wire::label(base, full, l))
        .collect();
    paginated(all, page, base, &format!("/repos/{full}/labels"), pairs)
}

/// One page of `items`, with the `link` header to the others.
pub(crate) fn paginated(
    items: Vec<Value>,
    page: Page,
    base: &Base,
    path: &str,
    pairs: &[(String, String)],
) -> Answer {
    let link = page.link(items.len(), &format!("{}{path}", base.api), pairs);
    let mut answer = Answer::ok(200, Value::Array(page.cut(items)));
    if let Some(link) = link {
        answer = answer.header("link", link);
    }
    answer
}

/// `POST /repos/{o}/{r}/labels`
fn create_label(gh: &mut State, i: usize, perm: Permission, base: &Base, body: &Value) -> Answer {
    const DOCS_LABEL: &str = "https://docs.github.com/rest/issues/labels#create-a-label";
    let repo = &gh.repos[i];
    if repo.config.archived {
        return Answer::error(403, "Repository was archived so is read-only.", DOCS_LABEL);
    }
    if perm < Permission::Write {
        return Answer::error(403, "Must have admin rights to Repository.", DOCS_LABEL);
    }
    let name = body["name"].as_str().map(str::trim).unwrap_or_default();
    if name.is_empty() {
        return Answer::ok(
            422,
            wire::validation("Label", "name", "missing_field", DOCS_LABEL),
        );
    }
    let color = body["color"].as_str().unwrap_or("ededed");
    if color.len() != 6 || !color.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Answer::ok(
            422,
            wire::validation("Label", "color", "invalid", DOCS_LABEL),
        );
    }
    if repo.label(name).is_some() {
        return Answer::ok(
            422,
            wire::validation("Label", "name", "already_exists", DOCS_LABEL),
        );
    }
    let full = repo.config.full_name.clone();
    let description = body["description"].as_str().map(str::to_owned);
    gh.add_label(&full, name, color, description);
    let repo = &gh.repos[i];
    match repo.label(name) {
        Some(label) => {
            let v = wire::label(base, &full, label);
            let location = v["url"].as_str().unwrap_or_default().to_owned();
            Answer::ok(201, v).header("location", location)
        }
        None => Answer::not_found(),
    }
}
