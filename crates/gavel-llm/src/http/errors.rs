//! Turns a failed HTTP call into a [`ProviderError`] that says whether retrying can help.
//!
//! The generic retry wrapper only sees `Transient` (with the wait the service asked for) or
//! `Permanent` (with a hint for the person running gavel), so every failure mode of the four
//! APIs is sorted here: HTTP status, `retry-after` headers and Gemini's `RetryInfo`, vendors'
//! error events inside a stream, timeouts, broken connections and malformed frames.

use std::time::Duration;

use genai::webc::StreamTimeout;
use serde_json::Value;

use crate::provider::ProviderError;

/// What a message or hint needs to know about the call that failed.
#[derive(Debug, Clone)]
pub(crate) struct Ctx {
    /// The provider kind, e.g. `"anthropic"`.
    pub kind: &'static str,
    /// The provider string, e.g. `"anthropic:claude-sonnet-4-5"`.
    pub label: String,
    pub model: String,
    /// The variable the key came from (`None`: a compatible server called without a key).
    pub key_env: Option<String>,
    pub base_url: String,
    pub idle_timeout: Duration,
}

impl Ctx {
    pub fn transient(&self, message: String, retry_after_ms: Option<u64>) -> ProviderError {
        ProviderError::Transient {
            provider: self.kind.to_owned(),
            message,
            retry_after_ms,
            quota: false,
        }
    }

    /// The vendor's quota or rate-limit answer for this call's key: transient, and another key
    /// may answer at once.
    pub fn quota(&self, message: String, retry_after_ms: Option<u64>) -> ProviderError {
        ProviderError::Transient {
            provider: self.kind.to_owned(),
            message,
            retry_after_ms,
            quota: true,
        }
    }

    pub fn permanent(&self, message: String, hint: Option<String>) -> ProviderError {
        ProviderError::Permanent {
            provider: self.kind.to_owned(),
            message,
            hint,
        }
    }

    /// The hint for a missing or rejected key.
    pub fn key_hint(&self) -> String {
        match &self.key_env {
            Some(var) => format!("check that {var} holds a valid API key for {}", self.label),
            None => format!(
                "the server at {} wants an API key: put it in an environment variable and name \
                 that variable in `[keys] openai_compatible` in gavel.toml",
                self.base_url
            ),
        }
    }

    /// The hint for a request the service refused (usually an unknown model).
    pub fn model_hint(&self) -> String {
        format!(
            "check the model name `{}` in `{}`: the service rejected the request",
            self.model, self.label
        )
    }

    /// The error for a stream that went silent.
    pub fn idle(&self) -> ProviderError {
        self.transient(
            format!(
                "no data from the service for {} s (idle timeout)",
                self.idle_timeout.as_secs_f64()
            ),
            None,
        )
    }
}

