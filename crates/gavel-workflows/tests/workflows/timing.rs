//! Where a run's time goes (`gavel_core::TimeSpent`), with clocks the tests move: a toy
//! workflow whose nodes say how long each part takes shows what counts (a command's start-up,
//! model calls, tests) and what does not (the wait at a gate, the pause before a resume); the
//! implement pipeline, on a clock that ticks at every reading, shows that model calls and test
//! runs are timed apart from gavel's own work and that the diff gate's summary says so.

use std::sync::Mutex;
use std::time::Duration;

use gavel_core::{
    Choice, Clock, EventKind, LockInfo, NodeCtx, NodeError, Outcome, Outside, RunStore, TimeSpent,
    Transition, Workflow,
};
use gavel_workflows::implement::{ImplementState, Issue, node};
use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use crate::implement_routing::{CODE, TESTS, new_state, pipeline};
use crate::kit::{Kit, answer};

/// A clock that moves when a test moves it, and by `tick_ms` at every reading.
struct TestClock {
    now: Mutex<Timestamp>,
    tick_ms: i64,
}

impl TestClock {
    fn new(tick_ms: i64) -> Self {
        Self {
            now: Mutex::new("2026-01-30T14:33:20Z".parse().expect("time")),
            tick_ms,
        }
    }

    fn advance_ms(&self, ms: i64) {
        let mut now = self.now.lock().expect("clock");
        *now = now
            .checked_add(SignedDuration::from_millis(ms))
            .expect("in range");
    }
}

impl Clock for TestClock {
    fn now(&self) -> Timestamp {
        let now = *self.now.lock().expect("clock");
        self.advance_ms(self.tick_ms);
        now
    }
}

fn holder() -> LockInfo {
    LockInfo {
        pid: 1,
        host: String::new(),
        command: "timing".into(),
        since: String::new(),
    }
}

/// Two nodes: `work` (gavel's work, a model call, a gate) and `check` (a test run, then the
/// end), each taking the times the test gives it.
struct Toy<'c> {
    clock: &'c TestClock,
}

#[derive(Serialize, Deserialize, Default)]
struct ToyState {
    /// `NodeCtx::time_spent` as `check` saw it.
    seen: Option<TimeSpent>,
}

impl Workflow for Toy<'_> {
    type State = ToyState;

    fn name(&self) -> &'static str {
        "toy"
    }

    fn run_node(
        &self,
        node: &str,
        s: &mut ToyState,
        cx: &mut NodeCtx<'_>,
    ) -> Result<Transition, NodeError> {
        let watch = cx.stopwatch();
        match node {
            "work" if cx.answer()?.is_some() => Ok(Transition::Goto("check".into())),
            "work" => {
                self.clock.advance_ms(100);
                watch.time(Outside::Model, || self.clock.advance_ms(2_000));
                self.clock.advance_ms(50);
                Ok(Transition::Gate(cx.gate(
                    "go",
                    "Go on?",
                    vec![Choice::new("go", 'g', "go on")],
                )))
            }
            _ => {
                watch.time(Outside::Tests, || self.clock.advance_ms(500));
                s.seen = Some(cx.time_spent()?);
                self.clock.advance_ms(25);
                Ok(Transition::Done {
                    summary: "done".into(),
                })
            }
        }
    }
}

fn accounts(store: &dyn RunStore, run: gavel_core::RunId) -> Vec<TimeSpent> {
    store
        .events(run)
        .expect("events")
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::Time(t) => Some(t),
            _ => None,
        })
        .collect()
}

#[test]
fn a_run_counts_its_start_up_model_calls_and_tests_but_not_the_wait_at_a_gate() {
    let kit = Kit::new();
    let clock = TestClock::new(0);
    let wf = Toy { clock: &clock };
    let engine = gavel_core::Engine::new(&kit.store, &wf, &clock, holder());
    let run = engine
        .start("toy", &ToyState::default(), "work")
        .expect("start");

    // The command starts, checks things for 300 ms, then drives to the gate.
    let started = clock.now();
    clock.advance_ms(300);
    let engine = gavel_core::Engine::new(&kit.store, &wf, &clock, holder()).counting_from(started);
    let gate = match engine.drive(run, None).expect("drive") {
        Outcome::Waiting(gate) => gate,
        other => panic!("expected the gate, got {other:?}"),
    };
    let first = TimeSpent {
        active_ms: 2_450,
        model_ms: 2_000,
        tests_ms: 0,
    };
    assert_eq!(accounts(&kit.store, run), [first]);

    // An hour at the gate, then `gavel resume` answers it (in a new process: no start-up
    // counted this time, as if it had asked first).
    clock.advance_ms(3_600_000);
    let engine = gavel_core::Engine::new(&kit.store, &wf, &clock, holder());
    let done = engine.drive(run, answer(&gate, "go")).expect("drive");
    assert!(matches!(done, Outcome::Done { .. }), "{done:?}");
    let second = TimeSpent {
        active_ms: 525,
        model_ms: 0,
        tests_ms: 500,
    };
    assert_eq!(accounts(&kit.store, run), [first, second]);

    let total = TimeSpent::of_events(&kit.store.events(run).expect("events")).expect("accounts");
    assert_eq!(total.own_ms(), 300 + 100 + 50 + 25);
    assert_eq!(
        total.describe(),
        "gavel's own time: 0.47 s of 2.97 s (model calls 2.00 s, tests 0.50 s)"
    );
    // A node sees the earlier drives and its own drive so far.
    let head = kit.store.head(run).expect("head").expect("checkpoint");
    let s: ToyState = serde_json::from_slice(&head.state).expect("state");
    assert_eq!(
        s.seen,
        Some(TimeSpent {
            active_ms: 2_450 + 500,
            model_ms: 2_000,
            tests_ms: 500,
        })
    );
}

#[test]
fn the_diff_gate_summary_gives_gavels_own_time_apart_from_model_calls_and_tests() {
    let kit = Kit::new();
    // Every reading of the clock moves it by 10 ms: a model call or a test run (which read it
    // once before and once after) counts exactly 10 ms each; everything else is gavel's.
    let clock = TestClock::new(10);
    let wf = pipeline(
        &kit,
        &[("implementer", &[TESTS, CODE])],
        1,
        Duration::from_secs(60),
        |_| Box::new(Issue),
    );
    let s = new_state(&kit, "# Design\n\n`done.txt` says ok.\n");
    let engine = gavel_core::Engine::new(&kit.store, &wf, &clock, holder());
    let run = engine
        .start_claiming_slug(&s.worktree_name(), &s, node::LOAD)
        .expect("start");
    let gate = match engine.drive(run, None).expect("drive") {
        Outcome::Waiting(gate) => gate,
        other => panic!("expected the diff gate, got {other:?}"),
    };
    let [spent] = accounts(&kit.store, run)[..] else {
        panic!("one account per drive");
    };
    let st: ImplementState = kit.state(run);
    assert_eq!(st.spend.call_count, 2);
    // Two model calls (tests, code), two test runs (red, green).
    assert_eq!(spent.model_ms, 2 * 10);
    assert_eq!(spent.tests_ms, 2 * 10);
    assert!(spent.own_ms() > 0, "{spent:?}");
    let detail = gate.detail.as_deref().unwrap_or_default();
    let line = detail
        .lines()
        .find(|l| l.starts_with("gavel's own time: "))
        .unwrap_or_else(|| panic!("no time line in {detail}"));
    assert!(
        line.ends_with("(model calls 0.02 s, tests 0.02 s)"),
        "{line}"
    );
}
