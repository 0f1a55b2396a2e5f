//! The child-process runner the agent-CLI providers use, now shared by every workflow in
//! `gavel-exec` (agents, test commands): re-exported here so `gavel_llm::process` and
//! `crate::process` keep working.

pub use gavel_exec::process::*;
