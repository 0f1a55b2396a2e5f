//! A listing's page of runs selected and counted in SQL (`RunStore::find_runs`), so the runs
//! page of `gavel ui` decodes the 50 runs it shows, not every run of the store.
//!
//! The conditions are [`RunFilter::matches`] in SQL: TEXT compares as bytes in SQLite (the
//! BINARY collation), and a run's status name is its stored JSON's `status` field (see
//! [`crate::status_name`] for how it is read without parsing every status).

use gavel_core::{RunFilter, RunPage, RunRecord, StoreError};
use rusqlite::params;

use super::{RUN_COLUMNS, SqliteStore, raw_run};
use crate::status_name::status_prefix;

/// The runs matching `?1` workflow, `?2` stored status name (`?5`: its [`status_prefix`]), `?3`
/// since and `?4` until (each NULL for any).
const MATCHING: &str = "FROM runs
     WHERE (?1 IS NULL OR workflow = ?1)
       AND (?2 IS NULL OR CASE WHEN substr(status, 1, 11) = '{\"status\":\"'
                               THEN substr(status, 1, length(?5)) = ?5
                               ELSE json_extract(status, '$.status') = ?2 END)
       AND (?3 IS NULL OR created_at >= ?3)
       AND (?4 IS NULL OR (length(created_at) >= 10 AND substr(created_at, 1, 10) <= ?4))";

impl SqliteStore {
    pub(super) fn select_runs(
        &self,
        filter: &RunFilter,
        offset: usize,
        limit: usize,
    ) -> Result<RunPage, StoreError> {
        let offset = i64::try_from(offset).unwrap_or(i64::MAX);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let prefix = filter.status.as_deref().map(status_prefix);
        let f = params![
            filter.workflow,
            filter.status,
            filter.since,
            filter.until,
            prefix
        ];
        let mut conn = self.conn();
        // One read transaction: the count and the page see the same runs.
        let tx = self.read_tx(&mut conn)?;
        let matched: i64 = tx
            .prepare_cached(&format!("SELECT COUNT(*) {MATCHING}"))
            .and_then(|mut stmt| stmt.query_row(f, |row| row.get(0)))
            .map_err(self.err("counting runs"))?;
        let raws = if limit == 0 || offset >= matched {
            Vec::new()
        } else {
            tx.prepare_cached(&format!(
                "SELECT {RUN_COLUMNS} {MATCHING} ORDER BY id DESC LIMIT ?6 OFFSET ?7"
            ))
            .and_then(|mut stmt| {
                stmt.query_map(
                    params![
                        filter.workflow,
                        filter.status,
                        filter.since,
                        filter.until,
                        prefix,
                        limit,
                        offset
                    ],
                    raw_run,
                )?
                .collect::<Result<Vec<_>, _>>()
            })
            .map_err(self.err("listing runs"))?
        };
        drop(tx);
        let runs = raws
            .into_iter()
            .map(|raw| self.record(raw))
            .collect::<Result<Vec<RunRecord>, _>>()?;
        Ok(RunPage {
            runs,
            matched: usize::try_from(matched).unwrap_or(0),
        })
    }

    pub(super) fn select_workflows(&self) -> Result<Vec<String>, StoreError> {
        let conn = self.conn();
        let mut names: Vec<String> = conn
            .prepare_cached("SELECT DISTINCT workflow FROM runs")
            .and_then(|mut stmt| stmt.query_map([], |row| row.get(0))?.collect())
            .map_err(self.err("listing workflows"))?;
        names.sort();
        Ok(names)
    }
}
