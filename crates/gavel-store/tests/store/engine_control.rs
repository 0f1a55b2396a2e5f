//! Everything that stops or steers a drive besides a gate, checked against both stores: halts,
//! failures of the run's input, Ctrl-C, a person's abort, another process's lock, the loop
//! guard, and the observer a live display relies on.

use std::sync::{Arc, Mutex, PoisonError};

use gavel_core::{
    CancelToken, EngineError, EventKind, Limits, Outcome, Progress, RunId, RunStatus, Store,
    StoreError,
};

use crate::engine_toy::{
    Bench, FAILURE, FINISH, GATE, HALT_REASON, NOW, SPIN, START, WORK, answer, gate_answered,
    gate_waiting, holder, node_event, note, strings,
};

on_every_store!(
    a_halt_keeps_the_last_checkpoint_and_reruns_the_node,
    a_cancelled_token_interrupts_before_any_node_runs,
    a_node_that_sees_the_cancel_interrupts_without_a_checkpoint,
    an_aborted_run_is_finished_for_good,
    a_run_locked_by_someone_else_is_not_driven,
    the_step_limit_halts_a_workflow_that_loops_forever,
    the_observer_sees_each_node_start_and_every_event,
    the_observer_sees_the_events_of_an_interruption,
    answers_and_runs_that_do_not_fit_are_refused,
);

fn a_halt_keeps_the_last_checkpoint_and_reruns_the_node(store: &dyn Store) {
    let bench = Bench::new(store);
    let run = bench.start();
    bench.toy.halt_work_once();
    let halted = Outcome::Halted {
        reason: HALT_REASON.into(),
    };
    assert_eq!(bench.drive(run, None).ok(), Some(halted));
    assert_eq!(
        bench.status(run),
        RunStatus::Halted {
            reason: HALT_REASON.into()
        }
    );
    assert_eq!(
        bench.head(run).seq,
        1,
        "the halted node wrote no checkpoint"
    );
    assert_eq!(
        bench.tally(run).trail,
        strings(&[START]),
        "and its mutation was dropped"
    );
    assert_eq!(
        bench.events(run).last(),
        Some(&EventKind::Halted {
            reason: HALT_REASON.into()
        })
    );
    assert!(matches!(
        bench.drive(run, Some(answer("gate@2", "go"))),
        Err(EngineError::NotWaiting { status, .. }) if status == "halted"
    ));

    let gate = bench.drive_to_gate(run, None);
    assert_eq!(gate.id, "gate@2");
    assert_eq!(bench.toy.visits(), strings(&[START, WORK, WORK, GATE]));
    assert_eq!(bench.toy.effects(), 1);
}

fn a_cancelled_token_interrupts_before_any_node_runs(store: &dyn Store) {
    let bench = Bench::new(store);
    let run = bench.start();
    let cancel = CancelToken::new();
    cancel.cancel();
    let outcome = bench.engine().with_cancel(cancel).drive(run, None);
    assert_eq!(outcome.ok(), Some(Outcome::Interrupted));
    match bench.status(run) {
        RunStatus::Halted { reason } => assert!(reason.contains("interrupted"), "{reason}"),
        other => panic!("an interrupted run is halted, not {other:?}"),
    }
    assert_eq!(bench.head(run).seq, 0);
    assert_eq!(bench.toy.visits(), Vec::<String>::new());

    // A later drive (with a fresh token) picks the run up.
    assert_eq!(bench.drive_to_gate(run, None).id, "gate@2");
}

fn a_node_that_sees_the_cancel_interrupts_without_a_checkpoint(store: &dyn Store) {
    let bench = Bench::new(store);
    let run = bench.start();
    let cancel = CancelToken::new();
    let trigger = cancel.clone();
    // Ctrl-C arrives just as `work` starts; `work` polls the token before its effect.
    let observer = move |p: Progress<'_>| {
        if let Progress::NodeStarted { node: WORK } = p {
            trigger.cancel();
        }
    };
    let engine = bench.engine().with_cancel(cancel).with_observer(&observer);
    assert_eq!(engine.drive(run, None).ok(), Some(Outcome::Interrupted));
    assert!(
        matches!(bench.status(run), RunStatus::Halted { reason } if reason.contains("interrupted"))
    );
    assert_eq!(
        bench.head(run).seq,
        1,
        "start's checkpoint is kept, work left none"
    );
    assert_eq!(bench.toy.effects(), 0);

    assert_eq!(bench.drive_to_gate(run, None).id, "gate@2");
    assert_eq!(bench.toy.effects(), 1);
}

