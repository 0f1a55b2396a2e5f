//! GitHub's REST API over HTTP: the headers GitHub asks for, `Link` pagination, the error
//! bodies and the retry policy for failures that may pass.
//!
//! Retried here: a GET or an idempotent POST (label creation) that got no answer, a 5xx, a
//! secondary rate limit (`retry-after`) and a primary rate limit whose reset is near
//! (`x-ratelimit-remaining: 0`, `x-ratelimit-reset`), each wait at most
//! [`RetryPolicy::max_wait`]. A longer wait is an error naming the reset time. An issue
//! creation is never retried here: its caller looks for the issue before trying again.
//!
//! The token goes into the `Authorization` header only. Errors carry GitHub's message and
//! error list, never a header; pagination follows `next` links only on the API's own origin,
//! so the token is never sent anywhere else.

use std::time::Duration;

use reqwest::blocking::{Client as Http, RequestBuilder, Response};
use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderMap, USER_AGENT};
use serde_json::Value;

use super::auth::Token;

/// How failures that may pass are retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub retries: u32,
    /// The first backoff after a 5xx or no answer (doubles each time).
    pub base_delay: Duration,
    /// The longest gavel waits for a rate limit to pass; a longer one is reported.
    pub max_wait: Duration,
    /// How long one request may take.
    pub timeout: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            retries: 3,
            base_delay: Duration::from_secs(1),
            max_wait: Duration::from_secs(60),
            timeout: Duration::from_secs(30),
        }
    }
}

/// A rate limit GitHub reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RateLimited {
    /// The hourly quota is spent until `reset` (unix seconds).
    Primary { reset: i64 },
    /// Too many requests too fast: wait this long.
    Secondary { retry_after: Duration },
}

/// A failed request.
#[derive(Debug, Clone)]
pub enum ApiError {
    /// No HTTP answer (refused, timed out, connection closed). `maybe_sent`: the request may
    /// have reached GitHub and been carried out.
    Transport { message: String, maybe_sent: bool },
    /// An HTTP error answer.
    Status {
        status: u16,
        /// GitHub's `message`, and each entry of its `errors` list, readable.
        message: String,
        errors: Vec<String>,
        /// GitHub's `errors[].code` values (`already_exists`, `missing_field`, ...).
        codes: Vec<String>,
        rate: Option<RateLimited>,
    },
    /// An answer that is not the JSON GitHub sends.
    Decode(String),
}

impl ApiError {
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Status { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// Whether a retry later may succeed (no answer, 5xx, a rate limit).
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Transport { .. } => true,
            Self::Status { status, rate, .. } => rate.is_some() || *status >= 500,
            Self::Decode(_) => false,
        }
    }

    /// Whether the request may have been carried out although no success came back.
    pub fn maybe_done(&self) -> bool {
        match self {
            Self::Transport { maybe_sent, .. } => *maybe_sent,
            Self::Status { status, .. } => *status >= 500,
            Self::Decode(_) => true,
        }
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Transport { message, .. } => write!(f, "no answer from GitHub ({message})"),
            Self::Status {
                status,
                message,
                errors,
                rate,
                ..
            } => {
                write!(f, "HTTP {status}: {message}")?;
                if !errors.is_empty() {
                    write!(f, " ({})", errors.join("; "))?;
                }
                match rate {
                    Some(RateLimited::Primary { reset }) => {
                        write!(f, "; the rate limit resets at {}", when(*reset))
                    }
                    Some(RateLimited::Secondary { retry_after }) => {
                        write!(f, "; GitHub asks to wait {}s", retry_after.as_secs())
                    }
                    None => Ok(()),
                }
            }
            Self::Decode(m) => write!(f, "GitHub's answer could not be read ({m})"),
        }
    }
}

/// A successful answer.
pub struct Reply {
    pub body: Value,
    pub headers: HeaderMap,
}

/// The HTTP client for one API base URL and token.
pub struct Client {
    http: Http,
    /// The API base without a trailing slash (`https://api.github.com`).
    api: String,
    token: Token,
    policy: RetryPolicy,
}

impl Client {
    pub fn new(api: &str, token: Token, policy: RetryPolicy) -> Result<Self, ApiError> {
        let mut builder = Http::builder()
            .timeout(policy.timeout)
            .connect_timeout(policy.timeout.min(Duration::from_secs(10)));
        // A proxy cannot reach this machine's loopback: an API there (a local fake or
        // tunnel) is reached directly whatever HTTPS_PROXY says.
        if is_loopback(api) {
            builder = builder.no_proxy();
        }
        let http = builder.build().map_err(|e| ApiError::Transport {
            message: format!("cannot set up HTTP: {e}"),
            maybe_sent: false,
        })?;
        Ok(Self {
            http,
            api: api.trim_end_matches('/').to_owned(),
            token,
            policy,
        })
    }

