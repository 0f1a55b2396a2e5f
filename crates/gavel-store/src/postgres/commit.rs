//! A step's checkpoint on PostgreSQL in one round trip.
//!
//! A step writes its blobs, its checkpoint, its events, the month's spend and the run's new
//! head and status. As a transaction of its own that is five round trips at least (`BEGIN`,
//! locking the run's row, the blobs, the rest, `COMMIT`), and on a fast server the round trips
//! cost more than the commit's WAL flush. So the step is one statement instead, in the
//! implicit transaction the server gives a statement of its own: it is atomic like any
//! transaction, and the server answers only after its commit is durable (`synchronous_commit`),
//! so a step reported done is on disk, and one that fails wrote nothing.
//!
//! The new state is stored as a delta against the head's, which the statement cannot read
//! before it is encoded: the store remembers the head it last wrote of each run ([`Heads`]),
//! and the statement writes only while the run's head is still that checkpoint with that
//! state (its `UPDATE` takes the run's row lock and checks both, every other part of it writes
//! only the rows that update returned). When it is not (another process moved the run, or this
//! process has not written the run yet: the first step after opening), or when events appended
//! meanwhile took the numbers it chose, it wrote nothing and the step is the transaction it
//! always was, which says why it is refused or writes it.
//!
//! A connection lost during the statement leaves unknown whether it committed. The retry (the
//! transaction, once the server is back) looks first: a head that is already exactly this
//! checkpoint was written by the lost statement, and the step is done, not written twice.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use gavel_core::{Checkpoint, ContentHash, Event, NewBlob, RunId, RunStatus, StoreError};

use super::batch::Batch;
use super::events::{append_events, event_json, spend_rows};
use super::tx::is_unique_violation;
use super::{PgStore, Tx};

/// How many runs' heads a store remembers (a process drives one or a few at a time).
const HEADS: usize = 256;

/// The head each run had after this store's last write of it: its seq and its state's hash.
#[derive(Default)]
pub(crate) struct Heads(Mutex<HashMap<RunId, (u64, ContentHash)>>);

impl Heads {
    fn get(&self, run: RunId) -> Option<(u64, ContentHash)> {
        self.map().get(&run).cloned()
    }

    /// Run `run`'s head is now `seq` with state `hash`, as a committed write of this store left
    /// it.
    pub(crate) fn set(&self, run: RunId, seq: u64, hash: ContentHash) {
        let mut map = self.map();
        if map.len() >= HEADS && !map.contains_key(&run) {
            map.clear();
        }
        map.insert(run, (seq, hash));
    }

    fn forget(&self, run: RunId) {
        self.map().remove(&run);
    }

    /// Forgets every head (the connection was replaced: the server may have lost commits).
    pub(crate) fn clear(&self) {
        self.map().clear();
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<RunId, (u64, ContentHash)>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A checkpoint's columns and its events as the statements take them.
struct Step<'c> {
    cp: &'c Checkpoint,
    seq: i64,
    parent: Option<i64>,
    format: i32,
    status: String,
    events: Vec<String>,
    months: Vec<String>,
    micros: Vec<i64>,
}

/// What the one-statement write did.
enum Fast {
    /// The step is committed; its state's hash.
    Done(ContentHash),
    /// Nothing was written: the run's head is not the one remembered.
    Moved,
    /// Not tried: no head remembered (the connection was replaced), or a retry of a statement
    /// whose connection was lost.
    Skipped,
}

/// A checkpoint's statement: the run's head moved (and its row locked) only if it is still the
/// parent with the remembered state, then the blobs, events, spend and checkpoint of the runs
/// that update returned (none when it did not match). Answers whether the head moved, the blob
/// rows added and those already there (with their depths). The rows already there are looked
/// up one index probe per hash: `hash = ANY($5)` got a generic plan that read the whole blobs
/// table (0.16 ms a step after 40 steps, and growing with the table).
///
/// Each array is read through a sub-select (`unnest((SELECT $5::text[]))`) so that the planner
/// sees its length in no plan: a plan for the actual values then costs what the generic plan
/// costs, and PostgreSQL keeps the generic plan after its first five executions. Given the
/// arrays themselves, each custom plan looked cheaper, and planning this statement afresh for
/// every step cost about 0.5 ms, more than the statement itself.
const FAST_SQL: &str = "WITH moved AS (
         UPDATE runs SET status = $18, head_seq = $12, updated_at = $17
         FROM checkpoints c
         WHERE runs.id = $1 AND ($2::text IS NULL OR runs.project = $2) AND runs.head_seq = $3
           AND c.run_id = $1 AND c.seq = $3 AND c.state_hash = $4
         RETURNING runs.id, runs.project
     ),
     found AS (
         SELECT f.hash, f.depth FROM (
             SELECT h.hash, (SELECT b.depth FROM blobs b WHERE b.hash = h.hash) AS depth
             FROM unnest((SELECT $5::text[])) AS h(hash)
         ) AS f
         WHERE f.depth IS NOT NULL
     ),
     added AS (
         INSERT INTO blobs (hash, data, codec, depth)
         SELECT b.hash, b.data, b.codec, b.depth
         FROM moved, unnest((SELECT $5::text[]), (SELECT $6::bytea[]),
                            (SELECT $7::bigint[]), (SELECT $8::bigint[]))
             AS b(hash, data, codec, depth)
         ON CONFLICT (hash) DO NOTHING
         RETURNING hash, depth
     ),
     appended AS (
         INSERT INTO events (run_id, seq, json)
         SELECT moved.id, next.seq + e.ord - 1, e.json
         FROM moved, unnest((SELECT $9::text[])) WITH ORDINALITY AS e(json, ord),
              (SELECT COALESCE(MAX(seq) + 1, 0) AS seq FROM events WHERE run_id = $1) AS next
     ),
     spent AS (
         INSERT INTO spend (month, project, micros, calls)
         SELECT s.month, moved.project, SUM(s.micros)::bigint, COUNT(*)
         FROM moved, unnest((SELECT $10::text[]), (SELECT $11::bigint[])) AS s(month, micros)
         GROUP BY s.month, moved.project
         ON CONFLICT (month, project) DO UPDATE
         SET micros = spend.micros + EXCLUDED.micros, calls = spend.calls + EXCLUDED.calls
     ),
     checkpoint AS (
         INSERT INTO checkpoints (run_id, seq, parent_seq, node, next_node, state_hash, format,
                                  created_at)
         SELECT moved.id, $12, $3, $13, $14, $15, $16, $17 FROM moved
     )
     SELECT (SELECT count(*) FROM moved),
            ARRAY(SELECT hash FROM added), ARRAY(SELECT depth FROM added),
            ARRAY(SELECT hash FROM found), ARRAY(SELECT depth FROM found)";

