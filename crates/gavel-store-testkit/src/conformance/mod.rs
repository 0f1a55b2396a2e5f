//! The contract checks every [`Store`] implementation must pass.
//!
//! Each check is a plain function that takes a fresh, empty store, exercises one part of the
//! contract and panics with a description of the first violation it finds. [`run_all`] runs
//! them all, naming the failing check; a backend's test calls it with a constructor:
//!
//! ```
//! use gavel_store_testkit::{MemoryStore, conformance};
//! conformance::run_all(&|| Box::new(MemoryStore::new()));
//! ```
//!
//! Panicking is how it reports.

mod journal;
mod listing;
mod runs;
mod spend;

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

use gavel_core::{
    CHECKPOINT_FORMAT, Checkpoint, Choice, Event, EventKind, GateRequest, LockInfo, RunId, Store,
    StoreError,
};

pub use journal::{
    blobs_round_trip_and_deduplicate, events_keep_their_order,
    locks_are_exclusive_and_released_on_drop, shared_content_round_trips, spend_adds_up_by_month,
    the_journal_lists_every_step_result, unknown_runs_are_errors,
    writes_are_idempotent_and_conflicts_are_refused,
};
pub use listing::runs_are_found_by_filter_and_page;
pub use runs::{
    a_claimed_slug_is_refused_while_its_run_is_unfinished, a_commit_stores_its_blobs_or_nothing,
    commit_advances_the_head, commit_rejects_a_stale_or_wrong_checkpoint, create_run_and_read_back,
    every_status_round_trips, model_calls_are_listed_across_runs, runs_are_found_by_slug,
    runs_are_listed_oldest_first, runs_have_independent_sequences,
};
pub use spend::{
    SPEND_FIXTURE_TOTALS, priced_call, record_spend_fixture, spend_totals_follow_the_ledger,
};

/// One named contract check.
#[derive(Debug, Clone, Copy)]
pub struct Check {
    pub name: &'static str,
    pub run: fn(&dyn Store),
}

/// Every check, in the order [`run_all`] runs them.
pub const CHECKS: &[Check] = &[
    Check {
        name: "the_journal_lists_every_step_result",
        run: the_journal_lists_every_step_result,
    },
    Check {
        name: "spend_adds_up_by_month",
        run: spend_adds_up_by_month,
    },
    Check {
        name: "create_run_and_read_back",
        run: create_run_and_read_back,
    },
    Check {
        name: "runs_are_listed_oldest_first",
        run: runs_are_listed_oldest_first,
    },
    Check {
        name: "model_calls_are_listed_across_runs",
        run: model_calls_are_listed_across_runs,
    },
    Check {
        name: "commit_advances_the_head",
        run: commit_advances_the_head,
    },
    Check {
        name: "commit_rejects_a_stale_or_wrong_checkpoint",
        run: commit_rejects_a_stale_or_wrong_checkpoint,
    },
    Check {
        name: "a_commit_stores_its_blobs_or_nothing",
        run: a_commit_stores_its_blobs_or_nothing,
    },
    Check {
        name: "runs_have_independent_sequences",
        run: runs_have_independent_sequences,
    },
    Check {
        name: "events_keep_their_order",
        run: events_keep_their_order,
    },
    Check {
        name: "writes_are_idempotent_and_conflicts_are_refused",
        run: writes_are_idempotent_and_conflicts_are_refused,
    },
    Check {
        name: "blobs_round_trip_and_deduplicate",
        run: blobs_round_trip_and_deduplicate,
    },
    Check {
        name: "shared_content_round_trips",
        run: shared_content_round_trips,
    },
    Check {
        name: "a_claimed_slug_is_refused_while_its_run_is_unfinished",
        run: a_claimed_slug_is_refused_while_its_run_is_unfinished,
    },
    Check {
        name: "every_status_round_trips",
        run: every_status_round_trips,
    },
    Check {
        name: "locks_are_exclusive_and_released_on_drop",
        run: locks_are_exclusive_and_released_on_drop,
    },
    Check {
        name: "unknown_runs_are_errors",
        run: unknown_runs_are_errors,
    },
    Check {
        name: "runs_are_found_by_slug",
        run: runs_are_found_by_slug,
    },
    Check {
        name: "runs_are_found_by_filter_and_page",
        run: runs_are_found_by_filter_and_page,
    },
    Check {
        name: "spend_totals_follow_the_ledger",
        run: spend_totals_follow_the_ledger,
    },
];

