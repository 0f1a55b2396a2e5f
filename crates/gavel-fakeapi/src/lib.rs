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

mod formats;
mod http;
mod reply;
mod server;

pub use reply::{Reply, Rule};
pub use server::{Api, FakeServer, Recorded};

#[cfg(test)]
mod tests;
