//! Finding programs on `PATH`, for the agent CLIs' pre-flight checks and `gavel doctor`
//! ([`crate::tools::find_on_path`]) and for the editor (re-exported as `gavel_workflows::which`).
//! The lookup itself is gavel's one, in `gavel-exec` (`process/lookup.rs`), which the git
//! runner uses too.

pub use gavel_exec::process::find_program;
