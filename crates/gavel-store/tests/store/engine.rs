//! The engine's durability promises, checked against both stores: a checkpoint with a parent
//! link after every node, side effects that run once even when the process dies, and runs that
//! share a store without sharing anything else.

use gavel_core::{CHECKPOINT_FORMAT, EngineError, EventKind, Outcome, RunStatus, Store};
use gavel_store::SqliteStore;

use crate::engine_toy::{
    Bench, FAILURE, FINISH, GATE, NOW, START, Tally, WORK, answer, gate_answered, gate_waiting,
    node_event, note, strings,
};

on_every_store!(
    a_run_checkpoints_every_node_until_it_is_done,
    a_journaled_effect_is_not_repeated_after_a_crash,
    an_effect_that_crashed_before_its_journal_runs_again,
    a_failed_node_fails_the_run_resumably_and_keeps_its_journal,
    two_interleaved_runs_keep_their_own_checkpoints_and_journals,
    each_drive_ends_with_its_time_account,
);

/// Each drive of a run ends with one time account after its last event (the other tests
/// leave these out of the events they compare): here a drive to the gate and one to the end,
/// nothing spent under the fixed clock.
fn each_drive_ends_with_its_time_account(store: &dyn Store) {
    let bench = Bench::new(store);
    let run = bench.start();
    let gate = bench.drive_to_gate(run, None);
    bench
        .drive(run, Some(answer(&gate.id, "go")))
        .expect("done");
    let all = bench.all_events(run);
    let at: Vec<usize> = all
        .iter()
        .enumerate()
        .filter(|(_, kind)| matches!(kind, EventKind::Time(_)))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(at.len(), 2, "one account per drive: {all:?}");
    assert!(
        matches!(all[at[0] - 1], EventKind::GateWaiting { .. }),
        "the first drive's account follows its gate: {all:?}"
    );
    assert_eq!(
        at[1],
        all.len() - 1,
        "the last drive's account ends the run"
    );
    assert!(matches!(all[at[1] - 1], EventKind::Done { .. }), "{all:?}");
    for i in at {
        assert_eq!(all[i], EventKind::Time(gavel_core::TimeSpent::default()));
    }
}

fn a_run_checkpoints_every_node_until_it_is_done(store: &dyn Store) {
    let bench = Bench::new(store);
    let run = bench.start();
    let gate = bench.drive_to_gate(run, None);
    let done = Outcome::Done {
        summary: "1 effect(s)".into(),
    };
    assert_eq!(
        bench.drive(run, Some(answer(&gate.id, "go"))).ok(),
        Some(done)
    );
    assert_eq!(
        bench.status(run),
        RunStatus::Done {
            summary: "1 effect(s)".into()
        }
    );

    let metas = bench.checkpoints(run);
    let chain: Vec<_> = metas
        .iter()
        .map(|m| (m.seq, m.parent, m.node.as_deref(), m.next.as_deref()))
        .collect();
    assert_eq!(
        chain,
        [
            (0, None, None, Some(START)),
            (1, Some(0), Some(START), Some(WORK)),
            (2, Some(1), Some(WORK), Some(GATE)),
            (3, Some(2), Some(GATE), Some(FINISH)),
            (4, Some(3), Some(FINISH), None),
        ]
    );
    for m in &metas {
        assert_eq!((m.format, m.created_at.as_str()), (CHECKPOINT_FORMAT, NOW));
    }
    assert_eq!(bench.head(run).seq, 4);
    assert_eq!(
        bench.tally(run),
        Tally {
            // The gate's first visit ended in a gate, so its mutation was not kept.
            trail: strings(&[START, WORK, GATE, FINISH]),
            results: vec![1],
        }
    );
    assert_eq!(
        bench.events(run),
        [
            node_event(START, Some(WORK), 1),
            note(1),
            node_event(WORK, Some(GATE), 2),
            gate_waiting("gate@2"),
            // The answer, on the record though the toy records none itself.
            gate_answered("gate@2", "go"),
            node_event(GATE, Some(FINISH), 3),
            node_event(FINISH, None, 4),
            EventKind::Done {
                summary: "1 effect(s)".into()
            },
        ]
    );

    for again in [None, Some(answer(&gate.id, "go"))] {
        match bench.drive(run, again) {
            Err(EngineError::Finished { run: r, status }) => {
                assert_eq!((r, &*status), (run, "done"));
            }
            other => panic!("a done run cannot be driven, got {other:?}"),
        }
    }
    assert_eq!(
        bench.toy.visits(),
        strings(&[START, WORK, GATE, GATE, FINISH]),
        "driving a finished run runs nothing"
    );
    assert_eq!(bench.checkpoints(run).len(), 5);
}

fn a_journaled_effect_is_not_repeated_after_a_crash(store: &dyn Store) {
    let bench = Bench::new(store);
    let run = bench.start();
    bench.crash_at("after-journal:effect", run, None);
    assert_eq!(bench.toy.effects(), 1);
    assert_eq!(bench.journal(run, "1:work:effect").as_deref(), Some("1"));
    assert_eq!(bench.head(run).seq, 1, "work died before its checkpoint");
    assert_eq!(bench.status(run), RunStatus::Running);

    let gate = bench.drive_to_gate(run, None);
    assert_eq!(gate.id, "gate@2");
    assert_eq!(
        bench.toy.effects(),
        1,
        "the replayed step got its stored result"
    );
    assert_eq!(bench.tally(run).results, [1]);
    assert_eq!(bench.toy.visits(), strings(&[START, WORK, WORK, GATE]));
    assert_eq!(
        bench.events(run),
        [
            node_event(START, Some(WORK), 1),
            note(1),
            node_event(WORK, Some(GATE), 2),
            gate_waiting("gate@2"),
        ],
        "the crashed visit left no events behind"
    );
}

