//! Retrying transient failures, the same way for every provider.
//!
//! A transient failure (429, 5xx, overload, a timeout, a truncated stream, a broken pipe) is
//! retried with exponential backoff and full jitter, honouring the service's `retry-after`, at
//! most `max_retries` times. A permanent failure, a cancellation or an unavailable provider
//! ends the call at once. When retries run out the last transient error is returned, and the
//! workflow halts resumably: a failed call never produces a draft or a verdict.

use std::time::{Duration, Instant};

use crate::provider::{Call, CallProgress, Provider, ProviderError, Request, Response};

/// How to retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (so `max_retries + 1` attempts at most).
    pub max_retries: u32,
    /// The first backoff; doubled on each retry.
    pub base_delay: Duration,
    /// The longest single wait, `retry-after` included.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 3,
            base_delay: Duration::from_secs(2),
            max_delay: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (1-based): the service's `retry-after` when given,
    /// else a random point in `[0, base * 2^(retry-1)]`; never more than `max_delay`.
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>, jitter: f64) -> Duration {
        if let Some(after) = retry_after {
            return after.min(self.max_delay);
        }
        let exp = self
            .base_delay
            .saturating_mul(1u32 << retry.saturating_sub(1).min(16));
        exp.min(self.max_delay).mul_f64(jitter.clamp(0.0, 1.0))
    }
}

/// A provider wrapped with a [`RetryPolicy`].
pub struct Retrying {
    inner: Box<dyn Provider>,
    policy: RetryPolicy,
}

impl Retrying {
    pub fn new(inner: Box<dyn Provider>, policy: RetryPolicy) -> Self {
        Self { inner, policy }
    }
}

/// What an agent CLI's error says when the CLI stopped reading its prompt (a broken pipe):
/// such a call is retried once, not `max_retries` times (seed 003, "BrokenPipe"), because a
/// CLI that closes its input at once usually does it again.
pub(crate) const STDIN_CLOSED: &str = "while reading the prompt";

impl Retrying {
    /// The retries allowed after an error with `message`.
    fn limit(&self, message: &str) -> u32 {
        if message.contains(STDIN_CLOSED) {
            self.policy.max_retries.min(1)
        } else {
            self.policy.max_retries
        }
    }
}

impl Provider for Retrying {
    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn model(&self) -> String {
        self.inner.model()
    }

    fn preflight(&self) -> Result<(), ProviderError> {
        self.inner.preflight()
    }

    fn complete(&self, req: &Request, call: &Call<'_>) -> Result<Response, ProviderError> {
        let mut attempt = 1u32;
        loop {
            let progress = |p: CallProgress| {
                (call.progress)(match p {
                    CallProgress::Tokens { output_tokens, .. } => CallProgress::Tokens {
                        output_tokens,
                        attempt,
                    },
                    other => other,
                })
            };
            let this = Call {
                cancelled: call.cancelled,
                progress: &progress,
            };
            match self.inner.complete(req, &this) {
                Ok(mut response) => {
                    response.attempts = attempt;
                    return Ok(response);
                }
                Err(ProviderError::Transient {
                    retry_after_ms,
                    ref message,
                    ..
                }) if attempt <= self.limit(message) => {
                    let wait = self.policy.delay(
                        attempt,
                        retry_after_ms.map(Duration::from_millis),
                        jitter(),
                    );
                    sleep_unless_cancelled(wait, call.cancelled)?;
                    attempt += 1;
                }
                Err(ProviderError::Transient {
                    provider,
                    message,
                    retry_after_ms,
                    quota,
                }) if attempt > 1 => {
                    return Err(ProviderError::Transient {
                        provider,
                        message: format!("{message} (gave up after {attempt} attempts)"),
                        retry_after_ms,
                        quota,
                    });
                }
                Err(e) => return Err(e),
            }
        }
    }
}

fn sleep_unless_cancelled(
    wait: Duration,
    cancelled: &dyn Fn() -> bool,
) -> Result<(), ProviderError> {
    let until = Instant::now() + wait;
    while Instant::now() < until {
        if cancelled() {
            return Err(ProviderError::Cancelled);
        }
        std::thread::sleep((until - Instant::now()).min(Duration::from_millis(50)));
    }
    if cancelled() {
        Err(ProviderError::Cancelled)
    } else {
        Ok(())
    }
}

