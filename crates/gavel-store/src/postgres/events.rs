//! A run's timeline in PostgreSQL: events appended in one statement, numbered after the last
//! one under the run's row lock, and the month's spend added up with each model call.

use gavel_core::{Event, EventKind, RunId, StoreError};

use super::{PgStore, Tx};

/// The start of a statement appending the events `$2` (JSON texts, in order) to run `$1`,
/// numbered after its last one; the caller holds the run's row lock and adds the main query.
macro_rules! append_events {
    () => {
        "WITH appended AS (
             INSERT INTO events (run_id, seq, json)
             SELECT $1, next.seq + e.ord - 1, e.json
             FROM unnest($2::text[]) WITH ORDINALITY AS e(json, ord),
                  (SELECT COALESCE(MAX(seq) + 1, 0) AS seq FROM events WHERE run_id = $1) AS next
         )"
    };
}
pub(crate) use append_events;

impl PgStore {
    /// Appends `events` to `run`'s timeline in one statement; the caller holds the run's row
    /// lock.
    pub(crate) fn insert_events(
        &self,
        tx: &Tx<'_>,
        run: RunId,
        events: &[Event],
    ) -> Result<(), StoreError> {
        if events.is_empty() {
            return Ok(());
        }
        let json = event_json(events)?;
        tx.execute(
            "appending events",
            concat!(append_events!(), " SELECT 1"),
            &[&run.0, &json],
        )?;
        let (months, micros) = spend_rows(events);
        self.add_spend(tx, run, &months, &micros)
    }

    /// Adds model calls to their months' running totals, in one statement (the caller writes
    /// the calls' events in the same transaction): `months[i]` and `micros[i]` are one call's
    /// ([`spend_rows`]).
    pub(crate) fn add_spend(
        &self,
        tx: &Tx<'_>,
        run: RunId,
        months: &[String],
        micros: &[i64],
    ) -> Result<(), StoreError> {
        if months.is_empty() {
            return Ok(());
        }
        tx.execute(
            "adding up spend",
            "INSERT INTO spend (month, project, micros, calls)
             SELECT s.month, r.project, SUM(s.micros)::bigint, COUNT(*)
             FROM runs r, unnest($2::text[], $3::bigint[]) AS s(month, micros)
             WHERE r.id = $1
             GROUP BY s.month, r.project
             ON CONFLICT (month, project) DO UPDATE
             SET micros = spend.micros + EXCLUDED.micros, calls = spend.calls + EXCLUDED.calls",
            &[&run.0, &months, &micros],
        )?;
        Ok(())
    }
}

/// The model calls among `events` as spend rows: each one's month (`YYYY-MM` of its time) and
/// cost in micro-dollars (0 when unknown), in two lists.
pub(crate) fn spend_rows(events: &[Event]) -> (Vec<String>, Vec<i64>) {
    let mut rows = (Vec::new(), Vec::new());
    for event in events {
        if let EventKind::ModelCall { ledger, .. } = &event.kind
            && let Some(month) = event.at.get(..7)
        {
            let micros = ledger
                .as_ref()
                .and_then(|l| l.cost_micros)
                .map_or(0, |m| i64::try_from(m).unwrap_or(i64::MAX));
            rows.0.push(month.to_owned());
            rows.1.push(micros);
        }
    }
    rows
}

/// `events` as the JSON texts the events table holds.
pub(crate) fn event_json(events: &[Event]) -> Result<Vec<String>, StoreError> {
    events
        .iter()
        .map(|e| serde_json::to_string(e).map_err(|e| StoreError::backend("encoding an event", e)))
        .collect()
}

impl PgStore {
    /// Every model call of this store's runs (this project's, or all projects' when the store
    /// sees them all) in one query, for the spend report: the events whose JSON names the
    /// `model_call` kind, by run then in timeline order. The LIKE only narrows what is decoded;
    /// the decoded kind decides.
    pub(crate) fn select_model_calls(&self) -> Result<Vec<(RunId, Event)>, StoreError> {
        let rows = self.read("reading the model calls", |tx| {
            tx.query(
                "reading the model calls",
                "SELECT e.run_id, e.seq, e.json FROM events e JOIN runs r ON r.id = e.run_id
                 WHERE ($1::text IS NULL OR r.project = $1)
                   AND e.json LIKE '%\"event\":\"model_call\"%'
                 ORDER BY e.run_id, e.seq",
                &[&self.project()],
            )
        })?;
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let (run, seq): (i64, i64) = (row.get(0), row.get(1));
            let event: Event = serde_json::from_str(row.get(2)).map_err(|e| {
                self.corrupt(format!("event {seq} of run {run} cannot be read: {e}"))
            })?;
            if matches!(event.kind, EventKind::ModelCall { .. }) {
                out.push((RunId(run), event));
            }
        }
        Ok(out)
    }
}
