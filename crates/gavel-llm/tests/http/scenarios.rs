//! The behaviours every HTTP provider kind must show against the fake, written once and run for
//! each kind by [`kind_tests!`]: answers, usage, the answering model, and every fault the fake
//! can produce.

use std::time::Instant;

use gavel_fakeapi::Reply;
use gavel_llm::ProviderError;

use crate::util::{
    Harness, IDLE, Kind, MAX_TOKENS, PROMPT, cancel_after_first_text, field, header, permanent,
    transient,
};

const ANSWER: &str = "The patch is correct; the loop now stops at the last element.";

pub fn answers_with_text_tokens_and_model(kind: &'static Kind) {
    let h = Harness::new(kind);
    h.push(Reply::text(ANSWER).with_usage(120, 9, 0));
    let (result, progress) = h.ask_with_progress();
    let response = result.unwrap_or_else(|e| panic!("{}: {e:?}", kind.name));
    assert_eq!(response.text, ANSWER);
    assert_eq!(response.provider, kind.name);
    assert_eq!(response.model, kind.model);
    assert_eq!(response.requested_model, kind.model);
    assert_eq!(response.input_tokens, Some(120));
    assert_eq!(response.output_tokens, Some(9));
    assert_eq!(response.cost_usd, None);
    assert_eq!(response.attempts, 1);
    assert_eq!(response.credential.as_deref(), Some(kind.key_var));
    assert!(response.quota_exhausted.is_empty());
    assert!(response.raw.contains("last element."), "{}", response.raw);
    assert!(response.raw.contains(kind.final_marker), "{}", response.raw);

    // Progress grows as text streams in, ending near chars/4.
    assert!(progress.len() >= 2, "{}: {progress:?}", kind.name);
    assert!(progress.iter().all(|p| p.attempt == 1));
    assert!(
        progress
            .windows(2)
            .all(|w| w[0].output_tokens <= w[1].output_tokens)
    );
    let last = progress.last().map_or(0, |p| p.output_tokens);
    assert_eq!(last, (ANSWER.chars().count() as u64).div_ceil(4));

    // What the service received: one streamed request with the whole prompt as one user message.
    let req = h.only_request();
    assert_eq!(req.method, "POST");
    assert_eq!(req.path, kind.path);
    assert_eq!(req.model, kind.model);
    assert!(req.streamed, "{}: not streamed", kind.name);
    let messages = field(&req, kind.messages_ptr).as_array().map(Vec::len);
    assert_eq!(messages, Some(1), "{}: {}", kind.name, req.body);
    assert_eq!(field(&req, kind.role_ptr), "user");
    assert_eq!(field(&req, kind.prompt_ptr), PROMPT);
    assert_eq!(field(&req, kind.max_tokens_ptr), MAX_TOKENS);
    let expected_auth = format!("{}{}", kind.auth_prefix, kind.key());
    assert_eq!(header(&req, kind.auth_header), Some(expected_auth.as_str()));
}

pub fn counts_cached_tokens(kind: &'static Kind) {
    let h = Harness::new(kind);
    h.push(Reply::text(ANSWER).with_usage(100, 9, 40));
    let response = h.ask().unwrap_or_else(|e| panic!("{}: {e:?}", kind.name));
    // Input tokens always include cached ones; Anthropic reports cache reads separately.
    let input = if kind.cache_adds_to_input { 140 } else { 100 };
    assert_eq!(response.input_tokens, Some(input), "{}", kind.name);
    let cached = kind.streams_cached.then_some(40);
    assert_eq!(response.cached_tokens, cached, "{}", kind.name);
}

pub fn reports_a_different_answering_model_as_is(kind: &'static Kind) {
    let h = Harness::new(kind);
    h.push(Reply::text(ANSWER).with_model("substitute-model-9"));
    let response = h.ask().unwrap_or_else(|e| panic!("{}: {e:?}", kind.name));
    assert_eq!(response.model, "substitute-model-9");
    assert_eq!(response.requested_model, kind.model);
    assert_eq!(response.text, ANSWER);
}

pub fn rate_limit_is_transient_with_retry_after(kind: &'static Kind) {
    let h = Harness::new(kind);
    h.push(Reply::error(429, "rate limited: slow down").retry_after(2));
    let (message, retry) = transient(kind, h.ask());
    assert_eq!(retry, Some(2000));
    assert!(message.contains("429"), "{message}");
    assert!(message.contains("slow down"), "{message}");
}

pub fn server_error_is_transient(kind: &'static Kind) {
    let h = Harness::new(kind);
    h.push(Reply::error(500, "internal trouble"));
    let (message, retry) = transient(kind, h.ask());
    assert_eq!(retry, None);
    assert!(message.contains("500"), "{message}");
    assert!(message.contains("internal trouble"), "{message}");
}

