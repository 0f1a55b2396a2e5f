//! The vendors' error bodies: the JSON each API answers with for an HTTP error status, and for
//! a key whose quota is exhausted.

use serde_json::{Value, json};

use crate::server::Api;

/// The vendor's error body for `status`.
pub fn error_body(api: Api, status: u16, message: &str, retry_after: Option<u64>) -> Value {
    match api {
        Api::Anthropic => {
            let kind = match status {
                400 => "invalid_request_error",
                401 => "authentication_error",
                403 => "permission_error",
                404 => "not_found_error",
                429 => "rate_limit_error",
                529 => "overloaded_error",
                _ => "api_error",
            };
            json!({"type": "error", "error": {"type": kind, "message": message}})
        }
        Api::Gemini => {
            let status_name = match status {
                400 => "INVALID_ARGUMENT",
                401 => "UNAUTHENTICATED",
                403 => "PERMISSION_DENIED",
                404 => "NOT_FOUND",
                429 => "RESOURCE_EXHAUSTED",
                503 => "UNAVAILABLE",
                _ => "INTERNAL",
            };
            let mut details = Vec::new();
            if let Some(secs) = retry_after {
                details.push(json!({"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": format!("{secs}s")}));
            }
            json!({"error": {"code": status, "message": message, "status": status_name, "details": details}})
        }
        Api::OpenAiResponses | Api::OpenAiChat => {
            let (kind, code) = match status {
                400 => ("invalid_request_error", "invalid_request"),
                401 => ("invalid_request_error", "invalid_api_key"),
                404 => ("invalid_request_error", "model_not_found"),
                429 => ("rate_limit_exceeded", "rate_limit_exceeded"),
                _ => ("server_error", "server_error"),
            };
            json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
        }
    }
}

/// The vendor's 429 body for a key whose quota is exhausted, as the real services send it.
pub fn quota_body(api: Api, model: &str, retry_after: Option<u64>) -> Value {
    match api {
        Api::Anthropic => {
            let message = format!(
                "This request would exceed your organization's rate limit of 50,000 input tokens \
                 per minute (org: fake, model: {model}). For details, refer to: \
                 https://docs.claude.com/en/api/rate-limits."
            );
            json!({"type": "error", "error": {"type": "rate_limit_error", "message": message},
                   "request_id": "req_fake_quota"})
        }
        Api::Gemini => {
            let mut details = vec![
                json!({"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{
                    "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                    "quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
                    "quotaDimensions": {"location": "global", "model": model}, "quotaValue": "50"}]}),
                json!({"@type": "type.googleapis.com/google.rpc.Help", "links": [{
                    "description": "Learn more about Gemini API quotas",
                    "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}]}),
            ];
            if let Some(secs) = retry_after {
                details.push(json!({"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": format!("{secs}s")}));
            }
            json!({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "details": details,
                "message": "You exceeded your current quota, please check your plan and billing details. \
                            For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits."}})
        }
        Api::OpenAiResponses | Api::OpenAiChat => json!({"error": {
            "message": "You exceeded your current quota, please check your plan and billing details. For more \
                        information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.",
            "type": "insufficient_quota", "param": null, "code": "insufficient_quota"}}),
    }
}
