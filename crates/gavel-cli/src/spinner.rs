//! Feedback while a model call runs: a spinner with role, provider, elapsed time, tokens so far
//! and the attempt number on a terminal; a plain status line every 10 seconds otherwise.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use gavel_llm::{CallProgress, Role};
use gavel_workflows::caller::CallObserver;

use crate::ui::sanitize;

#[derive(Default)]
struct Shared {
    tokens: AtomicU64,
    attempt: AtomicU32,
    done: AtomicBool,
}

/// The live display of model calls (one at a time).
#[derive(Default)]
pub struct Spinner {
    current: Mutex<(Arc<Shared>, Option<JoinHandle<()>>)>,
}

impl Spinner {
    fn shared(&self) -> Arc<Shared> {
        Arc::clone(
            &self
                .current
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .0,
        )
    }
}

const FRAMES: &[char] = &['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

impl CallObserver for Spinner {
    fn call_started(&self, role: Role, provider: &str) {
        self.call_finished();
        let shared = Arc::new(Shared {
            attempt: AtomicU32::new(1),
            ..Shared::default()
        });
        let label = format!("{role} {}", sanitize(provider));
        let tty = std::io::stderr().is_terminal();
        let s = Arc::clone(&shared);
        let handle = thread::spawn(move || {
            let started = Instant::now();
            let mut frame = 0usize;
            let mut last_plain = Instant::now();
            while !s.done.load(Ordering::SeqCst) {
                let secs = started.elapsed().as_secs_f64();
                let tokens = s.tokens.load(Ordering::SeqCst);
                let attempt = s.attempt.load(Ordering::SeqCst);
                let retry = if attempt > 1 {
                    format!(" · attempt {attempt}")
                } else {
                    String::new()
                };
                if tty {
                    let mut err = std::io::stderr().lock();
                    let _ = write!(
                        err,
                        "\r\x1b[2K{} {label} · {secs:.1}s · {tokens} tokens{retry}",
                        FRAMES[frame % FRAMES.len()]
                    );
                    let _ = err.flush();
                    frame += 1;
                } else if last_plain.elapsed() >= Duration::from_secs(10) {
                    last_plain = Instant::now();
                    let _ = writeln!(
                        std::io::stderr().lock(),
                        "    {label}: still running ({secs:.0}s, {tokens} tokens{retry})"
                    );
                }
                thread::park_timeout(Duration::from_millis(100));
            }
            if tty {
                let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
            }
        });
        *self
            .current
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = (shared, Some(handle));
    }

    fn call_progress(&self, p: CallProgress) {
        // Tool uses reach the timeline with the answer; the spinner shows tokens.
        if let CallProgress::Tokens {
            output_tokens,
            attempt,
        } = p
        {
            let s = self.shared();
            s.tokens.store(output_tokens, Ordering::SeqCst);
            s.attempt.store(attempt, Ordering::SeqCst);
        }
    }

    fn call_warning(&self, role: Role, warning: &str) {
        let _ = writeln!(
            std::io::stderr().lock(),
            "warning: the {role} call was answered by another model than requested: {}",
            sanitize(warning)
        );
    }

    fn call_finished(&self) {
        let handle = {
            let mut cur = self
                .current
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            cur.0.done.store(true, Ordering::SeqCst);
            cur.1.take()
        };
        if let Some(h) = handle {
            h.thread().unpark();
            let _ = h.join();
        }
    }
}
