//! Human gates, checked against both stores: a gate is a value with a stable id that stays put
//! until a valid answer for that very gate arrives, and an accepted answer is journaled so that
//! a crash after answering never asks the person again.

use std::sync::atomic::{AtomicBool, Ordering};

use gavel_core::{
    AuditStore, Checkpoint, CheckpointMeta, ContentHash, EngineError, Event, GateAnswer, LockInfo,
    NewBlob, Outcome, RunId, RunLock, RunRecord, RunStatus, RunStore, SpendStore, Store,
    StoreError,
};

use crate::engine_toy::{
    Bench, FINISH, GATE, GATE_KIND, START, STOP_REASON, WORK, answer, crash, expect_crash, strings,
};

on_every_store!(
    a_gate_waits_with_a_stable_id_until_answered,
    wrong_answers_are_refused_and_the_run_keeps_waiting,
    a_loop_answer_works_again_under_new_step_and_gate_ids,
    a_stop_answer_aborts_the_run_with_a_final_checkpoint,
    a_journaled_answer_survives_a_crash_before_the_run_moves_on,
    an_answer_journaled_just_before_a_crash_is_not_asked_for_again,
);

fn a_gate_waits_with_a_stable_id_until_answered(store: &dyn Store) {
    let bench = Bench::new(store);
    let run = bench.start();
    let gate = bench.drive_to_gate(run, None);
    assert_eq!(
        (gate.id.as_str(), gate.node.as_str(), gate.kind.as_str()),
        ("gate@2", GATE, GATE_KIND)
    );
    assert_eq!(gate.choice_names(), ["go", "loop", "stop"]);
    assert_eq!(bench.status(run), RunStatus::Waiting { gate: gate.clone() });

    for _ in 0..2 {
        assert_eq!(
            bench.drive_to_gate(run, None),
            gate,
            "the same gate, same id"
        );
    }
    assert_eq!(
        bench.toy.visits(),
        strings(&[START, WORK, GATE]),
        "asking again runs no node"
    );
    assert_eq!(bench.head(run).seq, 2);
    assert_eq!(bench.toy.effects(), 1);
}

fn wrong_answers_are_refused_and_the_run_keeps_waiting(store: &dyn Store) {
    let bench = Bench::new(store);
    let run = bench.start();
    let gate = bench.drive_to_gate(run, None);

    match bench.drive(run, Some(answer("gate@1", "go"))) {
        Err(EngineError::WrongGate {
            run: r,
            expected,
            got,
        }) => {
            assert_eq!((r, &*expected, &*got), (run, "gate@2", "gate@1"));
        }
        other => panic!("expected WrongGate, got {other:?}"),
    }
    for bad in ["maybe", "x", ""] {
        match bench.drive(run, Some(answer(&gate.id, bad))) {
            Err(EngineError::InvalidChoice {
                gate: g,
                choice,
                valid,
            }) => assert_eq!((&*g, &*choice, &*valid), ("gate@2", bad, "go, loop, stop")),
            other => panic!("expected InvalidChoice for {bad:?}, got {other:?}"),
        }
    }
    assert_eq!(bench.status(run), RunStatus::Waiting { gate: gate.clone() });
    assert_eq!(
        bench.journal(run, "2:gate:answer"),
        None,
        "nothing refused is journaled"
    );
    assert_eq!(bench.toy.visits(), strings(&[START, WORK, GATE]));
    assert_eq!(bench.drive_to_gate(run, None), gate);

    // A key letter is a valid answer, and the journal keeps the choice's name.
    assert_eq!(
        bench.drive(run, Some(answer(&gate.id, "G"))).ok(),
        Some(Outcome::Done {
            summary: "1 effect(s)".into()
        })
    );
    let journaled = bench
        .journal(run, "2:gate:answer")
        .expect("the answer is journaled");
    let journaled: GateAnswer = serde_json::from_str(&journaled).expect("a GateAnswer");
    assert_eq!(journaled, answer("gate@2", "go"));
}

