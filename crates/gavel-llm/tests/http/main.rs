//! gavel-llm's integration tests: the HTTP API providers against `gavel-fakeapi`, a local fake
//! that speaks the vendors' real wire formats and faults.
//!
//! One binary (`autotests = false`), helpers in `util`. `scenarios` runs the same behaviours
//! for each of `anthropic`, `google`, `openai` and `openai-compatible`; `config` covers keys,
//! base URLs, limits and routing; `rotation` covers several keys per provider, rotated when
//! one's quota is exhausted; `structured` covers structured output and its refusal. Every test
//! owns its fake server and a hermetic environment (passed to the provider, never read from
//! the process), so tests run in parallel.

mod config;
mod rotation;
mod scenarios;
mod structured;
mod util;
