//! The spend and audit parts of the SQLite store. The spend page's totals by day, workflow and
//! role are rows the schema's triggers keep as calls are recorded (`spend_totals`, see
//! [`crate::schema`]), read as they are. Every model call of the store comes in one query:
//! the events whose JSON names the `model_call` kind, read without decoding the rest of every
//! timeline. A repository's store is nobody else's, so it keeps no audit lines: the
//! repository's audit log file is the record.

use gavel_core::{AuditStore, Event, EventKind, RunId, SpendStore, SpendTotal, StoreError};

use super::{SqliteStore, get_u64};

/// Keeps nothing: see the module's doc.
impl AuditStore for SqliteStore {}

impl SpendStore for SqliteStore {
    fn spent_in_month(&self, month: &str) -> Result<u64, StoreError> {
        gavel_core::spent_in_month_of(self, month)
    }

    fn model_call_events(&self) -> Result<Vec<(RunId, Event)>, StoreError> {
        self.select_model_calls()
    }

    fn spend_totals(&self) -> Result<Vec<SpendTotal>, StoreError> {
        let conn = self.conn();
        conn.prepare_cached(
            "SELECT day, workflow, role, calls, unpriced, micros FROM spend_totals
             WHERE calls > 0",
        )
        .and_then(|mut stmt| {
            stmt.query_map([], |row| {
                Ok(SpendTotal {
                    day: row.get(0)?,
                    workflow: row.get(1)?,
                    role: row.get(2)?,
                    calls: get_u64(row, 3)?,
                    unpriced: get_u64(row, 4)?,
                    micros: get_u64(row, 5)?,
                })
            })?
            .collect()
        })
        .map_err(self.err("reading the spend totals"))
    }
}

impl SqliteStore {
    fn select_model_calls(&self) -> Result<Vec<(RunId, Event)>, StoreError> {
        let mut conn = self.conn();
        let tx = self.read_tx(&mut conn)?;
        // Events are stored as compact JSON with their kind's tag; the LIKE only narrows what
        // is decoded, and the decoded kind decides.
        let rows: Vec<(i64, u64, String)> = tx
            .prepare_cached(
                "SELECT run_id, seq, json FROM events WHERE json LIKE '%\"event\":\"model_call\"%' \
                 ORDER BY run_id, seq",
            )
            .and_then(|mut stmt| {
                stmt.query_map([], |row| Ok((row.get(0)?, get_u64(row, 1)?, row.get(2)?)))?
                    .collect()
            })
            .map_err(self.err("reading the model calls"))?;
        let mut out = Vec::with_capacity(rows.len());
        for (run, seq, json) in rows {
            let event: Event = serde_json::from_str(&json).map_err(|e| {
                self.corrupt(format!("event {seq} of run {run} cannot be read: {e}"))
            })?;
            if matches!(event.kind, EventKind::ModelCall { .. }) {
                out.push((RunId(run), event));
            }
        }
        Ok(out)
    }
}