impl PgStore {
    /// [`gavel_core::RunStore::commit_with_blobs`]: one statement when the run's head is the
    /// one this store wrote last, the transaction otherwise.
    pub(super) fn commit_step(
        &self,
        cp: &Checkpoint,
        events: &[Event],
        status: &RunStatus,
        blobs: &[NewBlob<'_>],
    ) -> Result<(), StoreError> {
        let step = Step::new(cp, events, status)?;
        // Whether a statement was sent whose connection was then lost (it may have committed).
        let sent = Cell::new(false);
        let unsure = Cell::new(false);
        if self.fast_base(cp).is_some() {
            let outcome = self.read("committing a checkpoint", |tx| {
                if sent.replace(true) {
                    unsure.set(true);
                    return Ok(Fast::Skipped);
                }
                match self.fast_base(cp) {
                    Some(base) => self.commit_fast(tx, &step, blobs, &base),
                    None => Ok(Fast::Skipped),
                }
            });
            match outcome {
                Ok(Fast::Done(hash)) => {
                    self.heads.set(cp.run, cp.seq, hash);
                    return Ok(());
                }
                Ok(Fast::Moved) => self.heads.forget(cp.run),
                Ok(Fast::Skipped) => {}
                // Events appended since the statement's snapshot took its numbers: nothing
                // was written, and the transaction numbers them after the run's lock.
                Err(e) if is_unique_violation(&e) => self.heads.forget(cp.run),
                Err(e) => return Err(e),
            }
        }
        let hash = self.tx("committing a checkpoint", |tx| {
            self.commit_classic(tx, &step, blobs, unsure.get())
        })?;
        self.heads.set(cp.run, cp.seq, hash);
        Ok(())
    }

    /// The state hash to encode `cp`'s state against when the one-statement write applies.
    fn fast_base(&self, cp: &Checkpoint) -> Option<ContentHash> {
        let (seq, hash) = self.heads.get(cp.run)?;
        gavel_core::check_commit(cp, seq).ok()?;
        Some(hash)
    }

    fn commit_fast(
        &self,
        tx: &Tx<'_>,
        step: &Step<'_>,
        blobs: &[NewBlob<'_>],
        base: &ContentHash,
    ) -> Result<Fast, StoreError> {
        let cp = step.cp;
        let batch = Batch::new(tx);
        for blob in blobs {
            self.blobs().insert(&batch, blob.bytes, blob.similar)?;
        }
        let hash = self
            .blobs()
            .insert(&batch, &cp.state, std::slice::from_ref(base))?;
        let (hashes, data, codecs, depths) = batch.take_columns();
        let row = tx
            .query_opt(
                "committing a checkpoint",
                FAST_SQL,
                &[
                    &cp.run.0,
                    &self.project(),
                    &step.parent,
                    &base.as_str(),
                    &hashes,
                    &data,
                    &codecs,
                    &depths,
                    &step.events,
                    &step.months,
                    &step.micros,
                    &step.seq,
                    &cp.node,
                    &cp.next,
                    &hash.as_str(),
                    &step.format,
                    &cp.created_at,
                    &step.status,
                ],
            )?
            .ok_or_else(|| self.corrupt("committing a checkpoint returned nothing".into()))?;
        if row.get::<_, i64>(0) == 0 {
            return Ok(Fast::Moved);
        }
        Batch::settle(self.blobs(), row.get(1), row.get(2));
        Batch::settle(self.blobs(), row.get(3), row.get(4));
        Ok(Fast::Done(hash))
    }

    /// The step as a transaction: the run's row locked and its head checked first. `unsure`:
    /// a statement writing this step lost its connection, and may have committed.
    fn commit_classic(
        &self,
        tx: &Tx<'_>,
        step: &Step<'_>,
        blobs: &[NewBlob<'_>],
        unsure: bool,
    ) -> Result<ContentHash, StoreError> {
        let cp = step.cp;
        let (head, head_state) = self.lock_head_and_state(tx, cp.run)?;
        if unsure && head == cp.seq && self.is_head(tx, step)? {
            return Ok(ContentHash::of(&cp.state));
        }
        gavel_core::check_commit(cp, head)?;
        for blob in blobs {
            self.blobs().insert(tx, blob.bytes, blob.similar)?;
        }
        // A state differs from its parent's (the head's, checked above) in a few fields:
        // store it as a delta against it.
        let parent_state = head_state.filter(|_| step.parent.is_some());
        let hash = self
            .blobs()
            .insert(tx, &cp.state, parent_state.as_slice())?;
        self.add_spend(tx, cp.run, &step.months, &step.micros)?;
        // The checkpoint, its events and the run's new head in one statement (the run's row
        // lock is held, so the events' numbers are free).
        tx.execute(
            "writing a checkpoint",
            concat!(
                append_events!(),
                ", checkpoint AS (
                     INSERT INTO checkpoints (run_id, seq, parent_seq, node, next_node,
                                              state_hash, format, created_at)
                     VALUES ($1, $3, $4, $5, $6, $7, $8, $9)
                 )
                 UPDATE runs SET status = $10, head_seq = $3, updated_at = $9 WHERE id = $1"
            ),
            &[
                &cp.run.0,
                &step.events,
                &step.seq,
                &step.parent,
                &cp.node,
                &cp.next,
                &hash.as_str(),
                &step.format,
                &cp.created_at,
                &step.status,
            ],
        )?;
        Ok(hash)
    }

    /// Whether the run's checkpoint `step.cp.seq` is exactly this one (the step was written).
    fn is_head(&self, tx: &Tx<'_>, step: &Step<'_>) -> Result<bool, StoreError> {
        let cp = step.cp;
        let state = ContentHash::of(&cp.state);
        let row = tx.query_opt(
            "checking a checkpoint",
            "SELECT 1 FROM checkpoints WHERE run_id = $1 AND seq = $2
                 AND parent_seq IS NOT DISTINCT FROM $3 AND node IS NOT DISTINCT FROM $4
                 AND next_node IS NOT DISTINCT FROM $5 AND state_hash = $6 AND format = $7",
            &[
                &cp.run.0,
                &step.seq,
                &step.parent,
                &cp.node,
                &cp.next,
                &state.as_str(),
                &step.format,
            ],
        )?;
        Ok(row.is_some())
    }

    /// The head seq of `run` and its checkpoint's state hash (a new checkpoint's state is
    /// stored as a delta against it), the run's row locked until the transaction ends; or
    /// [`StoreError::UnknownRun`].
    fn lock_head_and_state(
        &self,
        tx: &Tx<'_>,
        run: RunId,
    ) -> Result<(u64, Option<ContentHash>), StoreError> {
        let row = tx
            .query_opt(
                "locking a run",
                "SELECT r.head_seq, c.state_hash FROM runs r
                 LEFT JOIN checkpoints c ON c.run_id = r.id AND c.seq = r.head_seq
                 WHERE r.id = $1 AND ($2::text IS NULL OR r.project = $2) FOR UPDATE OF r",
                &[&run.0, &self.project()],
            )?
            .ok_or(StoreError::UnknownRun(run))?;
        let state = row.get::<_, Option<String>>(1).map(ContentHash::from_hex);
        let head: i64 = row.get(0);
        let head = u64::try_from(head)
            .map_err(|_| self.corrupt(format!("a negative sequence number {head}")))?;
        Ok((head, state))
    }
}

impl<'c> Step<'c> {
    fn new(cp: &'c Checkpoint, events: &[Event], status: &RunStatus) -> Result<Self, StoreError> {
        let seq = |seq: u64| {
            i64::try_from(seq)
                .map_err(|e| StoreError::backend(format!("sequence number {seq} is too large"), e))
        };
        let (months, micros) = spend_rows(events);
        Ok(Self {
            cp,
            seq: seq(cp.seq)?,
            parent: cp.parent.map(seq).transpose()?,
            format: i32::try_from(cp.format).map_err(|e| {
                StoreError::backend(format!("checkpoint format {} is too large", cp.format), e)
            })?,
            status: serde_json::to_string(status)
                .map_err(|e| StoreError::backend("encoding a run status", e))?,
            events: event_json(events)?,
            months,
            micros,
        })
    }
}
