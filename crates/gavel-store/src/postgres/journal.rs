//! A step's result journaled on PostgreSQL in one round trip.
//!
//! Journaling a result (a model's answer, a filed issue) is the one write between a side effect
//! and its record, so it is the window a crash can fall into: it should be short. As a
//! transaction it took six round trips (`BEGIN`, locking the run's row, each blob, looking for
//! an earlier result, the result, `COMMIT`). It is one statement now, in the implicit
//! transaction of its own, durable before the server answers, like a step's checkpoint
//! ([`super::commit`]): the run's row locked, then the blobs and the result written unless the
//! step has a result already, which it answers instead.
//!
//! A result is written at most once and never changed, so the statement needs no head
//! remembered and is safe to send again when its connection was lost: a retry finds its own
//! result and is done. Only a result another process wrote after the statement's snapshot
//! (its key then taken) leaves it to the transaction, which looks again under the run's lock.

use gavel_core::{ContentHash, RunId, StoreError};

use super::PgStore;
use super::batch::Batch;

/// A step result's statement: the run's row locked; the blobs and the result added unless the
/// step has one. Answers whether the run is there, the step's earlier result, and the blob
/// rows added and those already there (with their depths). One index probe per hash, and the
/// arrays read through sub-selects so that the generic plan is kept, as in [`super::commit`].
const JOURNAL_SQL: &str = "WITH locked AS (
         SELECT id FROM runs WHERE id = $1 AND ($2::text IS NULL OR project = $2) FOR UPDATE
     ),
     existing AS (
         SELECT value_hash FROM writes WHERE run_id = $1 AND step_id = $3
     ),
     found AS (
         SELECT f.hash, f.depth FROM (
             SELECT h.hash, (SELECT b.depth FROM blobs b WHERE b.hash = h.hash) AS depth
             FROM unnest((SELECT $6::text[])) AS h(hash)
         ) AS f
         WHERE f.depth IS NOT NULL
     ),
     added AS (
         INSERT INTO blobs (hash, data, codec, depth)
         SELECT b.hash, b.data, b.codec, b.depth
         FROM locked, unnest((SELECT $6::text[]), (SELECT $7::bytea[]),
                             (SELECT $8::bigint[]), (SELECT $9::bigint[]))
             AS b(hash, data, codec, depth)
         WHERE NOT EXISTS (SELECT 1 FROM existing)
         ON CONFLICT (hash) DO NOTHING
         RETURNING hash, depth
     ),
     journaled AS (
         INSERT INTO writes (run_id, step_id, value_hash, created_at)
         SELECT id, $3, $4, $5 FROM locked WHERE NOT EXISTS (SELECT 1 FROM existing)
     )
     SELECT (SELECT count(*) FROM locked), (SELECT value_hash FROM existing),
            ARRAY(SELECT hash FROM added), ARRAY(SELECT depth FROM added),
            ARRAY(SELECT hash FROM found), ARRAY(SELECT depth FROM found)";

impl PgStore {
    /// Journals `value` as the result of `step` with `blobs`, in one statement. A unique
    /// violation means another process journaled the step meanwhile: the caller's
    /// transaction sorts it out.
    pub(super) fn journal_fast(
        &self,
        run: RunId,
        step: &str,
        value: &[u8],
        blobs: &[&[u8]],
        now: &str,
    ) -> Result<(), StoreError> {
        let doing = "journaling a step result";
        let found_hash = self.read(doing, |tx| {
            let batch = Batch::new(tx);
            for bytes in blobs {
                self.blobs().insert(&batch, bytes, &[])?;
            }
            let hash = self.blobs().insert(&batch, value, &[])?;
            let (hashes, data, codecs, depths) = batch.take_columns();
            let row = tx
                .query_opt(
                    doing,
                    JOURNAL_SQL,
                    &[
                        &run.0,
                        &self.project(),
                        &step,
                        &hash.as_str(),
                        &now,
                        &hashes,
                        &data,
                        &codecs,
                        &depths,
                    ],
                )?
                .ok_or_else(|| self.corrupt(format!("{doing} returned nothing")))?;
            if row.get::<_, i64>(0) == 0 {
                return Err(StoreError::UnknownRun(run));
            }
            if let Some(existing) = row.get::<_, Option<String>>(1) {
                // Nothing was written.
                return Ok(Some((hash, ContentHash::from_hex(existing))));
            }
            Batch::settle(self.blobs(), row.get(2), row.get(3));
            Batch::settle(self.blobs(), row.get(4), row.get(5));
            Ok(None)
        })?;
        match found_hash {
            Some((ours, existing)) if ours != existing => Err(StoreError::WriteConflict {
                run,
                step: step.to_owned(),
            }),
            _ => Ok(()),
        }
    }
}
