//! The PostgreSQL schema and its versioned migrations.
//!
//! The version lives in `gavel_schema`. Migrations run in one transaction that first takes a
//! transaction-level advisory lock, so two processes opening a fresh database at once cannot
//! both apply them, and a failure leaves the old schema intact. A database whose schema is newer
//! than this gavel is refused before anything is written to it.

use gavel_core::StoreError;
use postgres::Client;

/// The schema version this build writes and understands.
pub(crate) const SCHEMA_VERSION: i32 = 2;

/// The advisory-lock class of gavel's keys (`pg_advisory_lock(CLASS, key)`): "gavl".
pub(crate) const LOCK_CLASS: i32 = 0x6761_766c;

/// The key of the migration lock within [`LOCK_CLASS`] (run locks use run ids, from 1).
const MIGRATION_KEY: i32 = 0;

/// The key every slug claim queues on within [`LOCK_CLASS`].
pub(crate) const CLAIM_KEY: i32 = -1;

/// `MIGRATIONS[n]` takes the schema from version `n` to `n + 1`.
const MIGRATIONS: &[&str] = &[
    // 0 -> 1: the same tables as SQLite's schema version 2, runs tagged with their project (one
    // database serves many repositories), spend per month and project (a team budget), the diff gates'
    // decisions, and who holds each run.
    "
    CREATE TABLE runs (
        id          BIGSERIAL PRIMARY KEY,
        project     TEXT NOT NULL,
        workflow    TEXT NOT NULL,
        slug        TEXT NOT NULL,
        status      TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL,
        head_seq    BIGINT NOT NULL
    );
    CREATE INDEX runs_by_slug ON runs (project, workflow, slug);
    CREATE INDEX runs_by_project ON runs (project, id);
    CREATE TABLE blobs (
        hash   TEXT PRIMARY KEY,
        data   BYTEA NOT NULL,
        codec  BIGINT NOT NULL DEFAULT 0,
        depth  BIGINT NOT NULL DEFAULT 0
    );
    CREATE TABLE checkpoints (
        run_id      BIGINT NOT NULL REFERENCES runs(id),
        seq         BIGINT NOT NULL,
        parent_seq  BIGINT,
        node        TEXT,
        next_node   TEXT,
        state_hash  TEXT NOT NULL REFERENCES blobs(hash),
        format      INTEGER NOT NULL,
        created_at  TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
    );
    CREATE TABLE writes (
        run_id      BIGINT NOT NULL REFERENCES runs(id),
        step_id     TEXT NOT NULL,
        value_hash  TEXT NOT NULL REFERENCES blobs(hash),
        created_at  TEXT NOT NULL,
        PRIMARY KEY (run_id, step_id)
    );
    CREATE TABLE events (
        run_id  BIGINT NOT NULL REFERENCES runs(id),
        seq     BIGINT NOT NULL,
        json    TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
    );
    CREATE TABLE spend (
        month    TEXT NOT NULL,
        project  TEXT NOT NULL,
        micros   BIGINT NOT NULL,
        calls    BIGINT NOT NULL,
        PRIMARY KEY (month, project)
    );
    CREATE TABLE audit (
        id       BIGSERIAL PRIMARY KEY,
        key      TEXT NOT NULL UNIQUE,
        project  TEXT NOT NULL,
        line     TEXT NOT NULL
    );
    CREATE INDEX audit_by_project ON audit (project, id);
    CREATE TABLE run_holders (
        run_id       BIGINT PRIMARY KEY REFERENCES runs(id),
        backend_pid  INTEGER NOT NULL,
        pid          BIGINT NOT NULL,
        host         TEXT NOT NULL,
        command      TEXT NOT NULL,
        since        TEXT NOT NULL
    );
    ",
    // 1 -> 2: the spend page's totals by project, day, workflow and role, kept as calls are
    // recorded (`SpendStore::spend_totals`) instead of every call's event being read and
    // decoded: the same tables and rules as SQLite's schema version 4, kept by one trigger on
    // `events` (whichever statement inserts an event) and filled from the events recorded
    // before. `model_calls` has no foreign key: its rows follow events, which have one, and
    // each check would be one more query per call. Measured under load, the trigger costs
    // about 0.85 ms per call on average in a session of four (most of it the session's first
    // call: compiling the function, loading the two tables), against 1.3 ms for one statement
    // with CTEs or a second trigger on `model_calls`.
    r#"
    CREATE TABLE model_calls (
        run_id       BIGINT NOT NULL,
        n            BIGINT NOT NULL,
        day          TEXT NOT NULL,
        role         TEXT NOT NULL,
        cost_micros  BIGINT,
        PRIMARY KEY (run_id, n)
    );
    CREATE TABLE spend_totals (
        project   TEXT NOT NULL,
        day       TEXT NOT NULL,
        workflow  TEXT NOT NULL,
        role      TEXT NOT NULL,
        calls     BIGINT NOT NULL,
        unpriced  BIGINT NOT NULL,
        micros    BIGINT NOT NULL,
        PRIMARY KEY (project, day, workflow, role)
    );
    -- Whether event JSON `j` is a model call its run's ledger counts: what decodes as an
    -- `EventKind::ModelCall` with a ledger.
    CREATE FUNCTION gavel_counted_call(j jsonb) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
        SELECT COALESCE(j->>'event' = 'model_call'
            AND jsonb_typeof(j->'ledger') = 'object'
            AND jsonb_typeof(j->'ledger'->'n') = 'number'
            AND jsonb_typeof(j->'at') = 'string'
            AND jsonb_typeof(j->'role') = 'string', false)
    $$;
    INSERT INTO model_calls (run_id, n, day, role, cost_micros)
    SELECT DISTINCT ON (e.run_id, (j->'ledger'->>'n')::bigint)
           e.run_id, (j->'ledger'->>'n')::bigint, left(j->>'at', 10), j->>'role',
           (j->'ledger'->>'cost_micros')::bigint
    FROM events e CROSS JOIN LATERAL (SELECT e.json::jsonb AS j) AS parsed
    WHERE e.json LIKE '%"model_call"%' AND gavel_counted_call(j)
    ORDER BY e.run_id, (j->'ledger'->>'n')::bigint, e.seq DESC;
    INSERT INTO spend_totals (project, day, workflow, role, calls, unpriced, micros)
    SELECT r.project, c.day, r.workflow, c.role, COUNT(*), COUNT(*) - COUNT(c.cost_micros),
           COALESCE(SUM(c.cost_micros), 0)
    FROM model_calls c JOIN runs r ON r.id = c.run_id
    GROUP BY r.project, c.day, r.workflow, c.role;
    -- A call's record: its run's `model_calls` row and its total; a record replacing an
    -- earlier one of its number moves the call out of the earlier record's total first. Plain
    -- look-ups by key, planned once per connection (`force_generic_plan`).
    CREATE FUNCTION gavel_model_call_recorded() RETURNS trigger LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan AS $$
    DECLARE
        j jsonb := NEW.json::jsonb;
        call_n bigint;
        call_day text;
        call_role text;
        call_cost bigint;
        prev record;
        run record;
    BEGIN
        IF NOT gavel_counted_call(j) THEN
            RETURN NULL;
        END IF;
        call_n := (j->'ledger'->>'n')::bigint;
        call_day := left(j->>'at', 10);
        call_role := j->>'role';
        call_cost := (j->'ledger'->>'cost_micros')::bigint;
        SELECT project, workflow INTO run FROM runs WHERE id = NEW.run_id;
        SELECT day, role, cost_micros INTO prev FROM model_calls
        WHERE run_id = NEW.run_id AND n = call_n;
        IF FOUND THEN
            UPDATE model_calls SET day = call_day, role = call_role, cost_micros = call_cost
            WHERE run_id = NEW.run_id AND n = call_n;
            UPDATE spend_totals SET calls = calls - 1,
                unpriced = unpriced - (prev.cost_micros IS NULL)::int,
                micros = micros - COALESCE(prev.cost_micros, 0)
            WHERE project = run.project AND day = prev.day AND workflow = run.workflow
              AND role = prev.role;
        ELSE
            INSERT INTO model_calls (run_id, n, day, role, cost_micros)
            VALUES (NEW.run_id, call_n, call_day, call_role, call_cost);
        END IF;
        INSERT INTO spend_totals AS t (project, day, workflow, role, calls, unpriced, micros)
        VALUES (run.project, call_day, run.workflow, call_role, 1, (call_cost IS NULL)::int,
                COALESCE(call_cost, 0))
        ON CONFLICT (project, day, workflow, role) DO UPDATE
        SET calls = t.calls + 1, unpriced = t.unpriced + EXCLUDED.unpriced,
            micros = t.micros + EXCLUDED.micros;
        RETURN NULL;
    END
    $$;
    CREATE TRIGGER model_call_recorded AFTER INSERT ON events FOR EACH ROW
        WHEN (NEW.json LIKE '%"model_call"%') EXECUTE FUNCTION gavel_model_call_recorded();
    "#,
];