/// A number in [0, 1) for full jitter: concurrent runs that hit the same limit spread out.
fn jitter() -> f64 {
    fastrand::f64()
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::provider::{DEFAULT_MAX_OUTPUT_TOKENS, Role};

    /// Fails with the queued errors, then answers.
    struct Flaky(Mutex<Vec<ProviderError>>);

    impl Provider for Flaky {
        fn describe(&self) -> String {
            "flaky".into()
        }
        fn preflight(&self) -> Result<(), ProviderError> {
            Ok(())
        }
        fn complete(&self, _req: &Request, _call: &Call<'_>) -> Result<Response, ProviderError> {
            let mut q = self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if q.is_empty() {
                return Ok(Response {
                    text: "ok".into(),
                    provider: "flaky".into(),
                    model: "m".into(),
                    requested_model: "m".into(),
                    input_tokens: None,
                    output_tokens: None,
                    cached_tokens: None,
                    cost_usd: None,
                    raw: String::new(),
                    attempts: 1,
                    credential: None,
                    quota_exhausted: Vec::new(),
                    tool_uses: Vec::new(),
                    ended_with: None,
                    form: crate::AnswerForm::Plain,
                });
            }
            Err(q.remove(0))
        }
    }

    fn transient(ms: Option<u64>) -> ProviderError {
        ProviderError::Transient {
            provider: "flaky".into(),
            message: "503".into(),
            retry_after_ms: ms,
            quota: false,
        }
    }

    fn req() -> Request {
        Request {
            role: Role::DRAFTER,
            prompt: "p".into(),
            seq: 0,
            step_id: "s".into(),
            max_output_tokens: DEFAULT_MAX_OUTPUT_TOKENS,
            profile: crate::AgentProfile::text_only(),
            output_schema: None,
        }
    }

    const FAST: RetryPolicy = RetryPolicy {
        max_retries: 3,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(50),
    };

    #[test]
    fn transient_failures_are_retried_and_counted() {
        let p = Retrying::new(
            Box::new(Flaky(Mutex::new(vec![transient(None), transient(Some(5))]))),
            FAST,
        );
        let r = p
            .complete(&req(), &Call::new(&|| false))
            .expect("third attempt answers");
        assert_eq!(r.attempts, 3);
    }

    #[test]
    fn retries_run_out_and_the_error_says_so() {
        let p = Retrying::new(
            Box::new(Flaky(Mutex::new((0..4).map(|_| transient(None)).collect()))),
            FAST,
        );
        let e = p
            .complete(&req(), &Call::new(&|| false))
            .expect_err("four failures");
        assert!(
            e.is_transient() && e.to_string().contains("gave up after 4 attempts"),
            "{e}"
        );
    }

    #[test]
    fn a_closed_input_is_retried_once() {
        let closed = || ProviderError::Transient {
            provider: "claude".into(),
            message: format!("claude exited with exit status: 1 {STDIN_CLOSED} (Broken pipe)"),
            retry_after_ms: None,
            quota: false,
        };
        let p = Retrying::new(
            Box::new(Flaky(Mutex::new((0..4).map(|_| closed()).collect()))),
            FAST,
        );
        let e = p
            .complete(&req(), &Call::new(&|| false))
            .expect_err("two failures");
        assert!(e.to_string().contains("gave up after 2 attempts"), "{e}");
    }

    #[test]
    fn permanent_failures_are_not_retried() {
        let perm = ProviderError::Permanent {
            provider: "flaky".into(),
            message: "401".into(),
            hint: None,
        };
        let p = Retrying::new(
            Box::new(Flaky(Mutex::new(vec![perm, transient(None)]))),
            FAST,
        );
        assert!(matches!(
            p.complete(&req(), &Call::new(&|| false)),
            Err(ProviderError::Permanent { .. })
        ));
    }

    #[test]
    fn retry_after_is_honoured_up_to_the_cap_and_backoff_grows() {
        let policy = RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(10),
        };
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(3)), 0.5),
            Duration::from_secs(3)
        );
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(99)), 0.5),
            Duration::from_secs(10)
        );
        assert_eq!(policy.delay(3, None, 1.0), Duration::from_secs(4));
        assert_eq!(policy.delay(9, None, 1.0), Duration::from_secs(10));
        assert!(policy.delay(2, None, 0.25) <= Duration::from_millis(500));
    }

    #[test]
    fn a_cancel_during_backoff_stops_the_call() {
        let slow = RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_secs(30),
            max_delay: Duration::from_secs(30),
        };
        let p = Retrying::new(
            Box::new(Flaky(Mutex::new(vec![transient(Some(30_000))]))),
            slow,
        );
        let started = Instant::now();
        let calls = std::sync::atomic::AtomicU32::new(0);
        let cancelled = || calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) > 2;
        assert!(matches!(
            p.complete(&req(), &Call::new(&cancelled)),
            Err(ProviderError::Cancelled)
        ));
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn jitter_is_random_in_the_unit_interval() {
        // It came from the clock's low bits: calls in quick succession could repeat a value.
        let values: Vec<f64> = (0..100).map(|_| jitter()).collect();
        assert!(values.iter().all(|v| (0.0..1.0).contains(v)), "{values:?}");
        let mut distinct = values.clone();
        distinct.sort_by(f64::total_cmp);
        distinct.dedup();
        assert_eq!(distinct.len(), values.len(), "{values:?}");
    }
}
