//! Checks on a listing's page of runs (`RunStore::find_runs`, `RunStore::workflows`): a store
//! selects, pages and counts exactly the runs [`RunFilter::page_of`] selects from every run.

use gavel_core::{RunFilter, RunStatus, Store};

use super::{gate, ok};

/// `find_runs` gives, for every filter and page, the runs and count that filtering every run
/// gives; `workflows` names each workflow with runs once, sorted.
pub fn runs_are_found_by_filter_and_page(store: &dyn Store) {
    let empty = ok("find_runs", store.find_runs(&RunFilter::default(), 0, 50));
    assert_eq!((empty.runs.len(), empty.matched), (0, 0));
    assert!(ok("workflows", store.workflows()).is_empty());
    let days = [
        "2025-12-31T23:59:59Z",
        "2026-01-01T00:00:00Z",
        "2026-01-15T10:00:00Z",
        "2026-01-31T23:00:00Z",
        "2026-02-01T00:00:00Z",
    ];
    let workflows = ["issue", "lld", "change-plan"];
    for i in 0..23usize {
        let workflow = workflows[i % 3];
        let at = days[i % days.len()];
        let id = ok(
            "create_run",
            store.create_run(workflow, &format!("s{i}"), b"{}", "start", at),
        );
        let status = match i % 6 {
            0 => RunStatus::Running,
            1 => RunStatus::Waiting { gate: gate() },
            2 => RunStatus::Halted { reason: "h".into() },
            3 => RunStatus::Failed { error: "f".into() },
            4 => RunStatus::Done {
                summary: "d".into(),
            },
            _ => RunStatus::Aborted { reason: "a".into() },
        };
        ok("set_status", store.set_status(id, &status, &[], at));
    }
    // A status a newer gavel wrote, its name not first: found by its stored name too.
    let newer: RunStatus = serde_json::from_str(r#"{"reason":"ci","status":"paused_for_ci"}"#)
        .unwrap_or_else(|e| panic!("an unknown status loads: {e}"));
    let paused = ok(
        "create_run",
        store.create_run("lld", "newer", b"{}", "start", days[2]),
    );
    ok("set_status", store.set_status(paused, &newer, &[], days[2]));
    let all = ok("runs", store.runs());
    let some = |v: &str| Some(v.to_owned());
    let mut filters = vec![RunFilter::default()];
    for w in ["issue", "lld", "nothing"] {
        filters.push(RunFilter {
            workflow: some(w),
            ..RunFilter::default()
        });
    }
    for s in [
        "running",
        "waiting",
        "halted",
        "failed",
        "done",
        "aborted",
        "paused_for_ci",
    ] {
        filters.push(RunFilter {
            status: some(s),
            ..RunFilter::default()
        });
    }
    for d in ["2026-01-01", "2026-01-15", "2026-02-01", "2026-02-02"] {
        filters.push(RunFilter {
            since: some(d),
            ..RunFilter::default()
        });
        filters.push(RunFilter {
            until: some(d),
            ..RunFilter::default()
        });
    }
    filters.push(RunFilter {
        workflow: some("issue"),
        status: some("done"),
        since: some("2026-01-01"),
        until: some("2026-01-31"),
    });
    filters.push(RunFilter {
        workflow: some("lld"),
        status: some("waiting"),
        since: some("2026-01-15"),
        until: None,
    });
    for filter in &filters {
        for (offset, limit) in [(0, 50), (0, 4), (4, 4), (8, 100), (20, 5), (99, 5), (0, 0)] {
            let found = ok("find_runs", store.find_runs(filter, offset, limit));
            let expected = filter.page_of(all.clone(), offset, limit);
            assert_eq!(
                found, expected,
                "find_runs({filter:?}, offset {offset}, limit {limit})"
            );
        }
    }
    let by_name = RunFilter {
        status: some("paused_for_ci"),
        ..RunFilter::default()
    };
    let found = ok("find_runs", store.find_runs(&by_name, 0, 50));
    assert_eq!(
        found.runs.iter().map(|r| r.id).collect::<Vec<_>>(),
        [paused],
        "a status in another key order is still read"
    );
    assert_eq!(
        ok("workflows", store.workflows()),
        ["change-plan", "issue", "lld"]
    );
}
