//! Checks on the spend page's totals (`SpendStore::spend_totals`): every store adds its calls
//! up by day, workflow and role exactly as the runs' timelines do, replays included.

use gavel_core::{CallLedger, ContentHash, Event, EventKind, RunId, RunStatus, SpendTotal, Store};

use super::{checkpoint, note, ok};

/// A model call numbered `n` in its run's ledger, by `role` at `at`, that cost `cost` (`None`:
/// unpriced).
pub fn priced_call(n: u32, role: &str, cost: Option<u64>, at: &str) -> Event {
    Event {
        at: at.into(),
        kind: EventKind::ModelCall {
            role: role.into(),
            provider: "scripted".into(),
            model: "m".into(),
            ledger: Some(Box::new(CallLedger {
                n,
                requested_model: "m".into(),
                input_tokens: Some(10),
                output_tokens: Some(5),
                cached_tokens: None,
                cost_micros: cost,
                cost_source: if cost.is_some() {
                    "reported"
                } else {
                    "unknown"
                }
                .into(),
                prompt: ContentHash::of(b"prompt"),
                response: ContentHash::of(b"answer"),
                attempts: 1,
                warning: None,
                lost: false,
                credential: None,
                quota_exhausted: Vec::new(),
                form: None,
            })),
        },
    }
}

/// Records runs of three workflows whose calls span three days and four roles, priced and
/// unpriced, with calls recorded again by replays (at another day, role or cost, in a later
/// commit and within one), a call without a ledger, a note that names a model call, and a run
/// without calls. Returns the runs, oldest first; [`SPEND_FIXTURE_TOTALS`] is what they add
/// up to.
pub fn record_spend_fixture(store: &dyn Store) -> Vec<RunId> {
    let call = priced_call;
    let run = |workflow: &str, slug: &str, at: &str| {
        ok(
            "create_run",
            store.create_run(workflow, slug, b"{}", "start", at),
        )
    };
    let commit = |run: RunId, seq: u64, events: &[Event]| {
        let cp = checkpoint(
            run,
            seq,
            "node",
            Some("node"),
            b"{}",
            "2026-01-30T12:00:00Z",
        );
        ok("commit", store.commit(&cp, events, &RunStatus::Running));
    };
    let a = run("issue", "a", "2026-01-30T09:00:00Z");
    commit(
        a,
        1,
        &[
            call(1, "drafter", Some(100), "2026-01-30T09:01:00Z"),
            call(2, "reviewer", None, "2026-01-30T09:02:00Z"),
        ],
    );
    commit(
        a,
        2,
        &[call(3, "drafter", Some(250), "2026-01-31T08:00:00Z")],
    );
    let b = run("lld", "b", "2026-01-31T10:00:00Z");
    commit(
        b,
        1,
        &[call(1, "designer", Some(40), "2026-01-31T10:01:00Z")],
    );
    // A replay records call 1 again, a day later and at another cost; then call 2 twice in one
    // commit, priced and then unpriced; then call 3 by another role.
    commit(
        b,
        2,
        &[
            call(1, "designer", Some(60), "2026-02-01T00:00:01Z"),
            call(2, "reviewer", Some(5), "2026-02-01T00:01:00Z"),
            call(2, "reviewer", None, "2026-02-01T00:02:00Z"),
            call(3, "drafter", Some(7), "2026-02-01T00:03:00Z"),
        ],
    );
    ok(
        "set_status",
        store.set_status(
            b,
            &RunStatus::Halted {
                reason: "budget".into(),
            },
            &[call(3, "reviewer", Some(9), "2026-02-01T00:04:00Z")],
            "2026-02-01T00:04:00Z",
        ),
    );
    let c = run("issue", "c", "2026-02-01T11:00:00Z");
    let no_ledger = Event {
        at: "2026-02-01T11:01:00Z".into(),
        kind: EventKind::ModelCall {
            role: "drafter".into(),
            provider: "scripted".into(),
            model: "m".into(),
            ledger: None,
        },
    };
    commit(
        c,
        1,
        &[no_ledger, note(r#"not a call: {"event":"model_call"}"#)],
    );
    let d = run("change-plan", "d", "2026-02-01T12:00:00Z");
    commit(
        d,
        1,
        &[call(1, "planner", Some(1_000_000), "2026-02-01T23:59:59Z")],
    );
    let quiet = run("issue", "quiet", "2026-02-01T13:00:00Z");
    vec![a, b, c, d, quiet]
}

/// What [`record_spend_fixture`]'s calls add up to: `(day, workflow, role, calls, unpriced,
/// micros)`, sorted.
pub const SPEND_FIXTURE_TOTALS: &[(&str, &str, &str, u64, u64, u64)] = &[
    ("2026-01-30", "issue", "drafter", 1, 0, 100),
    ("2026-01-30", "issue", "reviewer", 1, 1, 0),
    ("2026-01-31", "issue", "drafter", 1, 0, 250),
    ("2026-02-01", "change-plan", "planner", 1, 0, 1_000_000),
    ("2026-02-01", "lld", "designer", 1, 0, 60),
    ("2026-02-01", "lld", "reviewer", 2, 1, 9),
];

/// `spend_totals` counts each call once, at its last record (its day, role and cost), by its
/// run's workflow, exactly as the timelines add up ([`gavel_core::spend_totals_of`]).
pub fn spend_totals_follow_the_ledger(store: &dyn Store) {
    assert!(
        ok("spend_totals", store.spend_totals()).is_empty(),
        "an empty store has no totals"
    );
    record_spend_fixture(store);
    let mut totals = ok("spend_totals", store.spend_totals());
    totals.sort();
    let expected: Vec<SpendTotal> = SPEND_FIXTURE_TOTALS
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
        .collect();
    assert_eq!(totals, expected);
    let mut from_timelines = ok("spend_totals_of", gavel_core::spend_totals_of(store));
    from_timelines.sort();
    assert_eq!(totals, from_timelines, "the timelines add up to the same");
}
