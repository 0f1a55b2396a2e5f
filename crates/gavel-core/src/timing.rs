//! Where a run's time goes: gavel's own work, against the models and the test commands it
//! waits on, so a person sees what gavel itself costs them.
//!
//! The engine keeps one account per drive (a process driving a run from where it stands until
//! it stops at a gate, halts, fails or ends) and writes it as an [`EventKind::Time`] with the
//! drive's last events. Nodes time what they wait on outside gavel through a [`Stopwatch`]
//! ([`NodeCtx::stopwatch`](crate::NodeCtx::stopwatch)). What counts:
//!
//! - **active**: from the drive's start (or, for the first drive of a process, from when the
//!   process started when nothing was asked of a person before it: see
//!   [`Engine::counting_from`](crate::Engine::counting_from)) until its last events are written.
//!   Time waiting at a gate, whether at a prompt or between two processes, and the pause
//!   between a halt and its resume, are outside every drive and never count;
//! - **model**: inside model calls (a provider's whole `complete`, retries and their waits
//!   included);
//! - **tests**: inside the test and lint commands;
//! - **gavel's own** = active − model − tests.
//!
//! A process killed in the middle of a drive writes no account for it (its events are lost as
//! well), so such a drive counts for nothing on either side. Every time comes from the engine's
//! [`Clock`], so tests pin it.

use std::sync::atomic::{AtomicU64, Ordering};

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::clock::Clock;
use crate::event::{Event, EventKind};

/// Time spent on a run (one drive's, or a whole run's summed), in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeSpent {
    /// Wall time while gavel worked on the run (see the module doc).
    pub active_ms: u64,
    /// The part of it inside model calls.
    pub model_ms: u64,
    /// The part of it inside test and lint commands.
    pub tests_ms: u64,
}

impl TimeSpent {
    /// gavel's own time: active time not spent waiting on a model or a test command.
    pub fn own_ms(&self) -> u64 {
        self.active_ms
            .saturating_sub(self.model_ms.saturating_add(self.tests_ms))
    }

    /// The sum of the accounts in `events` (a run's timeline); `None` when it holds none (a
    /// run driven only by a gavel that kept none).
    pub fn of_events(events: &[Event]) -> Option<TimeSpent> {
        events
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::Time(t) => Some(*t),
                _ => None,
            })
            .reduce(|a, b| a + b)
    }

    /// One line for a person:
    /// `gavel's own time: 0.41 s of 6.60 s (model calls 5.10 s, tests 1.10 s)`.
    pub fn describe(&self) -> String {
        format!(
            "gavel's own time: {} of {} (model calls {}, tests {})",
            secs(self.own_ms()),
            secs(self.active_ms),
            secs(self.model_ms),
            secs(self.tests_ms)
        )
    }
}

impl std::ops::Add for TimeSpent {
    type Output = TimeSpent;

    fn add(self, other: TimeSpent) -> TimeSpent {
        TimeSpent {
            active_ms: self.active_ms.saturating_add(other.active_ms),
            model_ms: self.model_ms.saturating_add(other.model_ms),
            tests_ms: self.tests_ms.saturating_add(other.tests_ms),
        }
    }
}

/// Milliseconds as seconds with two decimals.
fn secs(ms: u64) -> String {
    format!("{}.{:02} s", ms / 1000, (ms % 1000) / 10)
}

/// What a node waits on outside gavel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outside {
    /// A model call.
    Model,
    /// A test or lint command.
    Tests,
}

/// One drive's account while it runs: when it started and the time its nodes waited outside
/// gavel so far (atomics, so a [`Stopwatch`] can be used from inside a journaled step).
pub(crate) struct DriveTime {
    started: Timestamp,
    model_us: AtomicU64,
    tests_us: AtomicU64,
}

impl DriveTime {
    pub(crate) fn starting_at(started: Timestamp) -> Self {
        Self {
            started,
            model_us: AtomicU64::new(0),
            tests_us: AtomicU64::new(0),
        }
    }

    fn add(&self, on: Outside, us: u64) {
        let counter = match on {
            Outside::Model => &self.model_us,
            Outside::Tests => &self.tests_us,
        };
        counter.fetch_add(us, Ordering::Relaxed);
    }

    /// The account up to `now`.
    pub(crate) fn spent(&self, now: Timestamp) -> TimeSpent {
        TimeSpent {
            active_ms: micros_between(self.started, now) / 1000,
            model_ms: self.model_us.load(Ordering::Relaxed) / 1000,
            tests_ms: self.tests_us.load(Ordering::Relaxed) / 1000,
        }
    }

    /// The account up to now, as the event that records it.
    pub(crate) fn event(&self, clock: &dyn Clock) -> Event {
        Event {
            at: clock.now_rfc3339(),
            kind: EventKind::Time(self.spent(clock.now())),
        }
    }
}

/// Microseconds from `from` to `to`; 0 when the clock went backwards.
fn micros_between(from: Timestamp, to: Timestamp) -> u64 {
    u64::try_from(to.duration_since(from).as_micros()).unwrap_or(0)
}

