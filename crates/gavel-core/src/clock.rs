//! Time as a dependency, so tests can pin it.
//!
//! Every timestamp gavel records (checkpoints, events, `filed.json`) comes from a [`Clock`]; the
//! CLI passes [`SystemClock`] in normal use and [`FixedClock`] in hermetic tests.

use jiff::Timestamp;

/// A source of the current time.
pub trait Clock: Send + Sync {
    /// Now, as a timestamp.
    fn now(&self) -> Timestamp;

    /// Now, formatted as RFC 3339 in UTC (seconds precision), as stored everywhere.
    fn now_rfc3339(&self) -> String {
        let ts = self.now();
        let secs = Timestamp::from_second(ts.as_second()).unwrap_or(ts);
        secs.to_string()
    }
}

/// The real wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// A clock that always answers the same instant.
#[derive(Debug, Clone, Copy)]
pub struct FixedClock(pub Timestamp);

impl Clock for FixedClock {
    fn now(&self) -> Timestamp {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_clock_formats_rfc3339_utc_seconds() {
        let ts: Timestamp = "2026-01-30T14:33:20.123Z".parse().expect("valid timestamp");
        assert_eq!(FixedClock(ts).now_rfc3339(), "2026-01-30T14:33:20Z");
    }
}
