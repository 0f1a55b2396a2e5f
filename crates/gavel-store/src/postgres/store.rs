//! [`RunStore`] on PostgreSQL: the same rows as SQLite's store, each write one transaction that
//! begins by locking its run's row.

use gavel_core::{
    CHECKPOINT_FORMAT, Checkpoint, CheckpointMeta, ContentHash, Event, LockInfo, NewBlob, RunId,
    RunLock, RunRecord, RunStatus, RunStore, StoreError,
};
use postgres::Row;

use super::tx::is_unique_violation;
use super::{PgStore, Tx, lock, schema};

impl PgStore {
    pub(super) fn corrupt(&self, message: String) -> StoreError {
        StoreError::Corrupt {
            path: self.shown().to_owned(),
            message,
        }
    }

    pub(super) fn record(&self, row: &Row) -> Result<RunRecord, StoreError> {
        let id: i64 = row.get(0);
        let status: String = row.get(3);
        Ok(RunRecord {
            id: RunId(id),
            status: self.decode_status(id, &status)?,
            workflow: row.get(1),
            slug: row.get(2),
            created_at: row.get(4),
            updated_at: row.get(5),
            head_seq: self.seq(row.get(6))?,
        })
    }

    fn decode_status(&self, run: i64, json: &str) -> Result<RunStatus, StoreError> {
        serde_json::from_str(json)
            .map_err(|e| self.corrupt(format!("the status of run {run} cannot be read: {e}")))
    }

    fn seq(&self, value: i64) -> Result<u64, StoreError> {
        u64::try_from(value)
            .map_err(|_| self.corrupt(format!("a negative sequence number {value}")))
    }

    fn meta(&self, row: &Row) -> Result<CheckpointMeta, StoreError> {
        let format: i32 = row.get(5);
        Ok(CheckpointMeta {
            seq: self.seq(row.get(0))?,
            parent: row
                .get::<_, Option<i64>>(1)
                .map(|p| self.seq(p))
                .transpose()?,
            node: row.get(2),
            next: row.get(3),
            state_hash: ContentHash::from_hex(row.get::<_, String>(4)),
            format: u32::try_from(format)
                .map_err(|_| self.corrupt(format!("a negative checkpoint format {format}")))?,
            created_at: row.get(6),
        })
    }

    /// The head seq of `run`, its row locked until the transaction ends; or
    /// [`StoreError::UnknownRun`].
    fn lock_head(&self, tx: &Tx<'_>, run: RunId) -> Result<u64, StoreError> {
        let row = tx.query_opt(
            "locking a run",
            "SELECT head_seq FROM runs
             WHERE id = $1 AND ($2::text IS NULL OR project = $2) FOR UPDATE",
            &[&run.0, &self.project()],
        )?;
        self.seq(row.ok_or(StoreError::UnknownRun(run))?.get(0))
    }

    /// The head seq of `run`, or [`StoreError::UnknownRun`].
    fn head_seq(&self, tx: &Tx<'_>, run: RunId) -> Result<u64, StoreError> {
        let row = tx.query_opt(
            "reading a run",
            "SELECT head_seq FROM runs WHERE id = $1 AND ($2::text IS NULL OR project = $2)",
            &[&run.0, &self.project()],
        )?;
        self.seq(row.ok_or(StoreError::UnknownRun(run))?.get(0))
    }

