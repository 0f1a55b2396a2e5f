//! The spend page's totals in a store whose runs were recorded before the stores kept them
//! (SQLite schema version 3, PostgreSQL 1): the migration fills them from the recorded events,
//! replays included, and the triggers keep them from then on.

use gavel_core::{RunStatus, SpendTotal, Store};
use gavel_store::{PgStore, SqliteStore};
use gavel_store_testkit::TempPostgres;
use gavel_store_testkit::conformance::{SPEND_FIXTURE_TOTALS, priced_call, record_spend_fixture};

/// The fixture's totals as the store gives them, sorted.
fn totals(store: &dyn Store) -> Vec<SpendTotal> {
    let mut totals = store.spend_totals().expect("spend totals");
    totals.sort();
    totals
}

fn fixture_totals() -> Vec<SpendTotal> {
    SPEND_FIXTURE_TOTALS
        .iter()
        .map(
            |(day, workflow, role, calls, unpriced, micros)| SpendTotal {
                day: (*day).into(),
                workflow: (*workflow).into(),
                role: (*role).into(),
                calls: *calls,
                unpriced: *unpriced,
                micros: *micros,
            },
        )
        .collect()
}

/// After the migration: the fixture's totals, then a new call of an old run counted and a
/// replayed one moved, as the timelines say.
fn check_migrated(store: &dyn Store) {
    assert_eq!(
        totals(store),
        fixture_totals(),
        "filled from the old events"
    );
    let run = store.runs().expect("runs")[0].id;
    store
        .set_status(
            run,
            &RunStatus::Running,
            &[
                priced_call(4, "drafter", Some(1), "2026-03-01T00:00:00Z"),
                priced_call(1, "drafter", Some(3), "2026-03-01T00:00:01Z"),
            ],
            "2026-03-01T00:00:01Z",
        )
        .expect("more calls");
    let mut from_timelines = gavel_core::spend_totals_of(store).expect("from the timelines");
    from_timelines.sort();
    assert_eq!(totals(store), from_timelines);
    assert!(
        totals(store)
            .iter()
            .any(|t| t.day == "2026-03-01" && t.calls == 2 && t.micros == 4)
    );
}

#[test]
fn a_version_3_sqlite_store_gets_its_spend_totals_from_its_events() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("gavel.db");
    {
        let store = SqliteStore::open(&path).expect("open");
        record_spend_fixture(&store);
    }
    // What a gavel of schema version 3 left: the same runs and events, no totals.
    rusqlite::Connection::open(&path)
        .and_then(|c| {
            c.execute_batch(
                "DROP TRIGGER model_call_recorded; DROP TRIGGER model_call_counted;
                 DROP TRIGGER model_call_replaced; DROP TABLE model_calls;
                 DROP TABLE spend_totals; PRAGMA user_version = 3;",
            )
        })
        .expect("back to schema version 3");
    let store = SqliteStore::open(&path).expect("migrated");
    check_migrated(&store);
}

#[test]
fn a_version_1_postgres_store_gets_its_spend_totals_from_its_events() {
    let url = TempPostgres::shared().fresh_database();
    {
        let store = PgStore::open(&url).expect("open");
        record_spend_fixture(&store);
    }
    let mut client = postgres::Client::connect(&url, postgres::NoTls).expect("connect");
    client
        .batch_execute(
            "DROP TRIGGER model_call_recorded ON events;
             DROP FUNCTION gavel_model_call_recorded(); DROP FUNCTION gavel_counted_call(jsonb);
             DROP TABLE model_calls; DROP TABLE spend_totals;
             UPDATE gavel_schema SET version = 1;",
        )
        .expect("back to schema version 1");
    let store = PgStore::open(&url).expect("migrated");
    check_migrated(&store);
}

#[test]
fn postgres_spend_totals_are_each_projects_own_and_every_projects_together() {
    let url = TempPostgres::shared().fresh_database();
    let env = gavel_store::PgEnv::default();
    let web = PgStore::open_project(&url, "github.com/o/web", &env).expect("web");
    let api = PgStore::open_project(&url, "github.com/o/api", &env).expect("api");
    record_spend_fixture(&web);
    record_spend_fixture(&api);
    assert_eq!(totals(&web), fixture_totals());
    assert_eq!(totals(&api), fixture_totals());
    let all = PgStore::open_all_projects(&url, &env).expect("every project");
    let doubled: Vec<SpendTotal> = fixture_totals()
        .into_iter()
        .map(|t| SpendTotal {
            calls: t.calls * 2,
            unpriced: t.unpriced * 2,
            micros: t.micros * 2,
            ..t
        })
        .collect();
    assert_eq!(totals(&all), doubled);
}
