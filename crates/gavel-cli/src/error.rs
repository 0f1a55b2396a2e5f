//! The one error type the CLI shows to people: a message, its causes, hints, and an exit code.
//!
//! Library errors (`thiserror` enums from the other crates) are converted here, classified into
//! an [`Exit`] code, and given hints that say what to run next.

use std::error::Error as StdError;

use gavel_core::{EngineError, StoreError};
use gavel_workflows::brief::BriefError;

use crate::exit::Exit;

/// A failure as shown to a person.
#[derive(Debug)]
pub struct CliError {
    pub exit: Exit,
    pub message: String,
    pub causes: Vec<String>,
    pub hints: Vec<String>,
}

impl CliError {
    /// A failure with exit code 1.
    pub fn error(message: impl Into<String>) -> Self {
        Self {
            exit: Exit::Error,
            message: message.into(),
            causes: Vec::new(),
            hints: Vec::new(),
        }
    }

    /// A usage error (exit code 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Self {
            exit: Exit::Usage,
            ..Self::error(message)
        }
    }

    /// A failure built from an error and its `source()` chain.
    pub fn from_error(err: &(dyn StdError + 'static)) -> Self {
        let mut e = Self::error(err.to_string());
        let mut source = err.source();
        while let Some(s) = source {
            e.causes.push(s.to_string());
            source = s.source();
        }
        e
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(hint.into());
        self
    }

    pub fn with_exit(mut self, exit: Exit) -> Self {
        self.exit = exit;
        self
    }
}

impl From<StoreError> for CliError {
    fn from(e: StoreError) -> Self {
        let base = Self::from_error(&e);
        match e {
            StoreError::UnknownRun(_) => base.hint("`gavel runs` lists the runs in this store"),
            StoreError::Locked { .. } => base.hint("wait for that process to finish, or stop it; a killed process releases the lock"),
            StoreError::Corrupt { .. } => base.hint("move the file aside (or point --state-dir elsewhere) to start a fresh store; gavel did not change it"),
            _ => base,
        }
    }
}

impl From<EngineError> for CliError {
    fn from(e: EngineError) -> Self {
        match e {
            EngineError::Store(s) => s.into(),
            EngineError::InvalidChoice { .. }
            | EngineError::WrongGate { .. }
            | EngineError::NotWaiting { .. }
            | EngineError::AlreadyAnswered { .. } => Self::from_error(&e).with_exit(Exit::Usage),
            EngineError::Finished { run, .. } => {
                Self::from_error(&e).hint(format!("`gavel show {run}` shows what it did"))
            }
            EngineError::UnknownStatus { run, .. } => Self::from_error(&e).hint(format!(
                "use the gavel that wrote it; `gavel show {run}` shows its timeline"
            )),
            other => Self::from_error(&other),
        }
    }
}

impl From<BriefError> for CliError {
    fn from(e: BriefError) -> Self {
        let base = Self::from_error(&e);
        match e {
            BriefError::BadSlug { .. } => base.hint("rename the brief or pass --slug NAME"),
            BriefError::NotFound(_) => {
                base.hint("pass the path of a Markdown file with your notes, or use --select")
            }
            _ => base,
        }
    }
}
