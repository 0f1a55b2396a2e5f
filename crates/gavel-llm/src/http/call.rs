//! One streamed call to an HTTP API, from request to [`Response`] or [`ProviderError`].
//!
//! Kept apart from the provider so the async part is one function: it sends the prompt, reads
//! the stream under the total deadline, reports progress as text arrives, and accepts the answer
//! only when the vendor's final event was seen. It runs as a task on the shared runtime; the
//! caller's thread waits for it and aborts it on cancellation (see [`super::HttpProvider`]).
//! With a schema in the plan it asks for structured output (`schema.rs`), and a failure says
//! whether the service refused that ([`Failure::refused_schema`]).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures_util::StreamExt;
use genai::chat::{ChatOptions, ChatRequest, ChatStreamEvent, Usage};
use genai::resolver::{AuthData, Endpoint};
use genai::{ModelIden, ModelSpec, ServiceTarget};
use serde_json::Value;

use super::errors::{self, Ctx};
use super::schema;
use super::wire::{Api, FrameLog};
use crate::provider::{AnswerForm, BilledAttempt, OutputSchema, ProviderError, Response};

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
    /// The schema to ask the answer to follow (structured output); `None` asks plain text.
    pub schema: Option<OutputSchema>,
}

/// Why an attempt produced no answer.
#[derive(Debug)]
pub(crate) struct Failure {
    pub error: ProviderError,
    /// The service refused the structured-output request (an HTTP 400 naming it): the same
    /// call asked in plain text may be answered.
    pub refused_schema: bool,
}

impl From<ProviderError> for Failure {
    fn from(error: ProviderError) -> Self {
        Self {
            error,
            refused_schema: false,
        }
    }
}

/// Makes exactly one attempt, calling `progress` with the estimated output tokens so far, and
/// `billed` with an attempt that failed after the service reported its usage. The answer's
/// [`Response::form`] is [`AnswerForm::Schema`] when the plan has a schema, else `Plain`.
pub(crate) async fn run(
    client: genai::Client,
    plan: Plan,
    prompt: String,
    max_output_tokens: u32,
    progress: impl Fn(u64),
    billed: impl Fn(BilledAttempt),
) -> Result<Response, Failure> {
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
    let (chat, options, forced_tool) = match &plan.schema {
        Some(s) => schema::ask(wire, s, chat, options),
        None => (chat, options, None),
    };
    // A genai error, sorted, and whether it is the service refusing structured output.
    let fail = |e: &genai::Error| Failure {
        error: errors::classify(e, ctx),
        refused_schema: plan.schema.is_some()
            && errors::status_and_body(e)
                .is_some_and(|(status, body)| schema::refusal(status, body)),
    };

    let total = tokio::time::sleep(plan.total_timeout);
    tokio::pin!(total);
    let mut stream = client
        .exec_chat_stream(ModelSpec::Target(target), chat, Some(&options))
        .await
        .map_err(|e| fail(&e))?
        .stream;

    let mut text = String::new();
    let mut chars = 0u64;
    // The forced tool's input so far (Anthropic's structured answer), as the JSON text streamed.
    let mut tool_input: Option<String> = None;
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
                ).into());
            }
            event = stream.next() => match event {
                Some(Ok(ChatStreamEvent::Chunk(chunk))) => {
                    chars += chunk.content.chars().count() as u64;
                    text.push_str(&chunk.content);
                    progress(chars.div_ceil(4));
                }
                Some(Ok(ChatStreamEvent::ToolCallChunk(chunk)))
                    if forced_tool.as_deref() == Some(chunk.tool_call.fn_name.as_str()) =>
                {
                    // Each chunk carries the input so far.
                    let input = match chunk.tool_call.fn_arguments {
                        Value::String(input) => input,
                        other => other.to_string(),
                    };
                    let so_far = chars + input.chars().count() as u64;
                    tool_input = Some(input);
                    progress(so_far.div_ceil(4));
                }
                Some(Ok(ChatStreamEvent::End(end))) => {
                    usage = end.captured_usage;
                    break;
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(fail(&e)),
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
        return Err(failed(errors::from_error_event(body, ctx)).into());
    }
    if !log.finished {
        let message = match &log.malformed {
            Some(data) => errors::malformed(data),
            None => "the stream ended before the service's final event: the answer is incomplete"
                .to_owned(),
        };
        return Err(failed(ctx.transient(message, None)).into());
    }
    let (text, form) = match (&plan.schema, tool_input) {
        // The tool's input is the answer (a model that also wrote text wrote it beside it).
        (Some(_), Some(input)) => (input, AnswerForm::Schema),
        (Some(_), None) => (text, AnswerForm::Schema),
        (None, _) => (text, AnswerForm::Plain),
    };
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
        form,
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