    fn new_run(
        &self,
        workflow: &str,
        slug: &str,
        state: &[u8],
        next: &str,
        now: &str,
        claim: bool,
    ) -> Result<RunId, StoreError> {
        let status = encode_status(&RunStatus::Running)?;
        let format = i32::try_from(CHECKPOINT_FORMAT).unwrap_or(i32::MAX);
        let project = self.project().ok_or_else(|| StoreError::Backend {
            message: "a store opened for every project cannot start runs".into(),
            source: None,
        })?;
        let (id, hash) = self.tx("creating a run", |tx| {
            if claim {
                // Every claim queues on one key, so two machines cannot both pass the check.
                tx.execute(
                    "claiming a slug",
                    "SELECT pg_advisory_xact_lock($1, $2)",
                    &[&schema::LOCK_CLASS, &schema::CLAIM_KEY],
                )?;
                let holders = tx.query(
                    "looking for runs using a slug",
                    "SELECT id, status FROM runs
                     WHERE project = $1 AND workflow = $2 AND slug = $3 ORDER BY id",
                    &[&project, &workflow, &slug],
                )?;
                for row in holders {
                    let id: i64 = row.get(0);
                    if !self.decode_status(id, row.get(1))?.is_terminal() {
                        return Err(StoreError::SlugTaken {
                            slug: slug.to_owned(),
                            run: RunId(id),
                        });
                    }
                }
            }
            let hash = self.blobs().insert(tx, state, &[])?;
            let id: i64 = tx
                .query_opt(
                    "creating a run",
                    "INSERT INTO runs
                         (project, workflow, slug, status, created_at, updated_at, head_seq)
                     VALUES ($1, $2, $3, $4, $5, $5, 0) RETURNING id",
                    &[&project, &workflow, &slug, &status, &now],
                )?
                .ok_or_else(|| self.corrupt("creating a run returned no id".into()))?
                .get(0);
            tx.execute(
                "writing the initial checkpoint",
                "INSERT INTO checkpoints
                     (run_id, seq, parent_seq, node, next_node, state_hash, format, created_at)
                 VALUES ($1, 0, NULL, NULL, $2, $3, $4, $5)",
                &[&id, &next, &hash.as_str(), &format, &now],
            )?;
            Ok((RunId(id), hash))
        })?;
        self.heads.set(id, 0, hash);
        Ok(id)
    }

    fn write_hash(
        &self,
        tx: &Tx<'_>,
        run: RunId,
        step: &str,
    ) -> Result<Option<ContentHash>, StoreError> {
        Ok(tx
            .query_opt(
                "reading a step result",
                "SELECT value_hash FROM writes WHERE run_id = $1 AND step_id = $2",
                &[&run.0, &step],
            )?
            .map(|row| ContentHash::from_hex(row.get::<_, String>(0))))
    }

    fn blob(&self, tx: &Tx<'_>, hash: &ContentHash) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.blobs().read(tx, hash)?.map(|b| b.to_vec()))
    }
}

impl PgStore {
    /// The project run `id` belongs to, whichever it is; `None` when there is no such run. A
    /// caller that found no run `id` in its own project uses this to say where it is.
    pub fn project_of(&self, id: RunId) -> Result<Option<String>, StoreError> {
        let row = self.read("reading a run", |tx| {
            tx.query_opt(
                "reading a run",
                "SELECT project FROM runs WHERE id = $1",
                &[&id.0],
            )
        })?;
        Ok(row.map(|r| r.get(0)))
    }

    /// The newest `limit` runs of every project in the database, newest first, each with its
    /// project.
    pub fn runs_of_all_projects(&self, limit: u32) -> Result<Vec<(String, RunRecord)>, StoreError> {
        let limit = i64::from(limit);
        let rows = self.read("listing runs", |tx| {
            tx.query(
                "listing runs",
                "SELECT id, workflow, slug, status, created_at, updated_at, head_seq, project
                 FROM runs ORDER BY id DESC LIMIT $1",
                &[&limit],
            )
        })?;
        rows.iter()
            .map(|row| Ok((row.get(7), self.record(row)?)))
            .collect()
    }
}

fn encode_status(status: &RunStatus) -> Result<String, StoreError> {
    serde_json::to_string(status).map_err(|e| StoreError::backend("encoding a run status", e))
}

/// A sequence number as PostgreSQL stores it.
fn sql_seq(seq: u64) -> Result<i64, StoreError> {
    i64::try_from(seq)
        .map_err(|e| StoreError::backend(format!("sequence number {seq} is too large"), e))
}

impl RunStore for PgStore {
    fn create_run(
        &self,
        workflow: &str,
        slug: &str,
        state: &[u8],
        next: &str,
        now: &str,
    ) -> Result<RunId, StoreError> {
        self.new_run(workflow, slug, state, next, now, false)
    }

    fn create_run_claiming_slug(
        &self,
        workflow: &str,
        slug: &str,
        state: &[u8],
        next: &str,
        now: &str,
    ) -> Result<RunId, StoreError> {
        self.new_run(workflow, slug, state, next, now, true)
    }

    fn run(&self, id: RunId) -> Result<Option<RunRecord>, StoreError> {
        let row = self.read("reading a run", |tx| {
            tx.query_opt(
                "reading a run",
                "SELECT id, workflow, slug, status, created_at, updated_at, head_seq
                 FROM runs WHERE id = $1 AND ($2::text IS NULL OR project = $2)",
                &[&id.0, &self.project()],
            )
        })?;
        row.map(|row| self.record(&row)).transpose()
    }