fn an_aborted_run_is_finished_for_good(store: &dyn Store) {
    let bench = Bench::new(store);
    let run = bench.start();
    let gate = bench.drive_to_gate(run, None);
    bench.engine().abort(run, "not needed").expect("abort");
    assert_eq!(
        bench.status(run),
        RunStatus::Aborted {
            reason: "not needed".into()
        }
    );
    assert_eq!(
        bench.events(run).last(),
        Some(&EventKind::Aborted {
            reason: "not needed".into()
        })
    );
    assert_aborted_for_good(run, bench.drive(run, None));
    assert_aborted_for_good(run, bench.drive(run, Some(answer(&gate.id, "go"))));
    assert_aborted_for_good(run, bench.engine().abort(run, "again"));
    assert_eq!(bench.toy.visits(), strings(&[START, WORK, GATE]));
    assert_eq!(bench.head(run).seq, 2);
}

fn assert_aborted_for_good<T: std::fmt::Debug>(run: RunId, result: Result<T, EngineError>) {
    match result {
        Err(EngineError::Finished { run: r, status }) => {
            assert_eq!((r, &*status), (run, "aborted"));
        }
        other => panic!("expected Finished, got {other:?}"),
    }
}

fn a_run_locked_by_someone_else_is_not_driven(store: &dyn Store) {
    let bench = Bench::new(store);
    let run = bench.start();
    let other = holder(4242, "gavel resume 1");
    let lock = store.lock(run, &other).expect("take the lock");
    let err = bench
        .drive(run, None)
        .expect_err("a locked run cannot be driven");
    let message = err.to_string();
    assert!(
        message.contains("pid 4242") && message.contains("gavel resume 1"),
        "the error names the holder: {message}"
    );
    match err {
        EngineError::Store(StoreError::Locked { run: r, holder: h }) => {
            assert_eq!((r, &h), (run, &other));
        }
        err => panic!("expected Locked, got {err:?}"),
    }
    assert!(matches!(
        bench.engine().abort(run, "mine"),
        Err(EngineError::Store(StoreError::Locked { .. }))
    ));
    assert_eq!(bench.toy.visits(), Vec::<String>::new());
    assert_eq!(bench.status(run), RunStatus::Running);

    drop(lock);
    bench.drive_to_gate(run, None);
    // The engine let go of the lock when the drive ended.
    store.lock(run, &other).expect("the lock is free again");
}

fn the_step_limit_halts_a_workflow_that_loops_forever(store: &dyn Store) {
    let bench = Bench::new(store);
    let run = bench.start_at(SPIN);
    let engine = bench.engine().with_limits(Limits {
        max_steps_per_drive: 5,
    });
    for round in 1..=2u64 {
        match engine.drive(run, None) {
            Ok(Outcome::Halted { reason }) => {
                assert!(reason.contains("step limit (5)"), "{reason}");
                assert_eq!(bench.status(run), RunStatus::Halted { reason });
            }
            other => panic!("expected the loop guard to halt the run, got {other:?}"),
        }
        assert_eq!(bench.head(run).seq, 5 * round, "five nodes per drive");
    }
    assert_eq!(bench.toy.visits().len(), 10);
}

/// What an observer saw, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seen {
    Started(String),
    Recorded(EventKind),
}

type Log = Arc<Mutex<Vec<Seen>>>;

