//! The runs page's filters (workflow, status, creation dates) and paging, checked before
//! anything is read: a bad value is refused with what was expected. The store selects the
//! page and counts the matches ([`RunStore::find_runs`]), so a page reads 50 runs, not all.

use gavel_core::{RunFilter, RunRecord, RunStore};
use serde::Deserialize;

use crate::error::ReportError;

/// Runs per page.
pub const PAGE_SIZE: usize = 50;

/// The statuses a run can be filtered by (`interrupted` runs are `running` in the store).
pub const STATUSES: &[&str] = &["running", "waiting", "halted", "failed", "done", "aborted"];

/// What the runs page asks for (its URL query). Empty values mean "any".
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
pub struct RunsQuery {
    #[serde(default)]
    pub workflow: Option<String>,
    #[serde(default)]
    pub status: Option<String>,
    /// Created on or after this day (`YYYY-MM-DD`, UTC).
    #[serde(default)]
    pub since: Option<String>,
    /// Created on or before this day.
    #[serde(default)]
    pub until: Option<String>,
    /// 1 for the newest page.
    #[serde(default)]
    pub page: Option<usize>,
}

/// A page of runs, newest first.
#[derive(Debug, Clone)]
pub struct RunsPage {
    pub runs: Vec<RunRecord>,
    pub page: usize,
    pub pages: usize,
    pub matched: usize,
    /// Every workflow with runs, for the filter.
    pub workflows: Vec<String>,
}

fn nonempty(v: &Option<String>) -> Option<&str> {
    v.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

fn day(what: &'static str, v: Option<&str>) -> Result<Option<String>, ReportError> {
    let Some(v) = v else { return Ok(None) };
    let b = v.as_bytes();
    let ok = b.len() == 10
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            _ => c.is_ascii_digit(),
        });
    if ok {
        Ok(Some(v.to_owned()))
    } else {
        Err(ReportError::BadQuery {
            what,
            value: v.to_owned(),
            expected: "a day as YYYY-MM-DD",
        })
    }
}

impl RunsQuery {
    /// The query without its page: what the page links keep.
    pub fn filters(&self) -> Self {
        Self {
            page: None,
            ..self.clone()
        }
    }

    /// The page of runs this query selects.
    pub fn select(&self, store: &dyn RunStore) -> Result<RunsPage, ReportError> {
        let workflow = nonempty(&self.workflow);
        let status = nonempty(&self.status);
        if let Some(s) = status
            && !STATUSES.contains(&s)
        {
            return Err(ReportError::BadQuery {
                what: "status",
                value: s.to_owned(),
                expected: "running, waiting, halted, failed, done or aborted",
            });
        }
        let since = day("since", nonempty(&self.since))?;
        let until = day("until", nonempty(&self.until))?;
        let page = self.page.unwrap_or(1).max(1);
        let filter = RunFilter {
            workflow: workflow.map(str::to_owned),
            status: status.map(str::to_owned),
            since,
            until,
        };
        let found = store.find_runs(&filter, (page - 1).saturating_mul(PAGE_SIZE), PAGE_SIZE)?;
        Ok(RunsPage {
            pages: found.matched.div_ceil(PAGE_SIZE).max(1),
            runs: found.runs,
            page,
            matched: found.matched,
            workflows: store.workflows()?,
        })
    }

    /// This query as a URL query string (`?workflow=issue&page=2`), empty when it has nothing.
    pub fn to_query_string(&self) -> String {
        let mut parts = Vec::new();
        for (k, v) in [
            ("workflow", nonempty(&self.workflow)),
            ("status", nonempty(&self.status)),
            ("since", nonempty(&self.since)),
            ("until", nonempty(&self.until)),
        ] {
            if let Some(v) = v {
                parts.push(format!("{k}={}", encode(v)));
            }
        }
        if let Some(p) = self.page.filter(|p| *p > 1) {
            parts.push(format!("page={p}"));
        }
        if parts.is_empty() {
            String::new()
        } else {
            format!("?{}", parts.join("&"))
        }
    }
}

/// Percent-encodes everything but unreserved characters.
fn encode(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for b in v.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_filters_are_refused_by_name() {
        let store = gavel_store_testkit::MemoryStore::default();
        let q = RunsQuery {
            since: Some("yesterday".into()),
            ..RunsQuery::default()
        };
        let err = q.select(&store).expect_err("bad day");
        assert!(err.to_string().contains("since"), "{err}");
        assert!(err.to_string().contains("yesterday"), "{err}");
        let q = RunsQuery {
            status: Some("exploded".into()),
            ..RunsQuery::default()
        };
        assert!(q.select(&store).is_err());
    }

    #[test]
    fn the_query_string_keeps_filters_and_encodes_them() {
        let q = RunsQuery {
            workflow: Some("change-plan".into()),
            status: Some(String::new()),
            since: Some("2026-11-01".into()),
            until: None,
            page: Some(3),
        };
        assert_eq!(
            q.to_query_string(),
            "?workflow=change-plan&since=2026-11-01&page=3"
        );
        assert_eq!(
            q.filters().to_query_string(),
            "?workflow=change-plan&since=2026-11-01"
        );
        let odd = RunsQuery {
            workflow: Some("a&b=<c>".into()),
            ..RunsQuery::default()
        };
        assert_eq!(odd.to_query_string(), "?workflow=a%26b%3D%3Cc%3E");
    }
}
