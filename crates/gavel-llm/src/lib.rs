//! gavel's model providers.
//!
//! Everything that talks to (or pretends to be) a language model lives here, behind the
//! [`Provider`] trait: parsing provider strings ([`ProviderSpec`]), building providers
//! ([`build`]), the offline [`ScriptedProvider`] used by tests and `gavel demo`, and clean-up of
//! answers ([`strip_preamble`]). The crate knows nothing about workflows or the engine; it returns
//! values and errors and never prints.

pub mod cli;
pub mod credentials;
pub mod factory;
pub mod http;
pub mod price;
pub mod process;
pub mod profile;
pub mod provider;
pub mod retry;
pub mod scripted;
pub mod spec;
pub mod text;
pub mod tokens;
pub mod tools;
pub mod verify;
pub mod which;

pub use cli::Login;
pub use credentials::RotationState;
pub use factory::{ProviderSettings, build_with};
pub use http::{HttpProvider, HttpSettings};
pub use price::{Price, PriceTable};
pub use profile::{AgentProfile, McpServer, ProfileError, Tools};
pub use provider::{
    AnswerForm, BilledAttempt, Call, CallProgress, DEFAULT_MAX_OUTPUT_TOKENS, OutputSchema,
    Provider, ProviderError, Request, Response, Role, ToolUse, UNAVAILABLE_HINT,
    UnavailableProvider, build,
};
pub use retry::{RetryPolicy, Retrying};
pub use scripted::{
    CallEvent, CallLogEntry, CallLogError, ScriptError, ScriptedProvider, call_log_path,
    prompt_record_path, read_call_log,
};
pub use spec::{ProviderSpec, SpecError, VALID_FORMS};
pub use text::{prose_lines, strip_preamble, title};