/// Sorts a genai error.
pub(crate) fn classify(err: &genai::Error, ctx: &Ctx) -> ProviderError {
    use genai::Error as E;
    if let Some(status) = err.status() {
        let header = |name: &str| {
            err.headers()
                .and_then(|h| h.get(name))
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let body = body_of(err);
        let retry = retry_after_ms(
            header("retry-after-ms").as_deref(),
            header("retry-after").as_deref(),
            body,
            jiff::Timestamp::now(),
        );
        return from_status(status.as_u16(), retry, body, ctx);
    }
    match err {
        E::WebStream { error, cause, .. } => {
            if let Some(inner) = error.downcast_ref::<genai::Error>() {
                classify(inner, ctx)
            } else if error.downcast_ref::<StreamTimeout>().is_some() {
                ctx.idle()
            } else {
                ctx.transient(broken(cause), None)
            }
        }
        E::WebModelCall { webc_error, .. } | E::WebAdapterCall { webc_error, .. } => {
            ctx.transient(broken(&webc_error.to_string()), None)
        }
        E::StreamParse { serde_error, .. } => {
            ctx.transient(malformed(&serde_error.to_string()), None)
        }
        E::SerdeJson(e) => ctx.transient(malformed(&e.to_string()), None),
        E::JsonValueExt(e) => ctx.transient(malformed(&e.to_string()), None),
        E::InvalidJsonResponseElement { info } => ctx.transient(malformed(info), None),
        E::ChatResponse { body, .. } => from_error_event(body, ctx),
        E::RequiresApiKey { .. }
        | E::NoAuthResolver { .. }
        | E::NoAuthData { .. }
        | E::Resolver { .. } => ctx.permanent(err.to_string(), Some(ctx.key_hint())),
        _ => ctx.permanent(err.to_string(), None),
    }
}

/// The body of a failed HTTP answer (empty when genai kept none).
fn body_of(err: &genai::Error) -> &str {
    use genai::Error as E;
    match err {
        E::HttpError { body, .. } => body.as_str(),
        E::WebModelCall { webc_error, .. } | E::WebAdapterCall { webc_error, .. } => {
            match webc_error {
                genai::webc::Error::ResponseFailedStatus { body, .. } => body.as_str(),
                _ => "",
            }
        }
        _ => "",
    }
}

/// The HTTP status and body of a failed call, looking inside a stream's error as
/// [`classify`] does; `None` when the call failed without an HTTP error status.
pub(crate) fn status_and_body(err: &genai::Error) -> Option<(u16, &str)> {
    if let Some(status) = err.status() {
        return Some((status.as_u16(), body_of(err)));
    }
    match err {
        genai::Error::WebStream { error, .. } => {
            status_and_body(error.downcast_ref::<genai::Error>()?)
        }
        _ => None,
    }
}

fn broken(cause: &str) -> String {
    format!("the connection failed or broke off before the answer was complete: {cause}")
}

/// The message for a frame that is not valid JSON.
pub(crate) fn malformed(detail: &str) -> String {
    format!("the service sent malformed JSON: {}", shorten(detail))
}

/// The vendors' codes for an exhausted quota or a rate limit: Anthropic's `rate_limit_error`,
/// Gemini's `RESOURCE_EXHAUSTED`, OpenAI's `insufficient_quota` and `rate_limit_exceeded`.
const QUOTA_CODES: &[&str] = &[
    "rate_limit_error",
    "RESOURCE_EXHAUSTED",
    "insufficient_quota",
    "rate_limit_exceeded",
];

/// Sorts an HTTP error status. A 429 is the vendor's quota or rate-limit answer (Anthropic
/// `rate_limit_error`, Gemini `RESOURCE_EXHAUSTED`, OpenAI `insufficient_quota` or
/// `rate_limit_exceeded`).
pub(crate) fn from_status(
    status: u16,
    retry_after_ms: Option<u64>,
    body: &str,
    ctx: &Ctx,
) -> ProviderError {
    let message = format!("HTTP {status}: {}", vendor_message(body));
    match status {
        429 => ctx.quota(message, retry_after_ms),
        408 | 409 | 425 | 500..=599 => ctx.transient(message, retry_after_ms),
        401 | 403 => ctx.permanent(message, Some(ctx.key_hint())),
        400 | 404 | 422 => ctx.permanent(message, Some(ctx.model_hint())),
        _ => ctx.permanent(message, None),
    }
}

/// Sorts an error the vendor sent inside an otherwise successful stream (Anthropic's
/// `event: error`, OpenAI's `response.failed`): overloads and server errors are transient, a
/// quota or rate-limit code is the quota answer.
pub(crate) fn from_error_event(body: &Value, ctx: &Ctx) -> ProviderError {
    let codes: Vec<&str> = [
        "/error/type",
        "/error/code",
        "/error/status",
        "/response/error/code",
        "/code",
    ]
    .iter()
    .filter_map(|p| body.pointer(p).and_then(Value::as_str))
    .collect();
    let message = format!(
        "the service reported an error: {}",
        vendor_message(&body.to_string())
    );
    let has = |names: &[&str]| codes.iter().any(|c| names.contains(c));
    if has(&[
        "authentication_error",
        "permission_error",
        "invalid_api_key",
        "UNAUTHENTICATED",
        "PERMISSION_DENIED",
    ]) {
        ctx.permanent(message, Some(ctx.key_hint()))
    } else if has(&[
        "invalid_request_error",
        "not_found_error",
        "model_not_found",
        "invalid_prompt",
        "INVALID_ARGUMENT",
        "NOT_FOUND",
    ]) {
        ctx.permanent(message, Some(ctx.model_hint()))
    } else if has(QUOTA_CODES) {
        ctx.quota(message, None)
    } else {
        ctx.transient(message, None)
    }
}

/// The human part of a vendor's error body (`error.message` in all four formats).
fn vendor_message(body: &str) -> String {
    let parsed = serde_json::from_str::<Value>(body).ok();
    let message = parsed.as_ref().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.pointer("/response/error/message"))
            .or_else(|| v.get("message"))
            .and_then(Value::as_str)
    });
    match message {
        Some(m) => shorten(m),
        None if body.trim().is_empty() => "(no body)".to_owned(),
        None => shorten(body.trim()),
    }
}