    pub fn token(&self) -> &Token {
        &self.token
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.api)
    }

    fn prepare(&self, builder: RequestBuilder) -> RequestBuilder {
        builder
            .header(ACCEPT, "application/vnd.github+json")
            .header("X-GitHub-Api-Version", "2022-11-28")
            .header(USER_AGENT, concat!("gavel/", env!("CARGO_PKG_VERSION")))
            .header(AUTHORIZATION, format!("Bearer {}", self.token.expose()))
    }

    /// `GET path` (relative to the API), with retries.
    pub fn get(&self, path: &str) -> Result<Reply, ApiError> {
        let url = self.url(path);
        self.with_retries(true, || self.prepare(self.http.get(&url)))
    }

    /// `POST path` with a JSON body. `idempotent`: a retry cannot do the work twice (the
    /// caller handles a repeat answer), so failures that may pass are retried; otherwise one
    /// attempt only.
    pub fn post(&self, path: &str, body: &Value, idempotent: bool) -> Result<Reply, ApiError> {
        let url = self.url(path);
        self.with_retries(idempotent, || self.prepare(self.http.post(&url)).json(body))
    }

    /// Every item of a paginated list, following `Link: <...>; rel="next"`.
    pub fn get_all(&self, path: &str) -> Result<Vec<Value>, ApiError> {
        let mut items = Vec::new();
        let mut url = self.url(path);
        // A bound on pages, so a server that links to itself cannot loop forever.
        for _ in 0..1000 {
            let reply = self.with_retries(true, || self.prepare(self.http.get(&url)))?;
            match reply.body {
                Value::Array(page) => items.extend(page),
                other => {
                    return Err(ApiError::Decode(format!(
                        "expected a list, got {}",
                        kind_of(&other)
                    )));
                }
            }
            match next_link(&reply.headers) {
                Some(next) if same_origin(&next, &self.api) => url = next,
                Some(_) => {
                    return Err(ApiError::Decode(
                        "a `next` page link points away from the API; not followed".into(),
                    ));
                }
                None => return Ok(items),
            }
        }
        Err(ApiError::Decode("more than 1000 pages".into()))
    }

    fn with_retries(
        &self,
        retry: bool,
        request: impl Fn() -> RequestBuilder,
    ) -> Result<Reply, ApiError> {
        let mut attempt = 0u32;
        loop {
            let result = send(request());
            let err = match result {
                Ok(reply) => return Ok(reply),
                Err(e) => e,
            };
            let wait = match &err {
                ApiError::Status {
                    rate: Some(RateLimited::Primary { reset }),
                    ..
                } => Some(Duration::from_secs(
                    u64::try_from(reset - now_secs()).unwrap_or(0) + 1,
                )),
                ApiError::Status {
                    rate: Some(RateLimited::Secondary { retry_after }),
                    ..
                } => Some(*retry_after),
                e if retry && e.is_transient() => {
                    Some(self.policy.base_delay.saturating_mul(1 << attempt.min(16)))
                }
                _ => None,
            };
            let Some(wait) = wait else { return Err(err) };
            // A rate limit waits even for a request that is otherwise not retried: GitHub
            // refused it without doing anything.
            let refused_only = matches!(&err, ApiError::Status { rate: Some(_), .. });
            if attempt >= self.policy.retries
                || wait > self.policy.max_wait
                || !(retry || refused_only)
            {
                return Err(err);
            }
            tracing::info!(attempt, wait_ms = wait.as_millis() as u64, error = %err, "GitHub request retried");
            std::thread::sleep(wait);
            attempt += 1;
        }
    }
}

/// Sends one request and reads its answer.
fn send(request: RequestBuilder) -> Result<Reply, ApiError> {
    let response = request.send().map_err(|e| transport(&e))?;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = read(response)?;
    if (200..300).contains(&status) {
        let body = if text.trim().is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).map_err(|e| ApiError::Decode(e.to_string()))?
        };
        return Ok(Reply { body, headers });
    }
    let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    let message = body["message"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| format!("no error message (body: {})", snippet(&text)));
    let list = body["errors"].as_array().cloned().unwrap_or_default();
    let errors = list.iter().map(describe_error).collect();
    let codes = list
        .iter()
        .filter_map(|e| e["code"].as_str().map(str::to_owned))
        .collect();
    let rate = rate_limited(status, &headers, &message);
    Err(ApiError::Status {
        status,
        message,
        errors,
        codes,
        rate,
    })
}

