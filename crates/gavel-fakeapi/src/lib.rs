//! A local fake of the model vendors' HTTP APIs and of GitHub's REST API, for tests only.
//!
//! gavel's end-to-end tests drive the real agent CLIs (Claude Code, Gemini CLI, Codex) and its
//! own HTTP providers, which cannot reach the vendors here. This server speaks their real wire
//! formats on 127.0.0.1: Anthropic Messages (`/v1/messages`, JSON and SSE), Gemini
//! (`:generateContent`, `:streamGenerateContent?alt=sse`, `:countTokens`), OpenAI Responses
//! (`/v1/responses`, SSE) and Chat Completions (`/v1/chat/completions`, JSON and SSE). Each
//! answer comes from a queue of [`Reply`] values, including the faults the providers must
//! handle: 429 with `retry-after`, 5xx, 401, a stream that stalls, a stream cut mid-message,
//! malformed JSON, an answer from a different model than the one asked for, and the vendors'
//! own "quota exhausted" answers. A reply may be a tool-use turn ([`Reply::tool_use`]): the
//! model calls the client's tools (Anthropic `tool_use` blocks, Responses `function_call`
//! items, Gemini `functionCall` parts, Chat Completions `tool_calls`), so a real agent CLI runs
//! them and sends the results back in its next request, answered by the next reply. A request
//! that asks for structured output (OpenAI's `text.format` or `response_format` JSON schema,
//! Gemini's `responseJsonSchema`, an Anthropic forced tool) is answered the vendor's way, and
//! [`FakeServer::refuse_structured_output`] makes an API refuse it with the vendor's real 400.
//! A reply or a standing [`Rule`] may apply only to requests
//! made with one API key, so credential rotation can be tested. Every request is recorded for
//! assertions.
//!
//! The same server fakes GitHub's REST API (version 2022-11-28) for gavel's issue filing: paths
//! under `/user`, `/repos/` and `/rate_limit`, at the root as on api.github.com or under
//! `/api/v3` as on GitHub Enterprise Server. [`FakeServer::github`] gives a [`GitHub`] handle
//! that registers tokens (classic, with scopes, or fine-grained) and repositories
//! ([`FakeRepo`]: private, issues on or off, archived, the users' [`Permission`]), adds labels,
//! issues and pull requests, and reads back what clients made ([`FakeLabel`], [`FakeIssue`]).
//! It answers in GitHub's wire format: its JSON shapes and error bodies (401 "Bad
//! credentials", 404, 410 for disabled issues, 422 "Validation Failed" with `errors`), the
//! `x-ratelimit-*` headers counting down per token, `x-oauth-scopes`, and `link` headers for
//! pagination. A [`Fault`] makes matching requests fail as GitHub can ([`FaultKind`]): an error
//! status, the primary or a secondary rate limit, a reply lost after the work was done (the
//! connection closes without an answer), or a slow reply.
//!
//! The HTTP layer is hyper's HTTP/1.1 server (`hyper` 1.x with `hyper-util`'s tokio glue) on a
//! current-thread tokio runtime that runs on a thread of its own, so a [`FakeServer`] is a plain
//! handle usable from sync and async tests alike. hyper parses the requests (keep-alive,
//! `content-length` or chunked bodies); the fake only decides the answers. JSON answers go out
//! with `content-length`, event streams chunked and flushed event by event; a stall holds the
//! connection open without sending, and a cut ends the body with an error, which makes hyper
//! close the connection without the terminating chunk.

mod answer;
mod body;
mod errors;
mod formats;
mod github;
mod npm;
mod reply;
mod server;
mod structured;

pub use github::{FakeIssue, FakeLabel, FakeRepo, Fault, FaultKind, GitHub, Permission};
pub use npm::{npm_tool_bin, tools_cache};
pub use reply::{Reply, Rule, ToolCall};
pub use server::{Api, FakeServer, Recorded};

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_structured;
#[cfg(test)]
mod tests_tools;