/// Times what a node waits on outside gavel, for the drive's account. Copied out of the
/// [`NodeCtx`](crate::NodeCtx) before a journaled step, so the step's closure can use it.
#[derive(Clone, Copy)]
pub struct Stopwatch<'a> {
    pub(crate) clock: &'a dyn Clock,
    pub(crate) drive: &'a DriveTime,
}

impl Stopwatch<'_> {
    /// Runs `f`, counting its time as spent waiting on `on`.
    pub fn time<T>(&self, on: Outside, f: impl FnOnce() -> T) -> T {
        let start = self.clock.now();
        let out = f();
        self.drive.add(on, micros_between(start, self.clock.now()));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A clock that stands still until a test moves it.
    struct ManualClock(Mutex<Timestamp>);

    impl ManualClock {
        fn at(rfc3339: &str) -> Self {
            Self(Mutex::new(rfc3339.parse().expect("a timestamp")))
        }

        fn advance_ms(&self, ms: i64) {
            let mut now = self.0.lock().expect("the clock");
            *now = now
                .checked_add(jiff::SignedDuration::from_millis(ms))
                .expect("in range");
        }
    }

    impl Clock for ManualClock {
        fn now(&self) -> Timestamp {
            *self.0.lock().expect("the clock")
        }
    }

    fn time_event(active_ms: u64, model_ms: u64, tests_ms: u64) -> Event {
        Event {
            at: "2026-01-01T00:00:00Z".into(),
            kind: EventKind::Time(TimeSpent {
                active_ms,
                model_ms,
                tests_ms,
            }),
        }
    }

    #[test]
    fn a_drive_counts_its_wall_time_and_what_its_steps_waited_on() {
        let clock = ManualClock::at("2026-01-01T00:00:00Z");
        let drive = DriveTime::starting_at(clock.now());
        let watch = Stopwatch {
            clock: &clock,
            drive: &drive,
        };
        clock.advance_ms(120); // gavel: load, worktree
        watch.time(Outside::Model, || clock.advance_ms(5_100));
        clock.advance_ms(40); // gavel: snapshot, journal
        watch.time(Outside::Tests, || clock.advance_ms(600));
        watch.time(Outside::Tests, || clock.advance_ms(500));
        clock.advance_ms(250); // gavel: diff, checkpoint
        let spent = drive.spent(clock.now());
        assert_eq!(
            spent,
            TimeSpent {
                active_ms: 6_610,
                model_ms: 5_100,
                tests_ms: 1_100,
            }
        );
        assert_eq!(spent.own_ms(), 410);
        assert_eq!(
            spent.describe(),
            "gavel's own time: 0.41 s of 6.61 s (model calls 5.10 s, tests 1.10 s)"
        );
        let EventKind::Time(recorded) = drive.event(&clock).kind else {
            panic!("a time event");
        };
        assert_eq!(recorded, spent);
    }

    #[test]
    fn a_run_is_the_sum_of_its_drives_and_nothing_between_them() {
        // Two drives (the second a resume an hour later): only their own times count.
        let events = vec![
            time_event(2_000, 1_500, 0),
            Event {
                at: "2026-01-01T00:00:02Z".into(),
                kind: EventKind::Halted { reason: "x".into() },
            },
            time_event(4_610, 3_600, 1_100),
        ];
        let total = TimeSpent::of_events(&events).expect("accounts");
        assert_eq!(
            total,
            TimeSpent {
                active_ms: 6_610,
                model_ms: 5_100,
                tests_ms: 1_100,
            }
        );
        assert_eq!(total.own_ms(), 410);
        assert_eq!(TimeSpent::of_events(&events[1..2]), None);
    }

    #[test]
    fn a_clock_that_goes_backwards_counts_nothing_rather_than_wrapping() {
        let clock = ManualClock::at("2026-01-01T00:00:10Z");
        let drive = DriveTime::starting_at(clock.now());
        let watch = Stopwatch {
            clock: &clock,
            drive: &drive,
        };
        watch.time(Outside::Model, || clock.advance_ms(-3_000));
        let spent = drive.spent(clock.now());
        assert_eq!(spent, TimeSpent::default());
        // More waiting than wall time (clock steps) never goes below zero either.
        let odd = TimeSpent {
            active_ms: 10,
            model_ms: 20,
            tests_ms: 5,
        };
        assert_eq!(odd.own_ms(), 0);
    }

    #[test]
    fn an_account_is_stored_flat_under_its_own_event_name() {
        let json = serde_json::to_value(time_event(6_610, 5_100, 1_100)).expect("json");
        assert_eq!(
            json,
            serde_json::json!({
                "at": "2026-01-01T00:00:00Z",
                "event": "time",
                "active_ms": 6_610,
                "model_ms": 5_100,
                "tests_ms": 1_100,
            })
        );
        let back: Event = serde_json::from_value(json).expect("loads");
        assert_eq!(back, time_event(6_610, 5_100, 1_100));
    }
}