fn read(response: Response) -> Result<String, ApiError> {
    response.text().map_err(|e| ApiError::Transport {
        message: format!("the answer was cut off: {}", plain(&e)),
        maybe_sent: true,
    })
}

fn transport(e: &reqwest::Error) -> ApiError {
    // A refused connection never reached GitHub; anything later may have.
    ApiError::Transport {
        message: plain(e),
        maybe_sent: !e.is_connect(),
    }
}

/// A reqwest error with its causes (its URL never holds a secret: the token is a header).
fn plain(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// A readable entry of GitHub's `errors` list.
fn describe_error(e: &Value) -> String {
    if let Some(m) = e["message"].as_str() {
        return m.to_owned();
    }
    if let Some(s) = e.as_str() {
        return s.to_owned();
    }
    let part = |k: &str| e[k].as_str().unwrap_or("?").to_owned();
    let what = match e["code"].as_str() {
        Some("missing_field") => "is missing".to_owned(),
        Some("already_exists") => "already exists".to_owned(),
        Some("invalid") => "is invalid".to_owned(),
        Some("missing") => "does not exist".to_owned(),
        Some(code) => code.to_owned(),
        None => "is invalid".to_owned(),
    };
    format!("{} {} {what}", part("resource"), part("field"))
}

/// The rate limit an error answer reports, if any: `retry-after` (secondary limits, and 429),
/// or `x-ratelimit-remaining: 0` with `x-ratelimit-reset` (the primary limit).
fn rate_limited(status: u16, headers: &HeaderMap, message: &str) -> Option<RateLimited> {
    if status != 403 && status != 429 {
        return None;
    }
    if let Some(secs) = header(headers, "retry-after").and_then(|v| v.trim().parse::<u64>().ok()) {
        return Some(RateLimited::Secondary {
            retry_after: Duration::from_secs(secs),
        });
    }
    if header(headers, "x-ratelimit-remaining").as_deref() == Some("0")
        && let Some(reset) =
            header(headers, "x-ratelimit-reset").and_then(|v| v.trim().parse::<i64>().ok())
    {
        return Some(RateLimited::Primary { reset });
    }
    // GitHub's advice for a secondary limit without `retry-after`: wait at least a minute.
    message
        .to_ascii_lowercase()
        .contains("secondary rate limit")
        .then_some(RateLimited::Secondary {
            retry_after: Duration::from_secs(60),
        })
}

pub fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// The `rel="next"` URL of a `Link` header.
pub fn next_link(headers: &HeaderMap) -> Option<String> {
    let link = header(headers, "link")?;
    link.split(',').find_map(|part| {
        let (url, params) = part.split_once(';')?;
        let is_next = params.split(';').any(|p| {
            let p = p.trim().replace(' ', "");
            p == "rel=\"next\"" || p == "rel=next"
        });
        let url = url.trim().strip_prefix('<')?.strip_suffix('>')?;
        is_next.then(|| url.to_owned())
    })
}

/// Whether `url` is on the same scheme, host and port as `api`.
fn same_origin(url: &str, api: &str) -> bool {
    let origin = |u: &str| {
        let (scheme, rest) = u.split_once("://").unwrap_or(("", u));
        let host = rest.split('/').next().unwrap_or(rest).to_ascii_lowercase();
        (scheme.to_ascii_lowercase(), host)
    };
    origin(url) == origin(api)
}

/// Whether a URL's host is a loopback address.
fn is_loopback(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split('/').next().unwrap_or(rest);
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(v6),
        None => authority.split(':').next().unwrap_or(authority),
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn snippet(text: &str) -> String {
    let t: String = text.chars().take(200).collect();
    if t.is_empty() { "empty".into() } else { t }
}

pub fn now_secs() -> i64 {
    jiff::Timestamp::now().as_second()
}

/// A unix time as RFC 3339 UTC, with how far away it is.
pub fn when(unix: i64) -> String {
    let at = jiff::Timestamp::from_second(unix)
        .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_else(|_| unix.to_string());
    let secs = unix - now_secs();
    if secs > 0 {
        format!("{at} (in {})", human(secs))
    } else {
        at
    }
}

fn human(secs: i64) -> String {
    match secs {
        s if s < 120 => format!("{s}s"),
        s if s < 7200 => format!("{} min", s / 60),
        s => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests;