fn shorten(text: &str) -> String {
    const MAX: usize = 300;
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_owned(),
    }
}

/// How long the service asked us to wait, in milliseconds: `retry-after-ms`, else
/// `retry-after` (seconds or an HTTP date), else Gemini's `RetryInfo.retryDelay` in the body.
pub(crate) fn retry_after_ms(
    ms_header: Option<&str>,
    header: Option<&str>,
    body: &str,
    now: jiff::Timestamp,
) -> Option<u64> {
    if let Some(ms) = ms_header.and_then(|v| non_negative(v.trim())) {
        return Some(whole_ms(ms));
    }
    if let Some(value) = header.map(str::trim) {
        if let Some(secs) = non_negative(value) {
            return Some(whole_ms(secs * 1000.0));
        }
        let parser = jiff::fmt::rfc2822::DateTimeParser::new();
        if let Ok(at) = parser.parse_timestamp(value) {
            let ms = at.as_millisecond().saturating_sub(now.as_millisecond());
            return Some(u64::try_from(ms).unwrap_or(0));
        }
    }
    gemini_retry_delay_ms(body)
}

/// Milliseconds from a finite, non-negative float (`as` saturates the absurdly large).
fn whole_ms(ms: f64) -> u64 {
    ms.round() as u64
}

fn non_negative(text: &str) -> Option<f64> {
    text.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
}

