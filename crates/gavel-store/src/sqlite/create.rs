//! The two writes whose atomicity matters most: creating a run while claiming its slug (of
//! several processes starting the same slug at once, exactly one gets the run), and journaling
//! a step's result with the blobs it names in one transaction (a paid model answer is safe the
//! moment one commit ends).

use gavel_core::{CHECKPOINT_FORMAT, ContentHash, RunId, RunStatus, StoreError};
use rusqlite::params;

use super::{SqliteStore, encode_status};

/// The runs of workflow `?1` named `?2`, from the `runs_by_slug` index.
pub(super) const SLUG_HOLDERS: &str =
    "SELECT id, status FROM runs WHERE slug = ?2 AND workflow = ?1 ORDER BY id";

impl SqliteStore {
    /// Creates a run; with `claim`, only if no unfinished run of `workflow` uses `slug`,
    /// checked inside the same write transaction (taken with `BEGIN IMMEDIATE`, so two
    /// processes cannot both pass the check).
    pub(super) fn new_run(
        &self,
        workflow: &str,
        slug: &str,
        state: &[u8],
        next: &str,
        now: &str,
        claim: bool,
    ) -> Result<RunId, StoreError> {
        let status = encode_status(&RunStatus::Running)?;
        let mut conn = self.conn();
        let tx = self.write_tx(&mut conn)?;
        if claim {
            let holders: Vec<(i64, String)> = tx
                .prepare_cached(SLUG_HOLDERS)
                .and_then(|mut stmt| {
                    stmt.query_map(params![workflow, slug], |row| {
                        Ok((row.get(0)?, row.get(1)?))
                    })?
                    .collect()
                })
                .map_err(self.err("looking for runs using a slug"))?;
            for (id, status) in holders {
                if !self.decode_status(id, &status)?.is_terminal() {
                    return Err(StoreError::SlugTaken {
                        slug: slug.to_owned(),
                        run: RunId(id),
                    });
                }
            }
        }
        let hash = self.insert_blob(&tx, state, &[])?;
        tx.prepare_cached(
            "INSERT INTO runs (workflow, slug, status, created_at, updated_at, head_seq)
             VALUES (?1, ?2, ?3, ?4, ?4, 0)",
        )
        .and_then(|mut stmt| stmt.execute(params![workflow, slug, status, now]))
        .map_err(self.err("creating a run"))?;
        let id = tx.last_insert_rowid();
        tx.prepare_cached(
            "INSERT INTO checkpoints
                 (run_id, seq, parent_seq, node, next_node, state_hash, format, created_at)
             VALUES (?1, 0, NULL, NULL, ?2, ?3, ?4, ?5)",
        )
        .and_then(|mut stmt| stmt.execute(params![id, next, hash.as_str(), CHECKPOINT_FORMAT, now]))
        .map_err(self.err("writing the initial checkpoint"))?;
        tx.commit().map_err(self.err("committing a new run"))?;
        Ok(RunId(id))
    }

    /// Journals a step's result and the blobs it names in one write transaction.
    pub(super) fn journal(
        &self,
        id: RunId,
        step: &str,
        value: &[u8],
        blobs: &[&[u8]],
        now: &str,
    ) -> Result<(), StoreError> {
        let mut conn = self.conn();
        let tx = self.write_tx(&mut conn)?;
        self.head_seq(&tx, id)?;
        for bytes in blobs {
            self.insert_blob(&tx, bytes, &[])?;
        }
        if let Some(existing) = self.write_hash(&tx, id, step)? {
            return if existing == ContentHash::of(value) {
                Ok(())
            } else {
                Err(StoreError::WriteConflict {
                    run: id,
                    step: step.to_owned(),
                })
            };
        }
        let hash = self.insert_blob(&tx, value, &[])?;
        tx.prepare_cached(
            "INSERT INTO writes (run_id, step_id, value_hash, created_at) VALUES (?1, ?2, ?3, ?4)",
        )
        .and_then(|mut stmt| stmt.execute(params![id.0, step, hash.as_str(), now]))
        .map_err(self.err("journaling a step result"))?;
        tx.commit().map_err(self.err("committing a step result"))
    }
}