fn a_loop_answer_works_again_under_new_step_and_gate_ids(store: &dyn Store) {
    let bench = Bench::new(store);
    let run = bench.start();
    let first = bench.drive_to_gate(run, None);
    let second = bench.drive_to_gate(run, Some(answer(&first.id, "l")));
    assert_eq!(second.id, "gate@4");
    assert_eq!(bench.toy.effects(), 2, "a new visit of work is a new step");
    assert_eq!(bench.journal(run, "3:work:effect").as_deref(), Some("2"));

    match bench.drive(run, Some(answer(&first.id, "go"))) {
        Err(EngineError::WrongGate { expected, .. }) => assert_eq!(expected, "gate@4"),
        other => panic!("an answer to the old gate must be refused, got {other:?}"),
    }
    assert_eq!(
        bench.drive(run, Some(answer(&second.id, "go"))).ok(),
        Some(Outcome::Done {
            summary: "2 effect(s)".into()
        })
    );
    let tally = bench.tally(run);
    assert_eq!(
        tally.trail,
        strings(&[START, WORK, GATE, WORK, GATE, FINISH])
    );
    assert_eq!(tally.results, [1, 2]);
}

fn a_stop_answer_aborts_the_run_with_a_final_checkpoint(store: &dyn Store) {
    let bench = Bench::new(store);
    let run = bench.start();
    let gate = bench.drive_to_gate(run, None);
    let aborted = Outcome::Aborted {
        reason: STOP_REASON.into(),
    };
    assert_eq!(
        bench.drive(run, Some(answer(&gate.id, "stop"))).ok(),
        Some(aborted)
    );
    assert_eq!(
        bench.status(run),
        RunStatus::Aborted {
            reason: STOP_REASON.into()
        }
    );
    let head = bench.head(run);
    assert_eq!(
        (head.seq, head.parent, head.node.as_deref(), head.next),
        (3, Some(2), Some(GATE), None)
    );
    assert!(matches!(
        bench.drive(run, None),
        Err(EngineError::Finished { status, .. }) if status == "aborted"
    ));
}

fn a_journaled_answer_survives_a_crash_before_the_run_moves_on(store: &dyn Store) {
    let bench = Bench::new(store);
    // Crash before the gate node re-runs with the answer, and after it checkpointed.
    for point in ["before:gate", "after:gate"] {
        let run = bench.start();
        let gate = bench.drive_to_gate(run, None);
        bench.crash_at(point, run, Some(answer(&gate.id, "go")));
        assert!(bench.journal(run, "2:gate:answer").is_some(), "{point}");
        assert_eq!(bench.status(run), RunStatus::Running, "{point}");
        assert_eq!(
            bench.drive(run, None).ok(),
            Some(Outcome::Done {
                summary: "1 effect(s)".into()
            }),
            "after a crash at {point} the run goes on without asking again"
        );
    }
}

/// Regression test for the window in `Engine::drive` between journaling a gate answer and
/// marking the run running: a crash there leaves the run `waiting` with its answer journaled.
fn an_answer_journaled_just_before_a_crash_is_not_asked_for_again(store: &dyn Store) {
    let dying = DiesOnSetStatus::new(store);
    let bench = Bench::new(&dying);
    let run = bench.start();
    let gate = bench.drive_to_gate(run, None);
    dying.arm();
    expect_crash("set_status", || {
        bench.drive(run, Some(answer(&gate.id, "loop")))
    });
    assert!(bench.journal(run, "2:gate:answer").is_some());

    // The answer is on record: resuming applies it (work again, then the next gate) instead of
    // asking again. Asking again is worse than redundant: any other answer than the journaled
    // one is then refused with a journal WriteConflict.
    match bench.drive(run, None) {
        Ok(Outcome::Waiting(next)) if next.id == "gate@4" => {}
        other => {
            let retry = bench.drive(run, Some(answer(&gate.id, "go")));
            panic!("the journaled answer was not applied: got {other:?}, then {retry:?}")
        }
    }
}

