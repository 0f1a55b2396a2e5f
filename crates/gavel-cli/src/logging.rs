//! A log file per run: what the engine, the model caller and the git and process runners did,
//! with timings, for a person (or a bug report) to read after the fact.
//!
//! The terminal shows the story of a run; the log keeps the detail: `.gavel/logs/run-N.log`
//! under the state folder, appended to by every process that drives the run. `GAVEL_LOG`
//! sets the level (`error`, `warn`, `info` (the default), `debug`, `trace`). Logging never
//! fails a run: a log that cannot be opened is skipped.

use std::fs::OpenOptions;
use std::path::Path;
use std::sync::{Mutex, OnceLock};

use gavel_core::RunId;

/// Sends this process's tracing events to the run's log file (the first run this process
/// drives; a process drives one run).
pub(crate) fn to_run_log(state_dir: &Path, run: RunId) {
    static SET: OnceLock<()> = OnceLock::new();
    SET.get_or_init(|| {
        let dir = state_dir.join("logs");
        if std::fs::create_dir_all(&dir).is_err() {
            return;
        }
        let Ok(file) = OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join(format!("run-{run}.log")))
        else {
            return;
        };
        let level = std::env::var("GAVEL_LOG")
            .ok()
            .and_then(|v| v.parse::<tracing::Level>().ok())
            .unwrap_or(tracing::Level::INFO);
        let subscriber = tracing_subscriber::fmt()
            .with_writer(Mutex::new(file))
            .with_ansi(false)
            .with_max_level(level)
            .finish();
        let _ = tracing::subscriber::set_global_default(subscriber);
    });
}