fn an_effect_that_crashed_before_its_journal_runs_again(store: &dyn Store) {
    let bench = Bench::new(store);
    let run = bench.start();
    bench.crash_at("after-effect:effect", run, None);
    assert_eq!(bench.toy.effects(), 1);
    assert_eq!(bench.journal(run, "1:work:effect"), None);

    // The documented window: an effect that finished but was not journaled runs again.
    let gate = bench.drive_to_gate(run, None);
    assert_eq!(bench.toy.effects(), 2);
    assert_eq!(bench.journal(run, "1:work:effect").as_deref(), Some("2"));
    assert_eq!(bench.tally(run).results, [2]);
    assert_eq!(
        bench.drive(run, Some(answer(&gate.id, "go"))).ok(),
        Some(Outcome::Done {
            summary: "1 effect(s)".into()
        })
    );
    assert_eq!(bench.toy.effects(), 2);
}

fn a_failed_node_fails_the_run_resumably_and_keeps_its_journal(store: &dyn Store) {
    let bench = Bench::new(store);
    let run = bench.start();
    bench.toy.fail_work_once();
    assert_eq!(
        bench.drive(run, None).ok(),
        Some(Outcome::Failed {
            error: FAILURE.into()
        })
    );
    assert_eq!(
        bench.status(run),
        RunStatus::Failed {
            error: FAILURE.into()
        }
    );
    assert_eq!(bench.head(run).seq, 1, "the failed node left no checkpoint");
    assert_eq!(
        bench.events(run).last(),
        Some(&EventKind::Failed {
            error: FAILURE.into()
        })
    );
    assert_eq!(bench.journal(run, "1:work:effect").as_deref(), Some("1"));

    let gate = bench.drive_to_gate(run, None);
    assert_eq!(gate.id, "gate@2");
    assert_eq!(
        bench.toy.effects(),
        1,
        "resuming reused the journaled effect"
    );
    assert_eq!(bench.tally(run).results, [1]);
    assert_eq!(bench.toy.visits(), strings(&[START, WORK, WORK, GATE]));
}

fn two_interleaved_runs_keep_their_own_checkpoints_and_journals(store: &dyn Store) {
    let bench = Bench::new(store);
    let (a, b) = (bench.start(), bench.start());
    assert_ne!(a, b);
    let gate_a = bench.drive_to_gate(a, None);
    let gate_b = bench.drive_to_gate(b, None);
    // Gate ids are per run: both runs wait at `gate@2`, and each answer reaches its own run.
    assert_eq!(
        (gate_a.id.as_str(), gate_b.id.as_str()),
        ("gate@2", "gate@2")
    );
    let gate_a = bench.drive_to_gate(a, Some(answer(&gate_a.id, "loop")));
    assert_eq!(gate_a.id, "gate@4");
    assert_eq!(
        bench.drive(b, Some(answer(&gate_b.id, "go"))).ok(),
        Some(Outcome::Done {
            summary: "1 effect(s)".into()
        })
    );

    // The effect counter is shared, so the runs' journals tell their effects apart.
    assert_eq!(bench.toy.effects(), 3);
    assert_eq!(bench.journal(a, "1:work:effect").as_deref(), Some("1"));
    assert_eq!(bench.journal(b, "1:work:effect").as_deref(), Some("2"));
    assert_eq!(bench.journal(a, "3:work:effect").as_deref(), Some("3"));
    assert_eq!(bench.journal(b, "3:work:effect"), None);
    assert_eq!(bench.tally(a).results, [1, 3]);
    assert_eq!(bench.tally(b).results, [2]);

    // `""`: the initial checkpoint, which no node produced.
    let nodes = |run| -> Vec<String> {
        let metas = bench.checkpoints(run).into_iter();
        metas.map(|m| m.node.unwrap_or_default()).collect()
    };
    assert_eq!(nodes(a), strings(&["", START, WORK, GATE, WORK]));
    assert_eq!(nodes(b), strings(&["", START, WORK, GATE, FINISH]));
    assert_eq!(bench.events(a).last(), Some(&gate_waiting("gate@4")));
    assert!(matches!(bench.status(a), RunStatus::Waiting { gate } if gate.id == "gate@4"));
    assert!(matches!(bench.status(b), RunStatus::Done { .. }));
}

/// What the journal promises across a real reopen of the database file, not only an unwind.
#[test]
fn sqlite_a_journaled_effect_survives_reopening_the_database() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    let run = {
        let store = SqliteStore::open(&path).expect("open");
        let bench = Bench::new(&store);
        let run = bench.start();
        bench.crash_at("after-journal:effect", run, None);
        assert_eq!(bench.toy.effects(), 1);
        run
    };
    let store = SqliteStore::open(&path).expect("reopen");
    let bench = Bench::new(&store);
    let gate = bench.drive_to_gate(run, None);
    assert_eq!(
        bench.toy.effects(),
        0,
        "the reopened run replayed the journaled result"
    );
    assert_eq!(bench.tally(run).results, [1]);
    assert_eq!(
        bench.drive(run, Some(answer(&gate.id, "go"))).ok(),
        Some(Outcome::Done {
            summary: "1 effect(s)".into()
        })
    );
}