/// Brings the database's schema to [`SCHEMA_VERSION`], or refuses a newer one.
pub(crate) fn migrate(client: &mut Client, shown: &str) -> Result<(), StoreError> {
    let err = |doing: &'static str| {
        move |e: postgres::Error| StoreError::backend(format!("{doing} ({shown})"), e)
    };
    // The usual case, an up-to-date database: one query, no lock, no DDL.
    if let Ok(rows) = client.query("SELECT version FROM gavel_schema", &[])
        && let [row] = rows.as_slice()
        && row.try_get::<_, i32>(0).is_ok_and(|v| v == SCHEMA_VERSION)
    {
        return Ok(());
    }
    let mut tx = client
        .transaction()
        .map_err(err("starting the migration"))?;
    tx.execute(
        "SELECT pg_advisory_xact_lock($1, $2)",
        &[&LOCK_CLASS, &MIGRATION_KEY],
    )
    .map_err(err("locking the schema"))?;
    tx.batch_execute("CREATE TABLE IF NOT EXISTS gavel_schema (version INTEGER NOT NULL)")
        .map_err(err("reading the schema version"))?;
    let version: i32 = tx
        .query_opt("SELECT version FROM gavel_schema", &[])
        .map_err(err("reading the schema version"))?
        .map_or(0, |row| row.get(0));
    if version > SCHEMA_VERSION {
        return Err(StoreError::Corrupt {
            path: shown.to_owned(),
            message: format!(
                "its schema is version {version}, newer than this gavel understands ({SCHEMA_VERSION}); use a newer gavel"
            ),
        });
    }
    if version == SCHEMA_VERSION {
        return tx.commit().map_err(err("finishing the schema check"));
    }
    for step in &MIGRATIONS[usize::try_from(version).unwrap_or(0)..] {
        tx.batch_execute(step)
            .map_err(err("migrating the schema"))?;
    }
    tx.execute("DELETE FROM gavel_schema", &[])
        .map_err(err("recording the schema version"))?;
    tx.execute(
        "INSERT INTO gavel_schema (version) VALUES ($1)",
        &[&SCHEMA_VERSION],
    )
    .map_err(err("recording the schema version"))?;
    tx.commit().map_err(err("committing the migration"))
}
