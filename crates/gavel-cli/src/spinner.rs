//! Feedback while a model call runs: a spinner with role, provider, elapsed time, tokens so far
//! and the attempt number on a terminal (drawn by indicatif, which redraws in place and clears
//! itself), and a plain status line every 10 seconds otherwise (logs and CI keep a readable
//! record).

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use gavel_llm::{CallProgress, Role};
use gavel_workflows::caller::CallObserver;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::ui::sanitize;

#[derive(Default)]
struct Shared {
    tokens: AtomicU64,
    attempt: AtomicU32,
    done: AtomicBool,
}

/// The call on display.
struct Active {
    shared: Arc<Shared>,
    /// The spinner, on a terminal.
    bar: Option<ProgressBar>,
    /// The plain status-line writer, elsewhere.
    plain: Option<JoinHandle<()>>,
}

/// The live display of model calls (one at a time).
#[derive(Default)]
pub struct Spinner {
    current: Mutex<Option<Active>>,
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
        let active = if std::io::stderr().is_terminal() {
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
                plain: None,
            }
        } else {
            let s = Arc::clone(&shared);
            let plain = thread::spawn(move || {
                let started = Instant::now();
                let mut last = Instant::now();
                while !s.done.load(Ordering::SeqCst) {
                    if last.elapsed() >= Duration::from_secs(10) {
                        last = Instant::now();
                        let _ = writeln!(
                            std::io::stderr().lock(),
                            "    {label}: still running ({:.0}s, {})",
                            started.elapsed().as_secs_f64(),
                            status(
                                s.tokens.load(Ordering::SeqCst),
                                s.attempt.load(Ordering::SeqCst)
                            )
                        );
                    }
                    thread::park_timeout(Duration::from_millis(100));
                }
            });
            Active {
                shared,
                bar: None,
                plain: Some(plain),
            }
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
        active.shared.done.store(true, Ordering::SeqCst);
        if let Some(bar) = active.bar {
            bar.finish_and_clear();
        }
        if let Some(h) = active.plain {
            h.thread().unpark();
            let _ = h.join();
        }
    }
}
