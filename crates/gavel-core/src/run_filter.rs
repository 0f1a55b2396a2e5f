//! Which runs a listing asks for, as a value a store can answer in its own query language.
//!
//! The runs page of `gavel ui` shows 50 runs of a store that may hold tens of thousands;
//! reading every run to filter and page them in memory made the page cost grow with the store.
//! [`RunStore::find_runs`](crate::RunStore::find_runs) takes a [`RunFilter`] and a page's bounds
//! instead, so the SQLite and PostgreSQL stores select the page and count the matches in SQL;
//! [`RunFilter::page_of`] is the same selection over runs already read (the default, and the
//! reference the stores are tested against).

use crate::run::RunRecord;

/// What a listing asks for; a `None` field matches every run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunFilter {
    /// Runs of this workflow.
    pub workflow: Option<String>,
    /// Runs whose status has this name as stored ([`crate::RunStatus::stored_name`]:
    /// `running`, `waiting`, `halted`, `failed`, `done`, `aborted`, or a newer gavel's name).
    pub status: Option<String>,
    /// Runs created on or after this day (`YYYY-MM-DD`, UTC): `created_at >= since`, as bytes.
    pub since: Option<String>,
    /// Runs created on or before this day: the first 10 bytes of `created_at` are `<= until`
    /// (a shorter `created_at` never matches).
    pub until: Option<String>,
}

/// A page of the runs a [`RunFilter`] matched.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunPage {
    /// The page's runs, newest first (by id).
    pub runs: Vec<RunRecord>,
    /// How many runs matched in all.
    pub matched: usize,
}

impl RunFilter {
    /// Whether `run` is one this filter asks for.
    pub fn matches(&self, run: &RunRecord) -> bool {
        self.workflow.as_deref().is_none_or(|w| run.workflow == w)
            && self
                .status
                .as_deref()
                .is_none_or(|s| run.status.stored_name() == s)
            && self
                .since
                .as_deref()
                .is_none_or(|d| run.created_at.as_bytes() >= d.as_bytes())
            && self.until.as_deref().is_none_or(|d| {
                run.created_at
                    .as_bytes()
                    .get(..10)
                    .is_some_and(|c| c <= d.as_bytes())
            })
    }

    /// The page of `runs` (oldest first, as [`crate::RunStore::runs`] lists them) this filter
    /// selects: newest first, skipping `offset` matches and keeping at most `limit`.
    pub fn page_of(&self, runs: Vec<RunRecord>, offset: usize, limit: usize) -> RunPage {
        let mut matched: Vec<RunRecord> = runs.into_iter().filter(|r| self.matches(r)).collect();
        matched.reverse();
        let count = matched.len();
        RunPage {
            runs: matched.into_iter().skip(offset).take(limit).collect(),
            matched: count,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{RunId, RunStatus};

    fn run(id: i64, workflow: &str, status: RunStatus, created_at: &str) -> RunRecord {
        RunRecord {
            id: RunId(id),
            workflow: workflow.into(),
            slug: format!("s{id}"),
            status,
            created_at: created_at.into(),
            updated_at: created_at.into(),
            head_seq: 0,
        }
    }

    #[test]
    fn each_field_narrows_and_the_page_is_newest_first() {
        let done = || RunStatus::Done {
            summary: "ok".into(),
        };
        let runs = vec![
            run(1, "issue", done(), "2025-12-31T23:59:59Z"),
            run(2, "issue", RunStatus::Running, "2026-01-01T00:00:00Z"),
            run(3, "lld", done(), "2026-01-15T10:00:00Z"),
            run(4, "issue", done(), "2026-02-01T00:00:00Z"),
            run(5, "issue", done(), "short"),
        ];
        let ids = |f: &RunFilter, offset, limit| {
            let page = f.page_of(runs.clone(), offset, limit);
            let ids: Vec<i64> = page.runs.iter().map(|r| r.id.0).collect();
            (ids, page.matched)
        };
        let all = RunFilter::default();
        assert_eq!(ids(&all, 0, 2), (vec![5, 4], 5));
        assert_eq!(ids(&all, 4, 2), (vec![1], 5));
        assert_eq!(ids(&all, 9, 2), (vec![], 5));
        let f = RunFilter {
            workflow: Some("issue".into()),
            status: Some("done".into()),
            since: Some("2026-01-01".into()),
            until: Some("2026-02-01".into()),
        };
        assert_eq!(ids(&f, 0, 50), (vec![4], 1));
        let until = RunFilter {
            until: Some("2026-01-15".into()),
            ..RunFilter::default()
        };
        assert_eq!(
            ids(&until, 0, 50),
            (vec![3, 2, 1], 3),
            "a short date never matches"
        );
    }
}
