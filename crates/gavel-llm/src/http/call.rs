//! One streamed call to an HTTP API, from request to [`Response`] or [`ProviderError`].
//!
//! Kept apart from the provider so the async part is one function: it sends the prompt, reads
//! the stream under the total deadline, reports progress as text arrives, and accepts the answer
//! only when the vendor's final event was seen. It runs as a task on the shared runtime; the
//! caller's thread waits for it and aborts it on cancellation (see [`super::HttpProvider`]).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures_util::StreamExt;
use genai::chat::{ChatOptions, ChatRequest, ChatStreamEvent, Usage};
use genai::resolver::{AuthData, Endpoint};
use genai::{ModelIden, ModelSpec, ServiceTarget};

use super::errors::{self, Ctx};
use super::wire::{Api, FrameLog};
use crate::provider::{BilledAttempt, ProviderError, Response};

/// Everything resolved before the call: where to send it, with which key, under which limits.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub api: Api,
    /// The genai endpoint, ending in `/`.
    pub endpoint: String,
    pub key: Option<String>,
    pub ctx: Ctx,
    pub idle_timeout: Duration,
    pub total_timeout: Duration,
}

/// Makes exactly one attempt, calling `progress` with the estimated output tokens so far, and
/// `billed` with an attempt that failed after the service reported its usage.
pub(crate) async fn run(
    client: genai::Client,
    plan: Plan,
    prompt: String,
    max_output_tokens: u32,
    progress: impl Fn(u64),
    billed: impl Fn(BilledAttempt),
) -> Result<Response, ProviderError> {
    let ctx = &plan.ctx;
    let log = Arc::new(Mutex::new(FrameLog::default()));
    let sink_log = Arc::clone(&log);
    let wire = plan.api.wire;
    let options = ChatOptions::default()
        .with_capture_usage(true)
        .with_max_tokens(max_output_tokens)
        .with_stream_header_timeout(plan.idle_timeout)
        .with_stream_read_timeout(plan.idle_timeout)
        .with_raw_frame_fn(move |_, frame| {
            wire.inspect(frame.event, frame.data, &mut lock(&sink_log));
        });
    let auth = plan
        .key
        .as_ref()
        .map_or(AuthData::None, |key| AuthData::from_single(key.clone()));
    let target = ServiceTarget {
        endpoint: Endpoint::from_owned(plan.endpoint.clone()),
        auth,
        model: ModelIden::new(plan.api.adapter(plan.key.is_some()), plan.api.model.clone()),
    };
    // gavel's prompts carry their own instructions: the whole prompt is one user message.
    let chat = ChatRequest::from_user(prompt);

    let total = tokio::time::sleep(plan.total_timeout);
    tokio::pin!(total);
    let mut stream = client
        .exec_chat_stream(ModelSpec::Target(target), chat, Some(&options))
        .await
        .map_err(|e| errors::classify(&e, ctx))?
        .stream;

    let mut text = String::new();
    let mut chars = 0u64;
    let mut usage = None;
    loop {
        tokio::select! {
            () = &mut total => {
                return Err(ctx.transient(
                    format!(
                        "no complete answer within {} s (total timeout)",
                        plan.total_timeout.as_secs_f64()
                    ),
                    None,
                ));
            }
            event = stream.next() => match event {
                Some(Ok(ChatStreamEvent::Chunk(chunk))) => {
                    chars += chunk.content.chars().count() as u64;
                    text.push_str(&chunk.content);
                    progress(chars.div_ceil(4));
                }
                Some(Ok(ChatStreamEvent::End(end))) => {
                    usage = end.captured_usage;
                    break;
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(errors::classify(&e, ctx)),
                None => break,
            },
        }
    }
    drop(stream);

    let log = std::mem::take(&mut *lock(&log));
    let (input_tokens, output_tokens, cached_tokens) = tokens(usage.as_ref());
    // A stream that failed after the service reported usage may still be billed.
    let failed = |e: ProviderError| {
        let attempt = BilledAttempt {
            provider: plan.api.kind.to_owned(),
            model: log.model.clone().unwrap_or_default(),
            requested_model: plan.api.model.clone(),
            input_tokens,
            output_tokens,
            cached_tokens,
            cost_micros: None,
            error: e.to_string(),
            raw: log.transcript.clone(),
        };
        if attempt.reported_usage() {
            billed(attempt);
        }
        e
    };
    if let Some(body) = &log.error_event {
        return Err(failed(errors::from_error_event(body, ctx)));
    }
    if !log.finished {
        let message = match &log.malformed {
            Some(data) => errors::malformed(data),
            None => "the stream ended before the service's final event: the answer is incomplete"
                .to_owned(),
        };
        return Err(failed(ctx.transient(message, None)));
    }
    Ok(Response {
        text,
        provider: plan.api.kind.to_owned(),
        // A compatible server may not name its model; then the requested one is all we know.
        model: log.model.unwrap_or_else(|| plan.api.model.clone()),
        requested_model: plan.api.model.clone(),
        input_tokens,
        output_tokens,
        cached_tokens,
        cost_usd: None,
        raw: log.transcript,
        attempts: 1,
        credential: None,
        quota_exhausted: Vec::new(),
        tool_uses: Vec::new(),
        ended_with: None,
        form: crate::AnswerForm::Plain,
    })
}

/// Input (cached included, as genai normalizes every vendor), output and cached tokens.
fn tokens(usage: Option<&Usage>) -> (Option<u64>, Option<u64>, Option<u64>) {
    let count = |n: Option<i32>| n.and_then(|n| u64::try_from(n).ok());
    let Some(usage) = usage else {
        return (None, None, None);
    };
    let cached = usage
        .prompt_tokens_details
        .as_ref()
        .and_then(|d| count(d.cached_tokens));
    (
        count(usage.prompt_tokens),
        count(usage.completion_tokens),
        cached,
    )
}

fn lock(log: &Mutex<FrameLog>) -> MutexGuard<'_, FrameLog> {
    log.lock().unwrap_or_else(PoisonError::into_inner)
}