/// Runs every check, each on a fresh store from `make`. Panics naming the first failing check.
pub fn run_all(make: &dyn Fn() -> Box<dyn Store>) {
    for check in CHECKS {
        let store = make();
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| (check.run)(store.as_ref()))) {
            let message = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied());
            match message {
                Some(message) => panic!("conformance check `{}` failed: {message}", check.name),
                None => resume_unwind(panic),
            }
        }
    }
}

const T0: &str = "2026-01-30T14:33:20Z";
const T1: &str = "2026-01-30T14:34:00Z";
const T2: &str = "2026-01-30T14:35:00Z";

/// A drafter's model call at `at`, numbered `n` in its run's ledger, that cost `cost_micros`:
/// the event the checks record, and other crates' tests of what reads the ledger.
pub fn model_call(n: u32, cost_micros: u64, at: &str) -> gavel_core::Event {
    gavel_core::Event {
        at: at.into(),
        kind: gavel_core::EventKind::ModelCall {
            role: "drafter".into(),
            provider: "scripted".into(),
            model: "m".into(),
            ledger: Some(Box::new(gavel_core::CallLedger {
                n,
                requested_model: "m".into(),
                input_tokens: Some(10),
                output_tokens: Some(5),
                cached_tokens: None,
                cost_micros: Some(cost_micros),
                cost_source: "reported".into(),
                prompt: gavel_core::ContentHash::of(b"prompt"),
                response: gavel_core::ContentHash::of(b"answer"),
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

fn ok<T>(what: &str, result: Result<T, StoreError>) -> T {
    match result {
        Ok(value) => value,
        Err(e) => panic!("{what} failed: {e} ({e:?})"),
    }
}

fn new_run(store: &dyn Store, slug: &str, state: &[u8]) -> RunId {
    ok(
        "create_run",
        store.create_run("issue", slug, state, "start", T0),
    )
}

fn checkpoint(
    run: RunId,
    seq: u64,
    node: &str,
    next: Option<&str>,
    state: &[u8],
    at: &str,
) -> Checkpoint {
    Checkpoint {
        run,
        seq,
        parent: seq.checked_sub(1),
        node: Some(node.into()),
        next: next.map(Into::into),
        state: state.to_vec(),
        format: CHECKPOINT_FORMAT,
        created_at: at.into(),
    }
}

fn note(text: &str) -> Event {
    Event {
        at: T1.into(),
        kind: EventKind::Note { text: text.into() },
    }
}

fn gate() -> GateRequest {
    GateRequest {
        id: "draft@3".into(),
        node: "draft".into(),
        kind: "draft".into(),
        title: "Send this issue?".into(),
        detail: Some("verdict: ready".into()),
        artifacts: vec!["issue.md".into()],
        choices: vec![
            Choice::new("send", 'S', "file it"),
            Choice::new("revise", 'R', "redo").with_feedback(),
        ],
        recommended: Some("send".into()),
        present: Box::new(gavel_core::Presentation {
            open: vec!["issue.md".into()],
            feedback_label: Some("Feedback".into()),
            confirm: gavel_core::Confirm::Word,
            ..gavel_core::Presentation::default()
        }),
    }
}

fn holder(pid: u32) -> LockInfo {
    LockInfo {
        pid,
        host: "ci-runner".into(),
        command: format!("gavel resume (pid {pid})"),
        since: T0.into(),
    }
}