    fn runs(&self) -> Result<Vec<RunRecord>, StoreError> {
        let rows = self.read("listing runs", |tx| {
            tx.query(
                "listing runs",
                "SELECT id, workflow, slug, status, created_at, updated_at, head_seq
                 FROM runs WHERE ($1::text IS NULL OR project = $1) ORDER BY id",
                &[&self.project()],
            )
        })?;
        rows.iter().map(|row| self.record(row)).collect()
    }

    fn runs_with_slug(
        &self,
        slug: &str,
        workflow: Option<&str>,
    ) -> Result<Vec<RunRecord>, StoreError> {
        let rows = self.read("looking for runs by name", |tx| {
            tx.query(
                "looking for runs by name",
                "SELECT id, workflow, slug, status, created_at, updated_at, head_seq
                 FROM runs WHERE ($1::text IS NULL OR project = $1) AND slug = $2
                     AND ($3::text IS NULL OR workflow = $3)
                 ORDER BY id",
                &[&self.project(), &slug, &workflow],
            )
        })?;
        rows.iter().map(|row| self.record(row)).collect()
    }

    fn recent_runs(&self, limit: usize) -> Result<Vec<RunRecord>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self.read("listing runs", |tx| {
            tx.query(
                "listing runs",
                "SELECT id, workflow, slug, status, created_at, updated_at, head_seq
                 FROM runs WHERE ($1::text IS NULL OR project = $1) ORDER BY id DESC LIMIT $2",
                &[&self.project(), &limit],
            )
        })?;
        rows.iter().map(|row| self.record(row)).collect()
    }

    fn find_runs(
        &self,
        filter: &gavel_core::RunFilter,
        offset: usize,
        limit: usize,
    ) -> Result<gavel_core::RunPage, StoreError> {
        self.select_runs(filter, offset, limit)
    }

    fn workflows(&self) -> Result<Vec<String>, StoreError> {
        self.select_workflows()
    }

    fn set_status(
        &self,
        id: RunId,
        status: &RunStatus,
        events: &[Event],
        now: &str,
    ) -> Result<(), StoreError> {
        let status = encode_status(status)?;
        self.tx("updating a run's status", |tx| {
            self.lock_head(tx, id)?;
            tx.execute(
                "updating a run's status",
                "UPDATE runs SET status = $1, updated_at = $2 WHERE id = $3",
                &[&status, &now, &id.0],
            )?;
            self.insert_events(tx, id, events)
        })
    }

    fn commit_with_blobs(
        &self,
        cp: &Checkpoint,
        events: &[Event],
        status: &RunStatus,
        blobs: &[NewBlob<'_>],
    ) -> Result<(), StoreError> {
        self.commit_step(cp, events, status, blobs)
    }

    fn head(&self, id: RunId) -> Result<Option<Checkpoint>, StoreError> {
        self.read("reading the head checkpoint", |tx| {
            let head = sql_seq(self.head_seq(tx, id)?)?;
            let row = tx.query_opt(
                "reading the head checkpoint",
                "SELECT seq, parent_seq, node, next_node, state_hash, format, created_at
                 FROM checkpoints WHERE run_id = $1 AND seq = $2",
                &[&id.0, &head],
            )?;
            let Some(row) = row else {
                return Ok(None);
            };
            let meta = self.meta(&row)?;
            let state = self
                .blob(tx, &meta.state_hash)?
                .ok_or_else(|| StoreError::MissingBlob(meta.state_hash.clone()))?;
            Ok(Some(Checkpoint {
                run: id,
                seq: meta.seq,
                parent: meta.parent,
                node: meta.node,
                next: meta.next,
                state,
                format: meta.format,
                created_at: meta.created_at,
            }))
        })
    }

    fn checkpoints(&self, id: RunId) -> Result<Vec<CheckpointMeta>, StoreError> {
        let rows = self.read("listing checkpoints", |tx| {
            self.head_seq(tx, id)?;
            tx.query(
                "listing checkpoints",
                "SELECT seq, parent_seq, node, next_node, state_hash, format, created_at
                 FROM checkpoints WHERE run_id = $1 ORDER BY seq",
                &[&id.0],
            )
        })?;
        rows.iter().map(|row| self.meta(row)).collect()
    }

    fn journal(&self, id: RunId) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        self.read("listing step results", |tx| {
            self.head_seq(tx, id)?;
            let rows = tx.query(
                "listing step results",
                "SELECT step_id, value_hash FROM writes WHERE run_id = $1 ORDER BY step_id",
                &[&id.0],
            )?;
            rows.iter()
                .map(|row| {
                    let hash = ContentHash::from_hex(row.get::<_, String>(1));
                    let value = self.blob(tx, &hash)?.ok_or(StoreError::MissingBlob(hash))?;
                    Ok((row.get(0), value))
                })
                .collect()
        })
    }

    fn journal_steps(&self, id: RunId) -> Result<Vec<String>, StoreError> {
        self.read("listing step results", |tx| {
            self.head_seq(tx, id)?;
            let rows = tx.query(
                "listing step results",
                "SELECT step_id FROM writes WHERE run_id = $1",
                &[&id.0],
            )?;
            Ok(rows.iter().map(|row| row.get(0)).collect())
        })
    }

    fn get_write(&self, id: RunId, step: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.read("reading a step result", |tx| {
            self.head_seq(tx, id)?;
            match self.write_hash(tx, id, step)? {
                None => Ok(None),
                Some(hash) => self
                    .blob(tx, &hash)?
                    .map(Some)
                    .ok_or(StoreError::MissingBlob(hash)),
            }
        })
    }

    fn put_write(&self, id: RunId, step: &str, value: &[u8], now: &str) -> Result<(), StoreError> {
        self.put_write_with_blobs(id, step, value, &[], now)
    }

    fn put_write_with_blobs(
        &self,
        id: RunId,
        step: &str,
        value: &[u8],
        blobs: &[&[u8]],
        now: &str,
    ) -> Result<(), StoreError> {
        match self.journal_fast(id, step, value, blobs, now) {
            // Another process journaled the step meanwhile: look again under the run's lock.
            Err(e) if is_unique_violation(&e) => {}
            done => return done,
        }
        self.tx("journaling a step result", |tx| {
            self.lock_head(tx, id)?;
            for bytes in blobs {
                self.blobs().insert(tx, bytes, &[])?;
            }
            if let Some(existing) = self.write_hash(tx, id, step)? {
                return if existing == ContentHash::of(value) {
                    Ok(())
                } else {
                    Err(StoreError::WriteConflict {
                        run: id,
                        step: step.to_owned(),
                    })
                };
            }
            let hash = self.blobs().insert(tx, value, &[])?;
            tx.execute(
                "journaling a step result",
                "INSERT INTO writes (run_id, step_id, value_hash, created_at)
                 VALUES ($1, $2, $3, $4)",
                &[&id.0, &step, &hash.as_str(), &now],
            )?;
            Ok(())
        })
    }

    fn events(&self, id: RunId) -> Result<Vec<Event>, StoreError> {
        let rows = self.read("reading the event timeline", |tx| {
            self.head_seq(tx, id)?;
            tx.query(
                "reading the event timeline",
                "SELECT seq, json FROM events WHERE run_id = $1 ORDER BY seq",
                &[&id.0],
            )
        })?;
        rows.iter()
            .map(|row| {
                let seq: i64 = row.get(0);
                serde_json::from_str(row.get(1)).map_err(|e| {
                    self.corrupt(format!("event {seq} of run {id} cannot be read: {e}"))
                })
            })
            .collect()
    }

    fn put_blob(&self, bytes: &[u8]) -> Result<ContentHash, StoreError> {
        self.put_blob_sharing(bytes, &[])
    }

    fn put_blob_sharing(
        &self,
        bytes: &[u8],
        similar: &[ContentHash],
    ) -> Result<ContentHash, StoreError> {
        self.tx("storing a blob", |tx| {
            self.blobs().insert(tx, bytes, similar)
        })
    }

    fn get_blob(&self, hash: &ContentHash) -> Result<Option<Vec<u8>>, StoreError> {
        self.read("reading a blob", |tx| self.blob(tx, hash))
    }

    fn lock(&self, id: RunId, holder: &LockInfo) -> Result<RunLock, StoreError> {
        self.read("reading a run", |tx| self.head_seq(tx, id))?;
        lock::lock_run(self, id, holder)
    }

    fn holder(&self, id: RunId) -> Result<Option<LockInfo>, StoreError> {
        self.read("reading a run", |tx| self.head_seq(tx, id))?;
        lock::holder(self, id)
    }
}
