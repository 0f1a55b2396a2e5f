//! A listing's page of runs selected and counted in SQL (`RunStore::find_runs`), so the runs
//! page of `gavel ui` decodes the 50 runs it shows, not every run of the project.
//!
//! The conditions are [`RunFilter::matches`] in SQL: dates compare as bytes (`COLLATE "C"`,
//! whatever the database's collation), and a run's status name is its stored JSON's `status`
//! field (see [`crate::status_name`] for how it is read without parsing every status).

use gavel_core::{RunFilter, RunPage, StoreError};

use super::PgStore;
use crate::status_name::status_prefix;

/// The runs of project `$1` (every project's when NULL) matching `$2` workflow, `$3` stored
/// status name (`$6`: its [`status_prefix`]), `$4` since and `$5` until (each NULL for any).
macro_rules! matching {
    () => {
        "FROM runs
         WHERE ($1::text IS NULL OR project = $1)
           AND ($2::text IS NULL OR workflow = $2)
           AND ($3::text IS NULL OR CASE WHEN left(status, 11) = '{\"status\":\"'
                                         THEN left(status, length($6)) = $6
                                         ELSE status::json->>'status' = $3 END)
           AND ($4::text IS NULL OR created_at COLLATE \"C\" >= $4)
           AND ($5::text IS NULL
                OR (length(created_at) >= 10 AND left(created_at, 10) COLLATE \"C\" <= $5))"
    };
}

impl PgStore {
    pub(super) fn select_runs(
        &self,
        filter: &RunFilter,
        offset: usize,
        limit: usize,
    ) -> Result<RunPage, StoreError> {
        let offset = i64::try_from(offset).unwrap_or(i64::MAX);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let project = self.project();
        let (workflow, status) = (filter.workflow.as_deref(), filter.status.as_deref());
        let (since, until) = (filter.since.as_deref(), filter.until.as_deref());
        let prefix = filter.status.as_deref().map(status_prefix);
        // Each query on its own, as every read here: a run created between the two is at most
        // counted and not listed, or the other way round.
        let (matched, rows) = self.read("listing runs", |tx| {
            let matched: i64 = tx
                .query_opt(
                    "counting runs",
                    concat!("SELECT COUNT(*) ", matching!()),
                    &[&project, &workflow, &status, &since, &until, &prefix],
                )?
                .map_or(0, |row| row.get(0));
            if limit == 0 || offset >= matched {
                return Ok((matched, Vec::new()));
            }
            let rows = tx.query(
                "listing runs",
                concat!(
                    "SELECT id, workflow, slug, status, created_at, updated_at, head_seq ",
                    matching!(),
                    " ORDER BY id DESC LIMIT $7 OFFSET $8"
                ),
                &[
                    &project, &workflow, &status, &since, &until, &prefix, &limit, &offset,
                ],
            )?;
            Ok((matched, rows))
        })?;
        Ok(RunPage {
            runs: rows
                .iter()
                .map(|row| self.record(row))
                .collect::<Result<_, _>>()?,
            matched: usize::try_from(matched).unwrap_or(0),
        })
    }

    pub(super) fn select_workflows(&self) -> Result<Vec<String>, StoreError> {
        let rows = self.read("listing workflows", |tx| {
            tx.query(
                "listing workflows",
                "SELECT DISTINCT workflow FROM runs WHERE ($1::text IS NULL OR project = $1)",
                &[&self.project()],
            )
        })?;
        let mut names: Vec<String> = rows.iter().map(|row| row.get(0)).collect();
        names.sort();
        Ok(names)
    }
}
