//! A local fake of the model vendors' HTTP APIs, for tests only.
//!
//! gavel's end-to-end tests drive the real agent CLIs (Claude Code, Gemini CLI, Codex) and its
//! own HTTP providers, which cannot reach the vendors here. This server speaks their real wire
//! formats on 127.0.0.1: Anthropic Messages (`/v1/messages`, JSON and SSE), Gemini
//! (`:generateContent`, `:streamGenerateContent?alt=sse`, `:countTokens`), OpenAI Responses
//! (`/v1/responses`, SSE) and Chat Completions (`/v1/chat/completions`, JSON and SSE). Each
//! answer comes from a queue of [`Reply`] values, including the faults the providers must
//! handle: 429 with `retry-after`, 5xx, 401, a stream that stalls, a stream cut mid-message,
//! malformed JSON, an answer from a different model than the one asked for, and the vendors'
//! own "quota exhausted" answers. A reply or a standing [`Rule`] may apply only to requests
//! made with one API key, so credential rotation can be tested. Every request is recorded for
//! assertions.
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
mod formats;
mod github;
mod reply;
mod server;

pub use github::{FakeIssue, FakeLabel, FakeRepo, Fault, FaultKind, GitHub, Permission};
pub use reply::{Reply, Rule};
pub use server::{Api, FakeServer, Recorded};

#[cfg(test)]
mod tests;
