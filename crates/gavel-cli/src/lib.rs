//! The `gavel` command line: arguments, settings, terminal I/O, and one file per subcommand.
//!
//! This is the only crate that prints, prompts or opens editors. It resolves clap arguments,
//! `gavel.toml` and the environment into [`settings::Settings`], wires the engine, store,
//! providers and tracker together, and maps every outcome to an exit code ([`exit::Exit`]).

pub(crate) mod commands;
pub(crate) mod context;
pub(crate) mod driver;
pub(crate) mod editor;
pub(crate) mod error;
pub(crate) mod exit;
pub(crate) mod kinds;
pub(crate) use gavel_report::ledger;
pub(crate) mod logging;
pub mod reference;
pub(crate) mod settings;
pub(crate) mod spinner;
pub(crate) mod store;
pub(crate) mod tracker;
pub(crate) mod ui;

use std::process::ExitCode;

use crate::error::CliError;
use crate::exit::Exit;

/// Parses the command line, runs the command, prints any error, and returns the exit code.
pub fn main_entry() -> ExitCode {
    let matches = match commands::command().try_get_matches() {
        Ok(matches) => matches,
        Err(e) => {
            let code = if e.use_stderr() {
                Exit::Usage
            } else {
                Exit::Success
            };
            let _ = e.print();
            return code.into();
        }
    };
    match commands::run_matches(&matches) {
        Ok(exit) => exit.into(),
        Err(err) => {
            report(&err);
            err.exit.into()
        }
    }
}

fn report(err: &CliError) {
    let ui = ui::Ui::detect();
    ui.info(&format!("error: {}", ui::sanitize(&err.message)));
    for cause in &err.causes {
        ui.info(&format!("caused by: {}", ui::sanitize(cause)));
    }
    for hint in &err.hints {
        ui.info(&format!("hint: {hint}"));
    }
}
