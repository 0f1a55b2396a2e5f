//! Feedback while a model call runs: a spinner with role, provider, elapsed time, tokens so far
//! and the attempt number on a terminal (drawn by indicatif, which redraws in place and clears
//! itself), and a plain status line every 10 seconds otherwise (logs and CI keep a readable
//! record). Off a terminal one thread per display, started at its first call and parked
//! between calls, writes the status lines of all its calls (a command drives one workflow,
//! which has one display).

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

use gavel_llm::{CallProgress, Role};
use gavel_workflows::caller::CallObserver;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::ui::sanitize;

#[derive(Default)]
struct Shared {
    tokens: AtomicU64,
    attempt: AtomicU32,
}

/// How often a call off a terminal gets a status line.
const PLAIN_EVERY: Duration = Duration::from_secs(10);

/// The call on display.
struct Active {
    shared: Arc<Shared>,
    /// The spinner, on a terminal.
    bar: Option<ProgressBar>,
}

/// The call the plain status-line thread reports on.
struct Watched {
    shared: Arc<Shared>,
    label: String,
    started: Instant,
    last: Instant,
}

/// The plain status-line thread and the call it watches (`None` between calls).
struct Plain {
    watched: Arc<Mutex<Option<Watched>>>,
    thread: Thread,
}

impl Plain {
    fn start() -> Self {
        let watched: Arc<Mutex<Option<Watched>>> = Arc::default();
        let w = Arc::clone(&watched);
        let thread = thread::spawn(move || plain_status_lines(&w))
            .thread()
            .clone();
        Self { watched, thread }
    }

    fn watched(&self) -> std::sync::MutexGuard<'_, Option<Watched>> {
        self.watched
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The plain status-line thread: a line every [`PLAIN_EVERY`] while a call runs, parked
/// otherwise. Lines are written under the lock [`Spinner::call_finished`] takes, so none comes
/// after its call finished.
fn plain_status_lines(watched: &Mutex<Option<Watched>>) {
    loop {
        let wait = {
            let mut guard = watched
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            guard.as_mut().map(|w| {
                if w.last.elapsed() >= PLAIN_EVERY {
                    w.last = Instant::now();
                    let _ = writeln!(
                        std::io::stderr().lock(),
                        "    {}: still running ({:.0}s, {})",
                        w.label,
                        w.started.elapsed().as_secs_f64(),
                        status(
                            w.shared.tokens.load(Ordering::SeqCst),
                            w.shared.attempt.load(Ordering::SeqCst)
                        )
                    );
                }
                PLAIN_EVERY.saturating_sub(w.last.elapsed())
            })
        };
        match wait {
            Some(d) => thread::park_timeout(d.max(Duration::from_millis(1))),
            None => thread::park(),
        }
    }
}

/// The live display of model calls (one at a time).
#[derive(Default)]
pub struct Spinner {
    current: Mutex<Option<Active>>,
    plain: OnceLock<Plain>,
    /// Plain status lines even on a terminal (tests, which may run on one).
    #[cfg(test)]
    plain_only: bool,
}

impl Spinner {
    fn with_active(&self, f: impl FnOnce(&Active)) {
        let cur = self
            .current
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(active) = cur.as_ref() {
            f(active);
        }
    }
}

/// `N tokens` and, after a retry, `· attempt K`.
fn status(tokens: u64, attempt: u32) -> String {
    if attempt > 1 {
        format!("{tokens} tokens · attempt {attempt}")
    } else {
        format!("{tokens} tokens")
    }
}

impl CallObserver for Spinner {
    fn call_started(&self, role: Role, provider: &str) {
        self.call_finished();
        let shared = Arc::new(Shared {
            attempt: AtomicU32::new(1),
            ..Shared::default()
        });
        let label = format!("{role} {}", sanitize(provider));
        let on_terminal = std::io::stderr().is_terminal();
        #[cfg(test)]
        let on_terminal = on_terminal && !self.plain_only;
        let active = if on_terminal {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template("{spinner} {prefix} · {elapsed} · {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner());
            bar.set_style(style);
            bar.set_prefix(label);
            bar.set_message(status(0, 1));
            bar.enable_steady_tick(Duration::from_millis(100));
            Active {
                shared,
                bar: Some(bar),
            }
        } else {
            let plain = self.plain.get_or_init(Plain::start);
            let now = Instant::now();
            *plain.watched() = Some(Watched {
                shared: Arc::clone(&shared),
                label,
                started: now,
                last: now,
            });
            plain.thread.unpark();
            Active { shared, bar: None }
        };
        *self
            .current
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(active);
    }

    fn call_progress(&self, p: CallProgress) {
        // Tool uses reach the timeline with the answer; the spinner shows tokens.
        if let CallProgress::Tokens {
            output_tokens,
            attempt,
        } = p
        {
            self.with_active(|a| {
                a.shared.tokens.store(output_tokens, Ordering::SeqCst);
                a.shared.attempt.store(attempt, Ordering::SeqCst);
                if let Some(bar) = &a.bar {
                    bar.set_message(status(output_tokens, attempt));
                }
            });
        }
    }

    fn call_warning(&self, role: Role, warning: &str) {
        let line = format!(
            "warning: the {role} call was answered by another model than requested: {}",
            sanitize(warning)
        );
        let _ = writeln!(std::io::stderr().lock(), "{line}");
    }

    fn call_finished(&self) {
        let active = self
            .current
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        let Some(active) = active else {
            return;
        };
        if let Some(bar) = active.bar {
            bar.finish_and_clear();
        }
        if let Some(plain) = self.plain.get() {
            *plain.watched() = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_status_thread_serves_every_call_and_forgets_a_finished_one() {
        let spinner = Spinner {
            plain_only: true,
            ..Spinner::default()
        };
        spinner.call_started(Role::DRAFTER, "scripted:a");
        let first = spinner.plain.get().map(|p| p.thread.id());
        assert!(spinner.plain.get().is_some_and(|p| p.watched().is_some()));
        spinner.call_finished();
        assert!(spinner.plain.get().is_some_and(|p| p.watched().is_none()));
        spinner.call_started(Role::REVIEWER, "scripted:b");
        assert_eq!(spinner.plain.get().map(|p| p.thread.id()), first);
        assert_eq!(
            spinner
                .plain
                .get()
                .and_then(|p| p.watched().as_ref().map(|w| w.label.clone())),
            Some("reviewer scripted:b".to_owned())
        );
        spinner.call_finished();
    }
}
