//! `gavel-bench`: what `bench/run` measures inside one process.
//!
//! - `gavel-bench steps N --db PATH | --db-url URL`: drives a workflow of N node steps through
//!   the real engine and the SQLite (or PostgreSQL) store (every step checkpointed durably, in one transaction, before the next
//!   starts) and prints `ms_per_step=X` (store opening excluded).
//! - `gavel-bench tokens FILE`: counts FILE's tokens with gavel's o200k counter and prints
//!   `tokens=N ms=X load_ms=Y` (`ms` counts only; `load_ms` is the one-time vocabulary load).
//! - `gavel-bench history N --repo DIR [--db-url URL --project P]`: gives a repository the
//!   history of N finished runs (in its store and its working tree) for `bench/history.sh`.
//! - `gavel-bench context PATH... [--repo DIR]`: times the context validator on PATH and prints
//!   `files=N passed=P refused=R ms=X files_per_s=Y` for `bench/real-size.sh`.

mod context;
mod history;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use gavel_core::{Engine, FixedClock, LockInfo, NodeCtx, NodeError, Outcome, Transition, Workflow};
use gavel_store::SqliteStore;
use serde::{Deserialize, Serialize};

/// A loop of `steps` nodes, each changing the state a little (like a draft/review round).
struct Loop {
    steps: u64,
}

#[derive(Serialize, Deserialize)]
struct State {
    step: u64,
    draft: String,
    verdicts: Vec<String>,
}

impl Workflow for Loop {
    type State = State;

    fn name(&self) -> &'static str {
        "bench-loop"
    }

    fn run_node(
        &self,
        node: &str,
        s: &mut State,
        _cx: &mut NodeCtx<'_>,
    ) -> Result<Transition, NodeError> {
        s.step += 1;
        if s.step >= self.steps {
            return Ok(Transition::Done {
                summary: format!("{} steps", s.step),
            });
        }
        match node {
            "draft" => {
                s.draft = format!("# Draft {}\n\nbody", s.step);
                Ok(Transition::Goto("review".into()))
            }
            _ => {
                s.verdicts.push(format!("verdict {}", s.step));
                Ok(Transition::Goto("draft".into()))
            }
        }
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(line) => {
            let _ = writeln!(std::io::stdout(), "{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "gavel-bench: {e}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<String, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("steps") => {
            let n: u64 = args
                .get(1)
                .and_then(|v| v.parse().ok())
                .ok_or("steps N --db PATH")?;
            let flag = |name: &str| {
                args.iter()
                    .position(|a| a == name)
                    .and_then(|i| args.get(i + 1))
            };
            let store: Box<dyn gavel_core::Store> = match (flag("--db"), flag("--db-url")) {
                (Some(db), _) => {
                    Box::new(SqliteStore::open(&PathBuf::from(db)).map_err(|e| e.to_string())?)
                }
                (None, Some(url)) => {
                    Box::new(gavel_store::PgStore::open(url).map_err(|e| e.to_string())?)
                }
                (None, None) => return Err("steps N --db PATH | --db-url URL".into()),
            };
            let wf = Loop { steps: n };
            let ts: jiff::Timestamp = "2026-01-01T00:00:00Z"
                .parse()
                .map_err(|e: jiff::Error| e.to_string())?;
            let clock = FixedClock(ts);
            let holder = LockInfo {
                pid: std::process::id(),
                host: String::new(),
                command: "gavel-bench".into(),
                since: String::new(),
            };
            let engine = Engine::new(store.as_ref(), &wf, &clock, holder);
            let state = State {
                step: 0,
                draft: String::new(),
                verdicts: Vec::new(),
            };
            let started = Instant::now();
            let run = engine
                .start("bench", &state, "draft")
                .map_err(|e| e.to_string())?;
            let outcome = engine.drive(run, None).map_err(|e| e.to_string())?;
            let elapsed = started.elapsed();
            if !matches!(outcome, Outcome::Done { .. }) {
                return Err(format!("unexpected outcome {outcome:?}"));
            }
            Ok(format!(
                "ms_per_step={:.4} steps={n} total_ms={:.1}",
                elapsed.as_secs_f64() * 1000.0 / n as f64,
                elapsed.as_secs_f64() * 1000.0
            ))
        }
        Some("tokens") => {
            let file = args.get(1).ok_or("tokens FILE")?;
            let text = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
            let load = Instant::now();
            let _ = gavel_llm::tokens::count("warm up");
            let load_ms = load.elapsed().as_secs_f64() * 1000.0;
            let started = Instant::now();
            let n = gavel_llm::tokens::count(&text);
            Ok(format!(
                "tokens={n} ms={:.2} load_ms={load_ms:.1}",
                started.elapsed().as_secs_f64() * 1000.0
            ))
        }
        Some("history") => history::run(&args),
        Some("context") => context::run(&args),
        _ => Err(
            "usage: gavel-bench steps N --db PATH | gavel-bench tokens FILE | gavel-bench history N --repo DIR [--db-url URL --project P] | gavel-bench context PATH... [--repo DIR]"
                .into(),
        ),
    }
}