/// A store that dies (see [`crash`]) in its next `set_status` once armed.
struct DiesOnSetStatus<'s> {
    inner: &'s dyn Store,
    armed: AtomicBool,
}

impl<'s> DiesOnSetStatus<'s> {
    fn new(inner: &'s dyn Store) -> Self {
        Self {
            inner,
            armed: AtomicBool::new(false),
        }
    }

    fn arm(&self) {
        self.armed.store(true, Ordering::SeqCst);
    }
}

impl AuditStore for DiesOnSetStatus<'_> {}

impl SpendStore for DiesOnSetStatus<'_> {
    fn spent_in_month(&self, month: &str) -> Result<u64, StoreError> {
        gavel_core::spent_in_month_of(self, month)
    }

    fn model_call_events(&self) -> Result<Vec<(RunId, Event)>, StoreError> {
        gavel_core::model_call_events_of(self)
    }

    fn spend_totals(&self) -> Result<Vec<gavel_core::SpendTotal>, StoreError> {
        gavel_core::spend_totals_of(self)
    }
}

impl RunStore for DiesOnSetStatus<'_> {
    fn create_run(
        &self,
        workflow: &str,
        slug: &str,
        state: &[u8],
        next: &str,
        now: &str,
    ) -> Result<RunId, StoreError> {
        self.inner.create_run(workflow, slug, state, next, now)
    }
    fn create_run_claiming_slug(
        &self,
        workflow: &str,
        slug: &str,
        state: &[u8],
        next: &str,
        now: &str,
    ) -> Result<RunId, StoreError> {
        self.inner
            .create_run_claiming_slug(workflow, slug, state, next, now)
    }
    fn run(&self, id: RunId) -> Result<Option<RunRecord>, StoreError> {
        self.inner.run(id)
    }
    fn runs(&self) -> Result<Vec<RunRecord>, StoreError> {
        self.inner.runs()
    }
    fn set_status(
        &self,
        id: RunId,
        status: &RunStatus,
        events: &[Event],
        now: &str,
    ) -> Result<(), StoreError> {
        if self.armed.swap(false, Ordering::SeqCst) {
            crash("set_status");
        }
        self.inner.set_status(id, status, events, now)
    }
    fn commit_with_blobs(
        &self,
        cp: &Checkpoint,
        events: &[Event],
        status: &RunStatus,
        blobs: &[NewBlob<'_>],
    ) -> Result<(), StoreError> {
        self.inner.commit_with_blobs(cp, events, status, blobs)
    }
    fn head(&self, id: RunId) -> Result<Option<Checkpoint>, StoreError> {
        self.inner.head(id)
    }
    fn checkpoints(&self, id: RunId) -> Result<Vec<CheckpointMeta>, StoreError> {
        self.inner.checkpoints(id)
    }
    fn get_write(&self, id: RunId, step: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.inner.get_write(id, step)
    }
    fn journal(&self, id: RunId) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        self.inner.journal(id)
    }
    fn put_write(&self, id: RunId, step: &str, value: &[u8], now: &str) -> Result<(), StoreError> {
        self.inner.put_write(id, step, value, now)
    }
    fn events(&self, id: RunId) -> Result<Vec<Event>, StoreError> {
        self.inner.events(id)
    }
    fn put_blob(&self, bytes: &[u8]) -> Result<ContentHash, StoreError> {
        self.inner.put_blob(bytes)
    }
    fn get_blob(&self, hash: &ContentHash) -> Result<Option<Vec<u8>>, StoreError> {
        self.inner.get_blob(hash)
    }
    fn lock(&self, id: RunId, holder: &LockInfo) -> Result<RunLock, StoreError> {
        self.inner.lock(id, holder)
    }
    fn holder(&self, id: RunId) -> Result<Option<LockInfo>, StoreError> {
        self.inner.holder(id)
    }
}
