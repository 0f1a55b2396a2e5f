//! The failures the fake GitHub can be told to produce, and which request meets which.
//!
//! A client that files issues must survive what GitHub really does: error statuses, the
//! primary and secondary rate limits (each with its own headers), a reply lost after the issue
//! was created, and a reply slow enough for the client to be killed while waiting. The last
//! two are the ones that make a client file an issue twice, so the work is done before they
//! strike.

use serde_json::Value;

/// How a request fails.
#[derive(Debug, Clone, PartialEq)]
pub enum FaultKind {
    /// An error status with GitHub's error body (`message`, `errors` if given,
    /// `documentation_url`, `status`); nothing is done.
    Status {
        status: u16,
        message: String,
        errors: Option<Value>,
    },
    /// The primary rate limit: 403, `x-ratelimit-remaining: 0` and `x-ratelimit-reset` that
    /// many seconds from now; nothing is done.
    RateLimit { reset_in_secs: u64 },
    /// A secondary rate limit: 403 with `retry-after`; nothing is done.
    SecondaryRateLimit { retry_after_secs: u64 },
    /// The request is carried out, then the connection is closed without any reply.
    Lost,
    /// The request is carried out, then the reply waits this long before it is sent.
    Slow { millis: u64 },
}

impl FaultKind {
    /// An error status with GitHub's body for `message`.
    pub fn status(status: u16, message: impl Into<String>) -> Self {
        Self::Status {
            status,
            message: message.into(),
            errors: None,
        }
    }
}

/// A fault and the requests it applies to: those with `method` (if set) whose path contains
/// `path_contains` (if set), the first `times` of them.
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    pub method: Option<String>,
    pub path_contains: Option<String>,
    pub kind: FaultKind,
    pub times: usize,
}

impl Fault {
    /// Applies to the next request, whatever it is.
    pub fn new(kind: FaultKind) -> Self {
        Self {
            method: None,
            path_contains: None,
            kind,
            times: 1,
        }
    }

    /// Applies only to requests with `method` (`""`: any) whose path contains `path` (`""`:
    /// any).
    #[must_use]
    pub fn on(mut self, method: &str, path: &str) -> Self {
        self.method = Some(method.to_owned()).filter(|m| !m.is_empty());
        self.path_contains = Some(path.to_owned()).filter(|p| !p.is_empty());
        self
    }

    /// Applies to the next `n` matching requests.
    #[must_use]
    pub fn times(mut self, n: usize) -> Self {
        self.times = n;
        self
    }

    fn matches(&self, method: &str, path: &str) -> bool {
        self.times > 0
            && self
                .method
                .as_deref()
                .is_none_or(|m| m.eq_ignore_ascii_case(method))
            && self
                .path_contains
                .as_deref()
                .is_none_or(|p| path.contains(p))
    }
}

/// The first fault that applies to a request, used once (and dropped when used up).
pub(crate) fn take(faults: &mut Vec<Fault>, method: &str, path: &str) -> Option<FaultKind> {
    let i = faults.iter().position(|f| f.matches(method, path))?;
    let fault = &mut faults[i];
    fault.times -= 1;
    let kind = fault.kind.clone();
    if fault.times == 0 {
        faults.remove(i);
    }
    Some(kind)
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn a_fault_applies_to_matching_requests_the_given_number_of_times() {
        let mut faults = vec![
            Fault::new(FaultKind::Lost).on("POST", "/issues").times(2),
            Fault::new(FaultKind::status(502, "Bad Gateway")),
        ];
        assert_eq!(
            take(&mut faults, "post", "/repos/o/r/issues"),
            Some(FaultKind::Lost)
        );
        // Not a POST: the catch-all fault applies, and is used up.
        assert_eq!(
            take(&mut faults, "GET", "/repos/o/r/issues"),
            Some(FaultKind::status(502, "Bad Gateway"))
        );
        assert_eq!(take(&mut faults, "GET", "/user"), None);
        assert_eq!(
            take(&mut faults, "POST", "/api/v3/repos/o/r/issues"),
            Some(FaultKind::Lost)
        );
        assert!(faults.is_empty());
    }
}