/// `{"error": {"details": [{"@type": "...google.rpc.RetryInfo", "retryDelay": "2s"}]}}`
fn gemini_retry_delay_ms(body: &str) -> Option<u64> {
    let json: Value = serde_json::from_str(body).ok()?;
    let details = json.pointer("/error/details")?.as_array()?;
    details
        .iter()
        .filter(|d| {
            d.get("@type")
                .and_then(Value::as_str)
                .is_some_and(|t| t.ends_with("google.rpc.RetryInfo"))
        })
        .find_map(|d| {
            let delay = d.get("retryDelay")?.as_str()?;
            let secs = non_negative(delay.trim().strip_suffix('s')?)?;
            Some(whole_ms(secs * 1000.0))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> Ctx {
        Ctx {
            kind: "google",
            label: "google:gemini-x".into(),
            model: "gemini-x".into(),
            key_env: Some("GEMINI_API_KEY".into()),
            base_url: "http://h".into(),
            idle_timeout: Duration::from_secs(1),
        }
    }

    fn now() -> jiff::Timestamp {
        "2026-11-21T12:00:00Z".parse().unwrap()
    }

    #[test]
    fn retry_after_accepts_seconds_dates_milliseconds_and_gemini_retry_info() {
        assert_eq!(retry_after_ms(None, Some("2"), "", now()), Some(2000));
        assert_eq!(retry_after_ms(None, Some(" 1.5 "), "", now()), Some(1500));
        assert_eq!(
            retry_after_ms(None, Some("Sat, 21 Nov 2026 12:00:07 GMT"), "", now()),
            Some(7000)
        );
        // A date in the past means "now", not a negative wait.
        assert_eq!(
            retry_after_ms(None, Some("Sat, 21 Nov 2026 11:00:00 GMT"), "", now()),
            Some(0)
        );
        assert_eq!(retry_after_ms(Some("250"), Some("9"), "", now()), Some(250));
        let body = r#"{"error":{"code":429,"details":[
            {"@type":"type.googleapis.com/google.rpc.QuotaFailure"},
            {"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"3.5s"}]}}"#;
        assert_eq!(retry_after_ms(None, None, body, now()), Some(3500));
        assert_eq!(retry_after_ms(None, Some("soon"), "not json", now()), None);
        assert_eq!(retry_after_ms(None, Some("-3"), "", now()), None);
    }

    #[test]
    fn statuses_sort_into_transient_and_permanent_with_hints() {
        let c = ctx();
        for status in [408, 429, 500, 502, 503, 529] {
            let err = from_status(status, Some(10), "{}", &c);
            assert!(err.is_transient(), "{status}");
        }
        let body =
            r#"{"error":{"code":401,"message":"API key not valid","status":"UNAUTHENTICATED"}}"#;
        let err = from_status(401, None, body, &c);
        assert!(!err.is_transient());
        assert!(err.to_string().contains("API key not valid"), "{err}");
        assert!(err.hint().unwrap().contains("GEMINI_API_KEY"));
        let err = from_status(404, None, "model gemini-x not found", &c);
        assert!(err.hint().unwrap().contains("`gemini-x`"));
        assert!(err.to_string().contains("model gemini-x not found"));
        assert_eq!(from_status(402, None, "", &c).hint(), None);
    }

    #[test]
    fn error_events_inside_a_stream_are_sorted_by_their_type() {
        let c = ctx();
        let overloaded: Value = serde_json::from_str(
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        )
        .unwrap();
        assert!(from_error_event(&overloaded, &c).is_transient());
        let auth: Value =
            serde_json::from_str(r#"{"type":"error","error":{"type":"authentication_error"}}"#)
                .unwrap();
        let err = from_error_event(&auth, &c);
        assert!(err.hint().unwrap().contains("GEMINI_API_KEY"));
    }

    #[test]
    fn the_vendors_quota_answers_are_marked_and_others_are_not() {
        let c = ctx();
        // The vendors' real 429 bodies.
        for body in [
            r#"{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization"}}"#,
            r#"{"error":{"code":429,"message":"You exceeded your current quota","status":"RESOURCE_EXHAUSTED"}}"#,
            r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#,
            r#"{"error":{"message":"Rate limit reached for gpt-5","type":"requests","param":null,"code":"rate_limit_exceeded"}}"#,
        ] {
            let err = from_status(429, None, body, &c);
            assert!(err.is_quota_exhausted(), "{body}");
        }
        for status in [408, 500, 503, 529] {
            let err = from_status(status, None, "{}", &c);
            assert!(err.is_transient() && !err.is_quota_exhausted(), "{status}");
        }
        // Inside a stream: a rate-limit event is the quota answer, an overload is not.
        let limited: Value = serde_json::from_str(
            r#"{"type":"response.failed","response":{"error":{"code":"rate_limit_exceeded","message":"slow down"}}}"#,
        )
        .unwrap();
        assert!(from_error_event(&limited, &c).is_quota_exhausted());
        let overloaded: Value =
            serde_json::from_str(r#"{"type":"error","error":{"type":"overloaded_error"}}"#)
                .unwrap();
        assert!(!from_error_event(&overloaded, &c).is_quota_exhausted());
    }

    #[test]
    fn long_vendor_messages_are_shortened() {
        let long = "x".repeat(1000);
        let err = from_status(500, None, &long, &ctx());
        assert!(err.to_string().len() < 400, "{err}");
    }
}
