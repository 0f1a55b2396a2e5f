//! The audit and spend parts of the PostgreSQL store: the team's diff-gate decisions, kept
//! once per line for every machine to read, and its spend: a running total per month kept in
//! the same transaction as the model calls' events (see [`super::events`]), and the spend
//! page's totals by project, day, workflow and role, which the schema's triggers keep as the
//! events are inserted (see [`super::schema`]).

use gavel_core::{AuditStore, ContentHash, Event, RunId, SpendStore, SpendTotal, StoreError};

use super::PgStore;

impl AuditStore for PgStore {
    fn record_audit(&self, line: &str) -> Result<(), StoreError> {
        let project = self.project().unwrap_or_default();
        let key = ContentHash::of(line.as_bytes());
        self.tx("recording a diff-gate decision", |tx| {
            tx.execute(
                "recording a diff-gate decision",
                "INSERT INTO audit (key, project, line) VALUES ($1, $2, $3)
                 ON CONFLICT (key) DO NOTHING",
                &[&key.as_str(), &project, &line.trim_end()],
            )
        })?;
        Ok(())
    }

    fn audit_lines(&self, limit: usize) -> Result<Vec<String>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self.read("reading diff-gate decisions", |tx| {
            tx.query(
                "reading diff-gate decisions",
                "SELECT line FROM audit WHERE ($1::text IS NULL OR project = $1)
                 ORDER BY id DESC LIMIT $2",
                &[&self.project(), &limit],
            )
        })?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }
}

impl SpendStore for PgStore {
    fn spent_in_month(&self, month: &str) -> Result<u64, StoreError> {
        let row = self.read("reading the month's spend", |tx| {
            tx.query_opt(
                "reading the month's spend",
                "SELECT COALESCE(SUM(micros), 0)::BIGINT FROM spend WHERE month = $1",
                &[&month],
            )
        })?;
        let micros: i64 = row.map_or(0, |r| r.get(0));
        Ok(u64::try_from(micros).unwrap_or(0))
    }

    fn model_call_events(&self) -> Result<Vec<(RunId, Event)>, StoreError> {
        self.select_model_calls()
    }

    fn spend_totals(&self) -> Result<Vec<SpendTotal>, StoreError> {
        let rows = self.read("reading the spend totals", |tx| {
            tx.query(
                "reading the spend totals",
                "SELECT day, workflow, role, SUM(calls)::BIGINT, SUM(unpriced)::BIGINT,
                        SUM(micros)::BIGINT
                 FROM spend_totals WHERE ($1::text IS NULL OR project = $1)
                 GROUP BY day, workflow, role HAVING SUM(calls) > 0",
                &[&self.project()],
            )
        })?;
        let count = |v: i64| {
            u64::try_from(v).map_err(|_| self.corrupt(format!("a negative spend total {v}")))
        };
        rows.iter()
            .map(|row| {
                Ok(SpendTotal {
                    day: row.get(0),
                    workflow: row.get(1),
                    role: row.get(2),
                    calls: count(row.get(3))?,
                    unpriced: count(row.get(4))?,
                    micros: count(row.get(5))?,
                })
            })
            .collect()
    }
}