fn recorder() -> (Log, impl Fn(Progress<'_>) + Send + Sync + 'static) {
    let log = Log::default();
    let sink = Arc::clone(&log);
    let observer = move |p: Progress<'_>| {
        let seen = match p {
            Progress::NodeStarted { node } => Seen::Started(node.into()),
            // A drive's time account: `each_drive_ends_with_its_time_account` checks it.
            Progress::Event(e) if matches!(e.kind, EventKind::Time(_)) => return,
            Progress::Event(e) => Seen::Recorded(e.kind.clone()),
            other => panic!("progress this test does not know: {other:?}"),
        };
        sink.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(seen);
    };
    (log, observer)
}

/// What the observer saw so far.
fn seen(log: &Log) -> Vec<Seen> {
    log.lock().unwrap_or_else(PoisonError::into_inner).clone()
}

/// The events the observer was told about.
fn reported(log: &Log) -> Vec<EventKind> {
    let events = seen(log).into_iter().filter_map(|s| match s {
        Seen::Recorded(kind) => Some(kind),
        Seen::Started(_) => None,
    });
    events.collect()
}

fn the_observer_sees_each_node_start_and_every_event(store: &dyn Store) {
    let bench = Bench::new(store);
    let (log, observer) = recorder();
    let engine = bench.engine().with_observer(&observer);
    let run = bench.start();
    bench.toy.fail_work_once();
    let failed = engine.drive(run, None);
    assert!(matches!(failed, Ok(Outcome::Failed { .. })), "{failed:?}");
    let gate = match engine.drive(run, None) {
        Ok(Outcome::Waiting(gate)) => gate,
        other => panic!("expected a gate, got {other:?}"),
    };
    let done = engine.drive(run, Some(answer(&gate.id, "go")));
    assert!(matches!(done, Ok(Outcome::Done { .. })), "{done:?}");

    let started = |node: &str| Seen::Started(node.into());
    let recorded = Seen::Recorded;
    assert_eq!(
        seen(&log),
        [
            started(START),
            recorded(node_event(START, Some(WORK), 1)),
            started(WORK),
            recorded(EventKind::Failed {
                error: FAILURE.into()
            }),
            started(WORK),
            recorded(note(1)),
            recorded(node_event(WORK, Some(GATE), 2)),
            started(GATE),
            recorded(gate_waiting("gate@2")),
            started(GATE),
            recorded(gate_answered("gate@2", "go")),
            recorded(node_event(GATE, Some(FINISH), 3)),
            started(FINISH),
            recorded(node_event(FINISH, None, 4)),
            recorded(EventKind::Done {
                summary: "1 effect(s)".into()
            }),
        ],
        "each node's start, then its events once it ended"
    );
    assert_eq!(
        reported(&log),
        bench.events(run),
        "exactly what was recorded"
    );
}

fn the_observer_sees_the_events_of_an_interruption(store: &dyn Store) {
    let bench = Bench::new(store);
    let (log, observer) = recorder();
    let cancel = CancelToken::new();
    cancel.cancel();
    let engine = bench.engine().with_observer(&observer).with_cancel(cancel);
    let run = bench.start();
    assert_eq!(engine.drive(run, None).ok(), Some(Outcome::Interrupted));
    assert_eq!(bench.events(run).len(), 1, "the interruption is recorded");
    assert_eq!(reported(&log), bench.events(run), "and reported");
}

fn answers_and_runs_that_do_not_fit_are_refused(store: &dyn Store) {
    let bench = Bench::new(store);
    let run = bench.start();
    assert!(matches!(
        bench.drive(run, Some(answer("gate@2", "go"))),
        Err(EngineError::NotWaiting { run: r, status }) if r == run && status == "running"
    ));
    assert!(matches!(
        bench.drive(RunId(9_999), None),
        Err(EngineError::Store(StoreError::UnknownRun(RunId(9_999))))
    ));

    let garbled = store
        .create_run("toy", "garbled", b"not json", START, NOW)
        .expect("create_run");
    assert!(matches!(
        bench.drive(garbled, None),
        Err(EngineError::BadState { run: r, .. }) if r == garbled
    ));
    assert_eq!(
        bench.head(garbled).state,
        b"not json",
        "the state is left alone"
    );
    assert_eq!(bench.toy.visits(), Vec::<String>::new(), "no node ran");
}