pub fn rejected_key_is_permanent_with_hint(kind: &'static Kind) {
    let h = Harness::new(kind);
    h.push(Reply::error(401, "invalid x-api-key"));
    let (message, hint) = permanent(kind, h.ask());
    assert!(message.contains("401"), "{message}");
    assert!(message.contains("invalid x-api-key"), "{message}");
    assert!(hint.contains(kind.key_var), "{hint}");
}

pub fn unknown_model_is_permanent_with_hint(kind: &'static Kind) {
    for status in [404, 400] {
        let h = Harness::new(kind);
        h.push(Reply::error(status, "model not found"));
        let (message, hint) = permanent(kind, h.ask());
        assert!(message.contains(&status.to_string()), "{message}");
        assert!(hint.contains(&format!("`{}`", kind.model)), "{hint}");
    }
}

pub fn stalled_stream_is_transient_within_idle_timeout(kind: &'static Kind) {
    let h = Harness::new(kind);
    h.push(Reply::Stall {
        after_events: kind.mid_events,
    });
    let started = Instant::now();
    let (result, progress) = h.ask_with_progress();
    let took = started.elapsed();
    let (message, _) = transient(kind, result);
    // The idle timeout (1 s), not the total one (20 s), ended the call, and not before it was
    // due; the fake would have stalled for minutes.
    assert!(message.contains("idle timeout"), "{message}");
    assert!(took >= IDLE, "{}: gave up after {took:?}", kind.name);
    // The text that did arrive was reported while waiting.
    assert!(
        !progress.is_empty(),
        "{}: no progress before the stall",
        kind.name
    );
}

pub fn cut_stream_is_transient(kind: &'static Kind) {
    let h = Harness::new(kind);
    h.push(Reply::Cut {
        after_events: kind.mid_events,
    });
    let (message, retry) = transient(kind, h.ask());
    assert_eq!(retry, None);
    assert!(
        message.contains("broke off") || message.contains("incomplete"),
        "{message}"
    );
}

pub fn malformed_json_is_transient(kind: &'static Kind) {
    let h = Harness::new(kind);
    h.push(Reply::Malformed);
    let (message, _) = transient(kind, h.ask());
    assert!(message.contains("malformed JSON"), "{message}");
}

pub fn cancellation_mid_stream_ends_the_call(kind: &'static Kind) {
    let h = Harness::new(kind);
    // About ten events 150 ms apart: a call that went on after the cancellation would relay the
    // rest of the answer (or return it).
    let long = "word ".repeat(48);
    h.push(Reply::text(long).with_event_delay(150));
    let (result, relayed_after_cancel) = cancel_after_first_text(&h.provider);
    assert!(
        matches!(result, Err(ProviderError::Cancelled)),
        "{}: {result:?}",
        kind.name
    );
    assert_eq!(
        relayed_after_cancel, 0,
        "{}: the call went on after it was cancelled",
        kind.name
    );
    assert_eq!(h.fake.requests().len(), 1, "{}: not retried", kind.name);
}

/// Generates one test per scenario for a provider kind.
macro_rules! kind_tests {
    ($module:ident, $kind:path) => {
        mod $module {
            use crate::scenarios as s;

            #[test]
            fn answers_with_text_tokens_and_model() {
                s::answers_with_text_tokens_and_model(&$kind);
            }
            #[test]
            fn counts_cached_tokens() {
                s::counts_cached_tokens(&$kind);
            }
            #[test]
            fn reports_a_different_answering_model_as_is() {
                s::reports_a_different_answering_model_as_is(&$kind);
            }
            #[test]
            fn rate_limit_is_transient_with_retry_after() {
                s::rate_limit_is_transient_with_retry_after(&$kind);
            }
            #[test]
            fn server_error_is_transient() {
                s::server_error_is_transient(&$kind);
            }
            #[test]
            fn rejected_key_is_permanent_with_hint() {
                s::rejected_key_is_permanent_with_hint(&$kind);
            }
            #[test]
            fn unknown_model_is_permanent_with_hint() {
                s::unknown_model_is_permanent_with_hint(&$kind);
            }
            #[test]
            fn stalled_stream_is_transient_within_idle_timeout() {
                s::stalled_stream_is_transient_within_idle_timeout(&$kind);
            }
            #[test]
            fn cut_stream_is_transient() {
                s::cut_stream_is_transient(&$kind);
            }
            #[test]
            fn malformed_json_is_transient() {
                s::malformed_json_is_transient(&$kind);
            }
            #[test]
            fn cancellation_mid_stream_ends_the_call() {
                s::cancellation_mid_stream_ends_the_call(&$kind);
            }
        }
    };
}

kind_tests!(anthropic, crate::util::ANTHROPIC);
kind_tests!(google, crate::util::GOOGLE);
kind_tests!(openai, crate::util::OPENAI);
kind_tests!(openai_compatible, crate::util::COMPATIBLE);
