//! Feedback while a model call runs: a spinner with role, provider, elapsed time, tokens so far
//! and the attempt number on a terminal (drawn by indicatif, which redraws in place and clears
//! itself), and a plain status line every 10 seconds otherwise (logs and CI keep a readable
//! record). Off a terminal one thread per display, started at its first call, writes the
//! status lines of all its calls (a command drives one workflow, which has one display). It
//! is never woken for a call: between calls it sleeps at most 10 seconds at a time, so it
//! looks in within a call's first 10 seconds and then sleeps exactly until the line is due.
//! A run of short calls (a scripted provider's, a cached answer) costs no thread switch each.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
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
    /// The thread, for tests that check there is one.
    #[cfg(test)]
    thread: std::thread::Thread,
}

/// Where the status lines go.
type Sink = Box<dyn Fn(&str) + Send>;

impl Plain {
    fn start() -> Self {
        Self::start_with(
            PLAIN_EVERY,
            Box::new(|line| {
                let _ = writeln!(std::io::stderr().lock(), "{line}");
            }),
        )
    }

    fn start_with(every: Duration, sink: Sink) -> Self {
        let watched: Arc<Mutex<Option<Watched>>> = Arc::default();
        let w = Arc::clone(&watched);
        let _handle = thread::spawn(move || plain_status_lines(&w, every, &sink));
        Self {
            watched,
            #[cfg(test)]
            thread: _handle.thread().clone(),
        }
    }

    fn watched(&self) -> std::sync::MutexGuard<'_, Option<Watched>> {
        self.watched
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The plain status-line thread: a line every `every` ([`PLAIN_EVERY`]) while a call runs;
/// between calls it looks in every `every`, so it is never later than a new call's first line
/// is due. Lines are written under the lock [`Spinner::call_finished`] takes, so none comes
/// after its call finished.
fn plain_status_lines(watched: &Mutex<Option<Watched>>, every: Duration, sink: &Sink) {
    loop {
        let wait = {
            let mut guard = watched
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            guard.as_mut().map(|w| {
                if w.last.elapsed() >= every {
                    w.last = Instant::now();
                    sink(&format!(
                        "    {}: still running ({:.0}s, {})",
                        w.label,
                        w.started.elapsed().as_secs_f64(),
                        status(
                            w.shared.tokens.load(Ordering::SeqCst),
                            w.shared.attempt.load(Ordering::SeqCst)
                        )
                    ));
                }
                every.saturating_sub(w.last.elapsed())
            })
        };
        thread::park_timeout(wait.unwrap_or(every).max(Duration::from_millis(1)));
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
            // Not woken: it looks in within PLAIN_EVERY (see `plain_status_lines`).
            *plain.watched() = Some(Watched {
                shared: Arc::clone(&shared),
                label,
                started: now,
                last: now,
            });
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

    #[test]
    fn a_call_gets_its_line_on_time_without_waking_the_thread() {
        let every = Duration::from_millis(300);
        let lines: Arc<Mutex<Vec<(Instant, String)>>> = Arc::default();
        let seen = Arc::clone(&lines);
        let plain = Plain::start_with(
            every,
            Box::new(move |line| {
                seen.lock()
                    .expect("lines")
                    .push((Instant::now(), line.to_owned()));
            }),
        );
        // The thread is idle, partway through a wait of its own, when the call starts; no one
        // wakes it.
        thread::sleep(every / 2);
        let started = Instant::now();
        *plain.watched() = Some(Watched {
            shared: Arc::new(Shared::default()),
            label: "drafter scripted:a".to_owned(),
            started,
            last: started,
        });
        let deadline = started + Duration::from_secs(20);
        while lines.lock().expect("lines").is_empty() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(10));
        }
        *plain.watched() = None;
        let lines = lines.lock().expect("lines");
        let (at, line) = lines.first().expect("a status line came");
        assert!(*at >= started + every, "not before it was due");
        assert!(line.contains("drafter scripted:a: still running"), "{line}");
    }
}
