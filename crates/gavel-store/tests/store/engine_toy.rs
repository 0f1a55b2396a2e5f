//! A toy workflow and a test bench for the engine tests.
//!
//! The toy is the smallest workflow that exercises everything the engine promises:
//! `start` -> `work` (one journaled side effect) -> `gate` (a human decision: `go`, `loop` back
//! to `work`, or `stop`) -> `finish`, plus `spin`, which routes to itself forever. Tests arm
//! one-shot faults on it (halt `work`, fail `work` after its effect) and read back how often the
//! effect really ran and which nodes really executed, including executions whose results the
//! engine threw away. The bench wraps one store with the toy and a fixed clock, and simulates a
//! killed process by unwinding out of the engine at a named crash point.

use std::convert::Infallible;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Mutex, PoisonError};

use gavel_core::{
    Checkpoint, CheckpointMeta, Choice, Engine, EngineError, EventKind, FixedClock, GateAnswer,
    GateRequest, LockInfo, NodeCtx, NodeError, Outcome, RunId, RunStatus, StepError, Store,
    Transition, Workflow,
};
use serde::{Deserialize, Serialize};

pub const NOW: &str = "2026-01-30T14:33:20Z";

pub const START: &str = "start";
pub const WORK: &str = "work";
pub const GATE: &str = "gate";
pub const FINISH: &str = "finish";
pub const SPIN: &str = "spin";

/// The name of `work`'s journaled step.
pub const EFFECT: &str = "effect";
pub const GATE_KIND: &str = "decide";
pub const HALT_REASON: &str = "work halted on purpose";
pub const FAILURE: &str = "work failed after its effect";
pub const STOP_REASON: &str = "stopped at the gate";

/// Runs each named `fn(&dyn Store)` as three tests, `memory::NAME`, `sqlite::NAME` (on a fresh
/// `state.db` in a temporary directory) and `postgres::NAME` (on a fresh database of the test
/// binary's PostgreSQL cluster), so a failure names the backend. Attributes written
/// before a name (for example `#[ignore = "..."]`) apply to all three.
macro_rules! on_every_store {
    ($($(#[$attr:meta])* $name:ident),* $(,)?) => {
        mod memory {
            $(
                $(#[$attr])*
                #[test]
                fn $name() {
                    super::$name(&gavel_store_testkit::MemoryStore::new());
                }
            )*
        }
        mod sqlite {
            $(
                $(#[$attr])*
                #[test]
                fn $name() {
                    let dir = tempfile::tempdir().expect("tempdir");
                    let store = gavel_store::SqliteStore::open(&dir.path().join("state.db"))
                        .expect("open the SQLite store");
                    super::$name(&store);
                }
            )*
        }
        mod postgres {
            $(
                $(#[$attr])*
                #[test]
                fn $name() {
                    let pg = gavel_store_testkit::TempPostgres::shared();
                    let store = gavel_store::PgStore::open(&pg.fresh_database())
                        .expect("open the PostgreSQL store");
                    super::$name(&store);
                }
            )*
        }
    };
}

/// The toy's state, checkpointed after every node.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    /// Every node whose visit was kept, in order.
    pub trail: Vec<String>,
    /// What the journaled effect returned, once per kept visit of `work`.
    pub results: Vec<u32>,
}

/// The toy workflow, with its one-shot faults and its record of what really ran.
#[derive(Debug, Default)]
pub struct Toy {
    /// How many times the side effect really ran (journal replays do not count).
    effects: AtomicU32,
    /// Every node execution, kept or not.
    visits: Mutex<Vec<String>>,
    halt_work: AtomicBool,
    fail_work: AtomicBool,
}

impl Toy {
    pub fn effects(&self) -> u32 {
        self.effects.load(Ordering::SeqCst)
    }

    pub fn visits(&self) -> Vec<String> {
        self.visits
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The next visit of `work` halts before its effect.
    pub fn halt_work_once(&self) {
        self.halt_work.store(true, Ordering::SeqCst);
    }

    /// The next visit of `work` fails right after its effect was journaled.
    pub fn fail_work_once(&self) {
        self.fail_work.store(true, Ordering::SeqCst);
    }

    fn work(&self, tally: &mut Tally, cx: &mut NodeCtx<'_>) -> Result<Transition, NodeError> {
        if self.halt_work.swap(false, Ordering::SeqCst) {
            return Ok(Transition::Halt {
                reason: HALT_REASON.into(),
            });
        }
        if cx.cancel().is_cancelled() {
            return Err(NodeError::Cancelled);
        }
        let value = cx
            .step(EFFECT, || {
                Ok::<_, Infallible>(self.effects.fetch_add(1, Ordering::SeqCst) + 1)
            })
            .map_err(|e| match e {
                StepError::Store(e) => NodeError::Store(e),
                other => NodeError::Failed(other.to_string()),
            })?;
        if self.fail_work.swap(false, Ordering::SeqCst) {
            return Err(NodeError::Failed(FAILURE.into()));
        }
        cx.event(EventKind::Note {
            text: format!("effect returned {value}"),
        });
        tally.results.push(value);
        goto(GATE)
    }
}

impl Workflow for Toy {
    type State = Tally;

    fn name(&self) -> &'static str {
        "toy"
    }

    fn run_node(
        &self,
        node: &str,
        tally: &mut Tally,
        cx: &mut NodeCtx<'_>,
    ) -> Result<Transition, NodeError> {
        self.visits
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(node.to_owned());
        tally.trail.push(node.to_owned());
        match node {
            START => goto(WORK),
            WORK => self.work(tally, cx),
            GATE => decide(cx),
            FINISH => Ok(Transition::Done {
                summary: format!("{} effect(s)", tally.results.len()),
            }),
            SPIN => goto(SPIN),
            other => Err(NodeError::Failed(format!("the toy has no node `{other}`"))),
        }
    }
}

fn goto(node: &str) -> Result<Transition, NodeError> {
    Ok(Transition::Goto(node.into()))
}

fn decide(cx: &mut NodeCtx<'_>) -> Result<Transition, NodeError> {
    let Some(answer) = cx.answer()? else {
        let choices = vec![
            Choice::new("go", 'G', "finish the run"),
            Choice::new("loop", 'L', "work once more"),
            Choice::new("stop", 'S', "abort the run"),
        ];
        return Ok(Transition::Gate(cx.gate(GATE_KIND, "Go on?", choices)));
    };
    match answer.choice.as_str() {
        "go" => goto(FINISH),
        "loop" => goto(WORK),
        "stop" => Ok(Transition::Abort {
            reason: STOP_REASON.into(),
        }),
        other => Err(NodeError::Failed(format!("unexpected answer `{other}`"))),
    }
}

pub fn holder(pid: u32, command: &str) -> LockInfo {
    LockInfo {
        pid,
        host: String::new(),
        command: command.into(),
        since: NOW.into(),
    }
}

pub fn answer(gate_id: &str, choice: &str) -> GateAnswer {
    GateAnswer {
        gate_id: gate_id.into(),
        choice: choice.into(),
        feedback: None,
    }
}

/// The payload of a simulated crash, so that a real panic is never mistaken for one.
#[derive(Debug)]
pub struct Crashed(pub String);

/// Ends the "process" at `point` without the panic hook's noise.
pub fn crash(point: &str) -> ! {
    panic::resume_unwind(Box::new(Crashed(point.to_owned())))
}

/// Runs `f` and expects it to die by [`crash`] at `point`.
pub fn expect_crash<T: std::fmt::Debug>(point: &str, f: impl FnOnce() -> T) {
    match panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(value) => panic!("expected a crash at {point}, but the call returned {value:?}"),
        Err(payload) => match payload.downcast::<Crashed>() {
            Ok(crashed) => assert_eq!(crashed.0, point),
            Err(other) => panic::resume_unwind(other),
        },
    }
}

/// One store, the toy and a fixed clock.
pub struct Bench<'s> {
    pub store: &'s dyn Store,
    pub toy: Toy,
    pub clock: FixedClock,
}

impl<'s> Bench<'s> {
    pub fn new(store: &'s dyn Store) -> Self {
        Self {
            store,
            toy: Toy::default(),
            clock: FixedClock(NOW.parse().expect("a valid timestamp")),
        }
    }

    pub fn engine(&self) -> Engine<'_, Toy> {
        Engine::new(
            self.store,
            &self.toy,
            &self.clock,
            holder(100, "gavel test"),
        )
    }

    /// A new run at `start`.
    pub fn start(&self) -> RunId {
        self.start_at(START)
    }

    pub fn start_at(&self, node: &str) -> RunId {
        self.engine()
            .start("toy-run", &Tally::default(), node)
            .expect("start a run")
    }

    pub fn drive(&self, run: RunId, answer: Option<GateAnswer>) -> Result<Outcome, EngineError> {
        self.engine().drive(run, answer)
    }

    /// Drives `run` and expects it to stop at a gate.
    pub fn drive_to_gate(&self, run: RunId, answer: Option<GateAnswer>) -> GateRequest {
        match self.drive(run, answer) {
            Ok(Outcome::Waiting(gate)) => gate,
            other => panic!("expected run {run} to wait at a gate, got {other:?}"),
        }
    }

    /// Drives `run` with a crash hook that kills the "process" at `point`.
    pub fn crash_at(&self, point: &str, run: RunId, answer: Option<GateAnswer>) {
        // `CrashHook` is `dyn Fn + 'static`, so the hook owns its copy of the point.
        let target = point.to_owned();
        let hook = move |at: &str| {
            if at == target {
                crash(at);
            }
        };
        let engine = self.engine().with_crash_hook(&hook);
        expect_crash(point, || engine.drive(run, answer));
    }

    pub fn status(&self, run: RunId) -> RunStatus {
        self.store
            .run(run)
            .expect("read the run")
            .expect("the run exists")
            .status
    }

    pub fn head(&self, run: RunId) -> Checkpoint {
        self.store
            .head(run)
            .expect("read the head")
            .expect("a head")
    }

    /// The state in the head checkpoint.
    pub fn tally(&self, run: RunId) -> Tally {
        serde_json::from_slice(&self.head(run).state).expect("the head holds a Tally")
    }

    pub fn checkpoints(&self, run: RunId) -> Vec<CheckpointMeta> {
        self.store.checkpoints(run).expect("read the checkpoints")
    }

    /// The run's events but the time account each drive ends with, which
    /// `each_drive_ends_with_its_time_account` checks on its own.
    pub fn events(&self, run: RunId) -> Vec<EventKind> {
        self.all_events(run)
            .into_iter()
            .filter(|kind| !matches!(kind, EventKind::Time(_)))
            .collect()
    }

    /// Every event of the run, in order.
    pub fn all_events(&self, run: RunId) -> Vec<EventKind> {
        let events = self.store.events(run).expect("read the events");
        assert!(
            events.iter().all(|e| e.at == NOW),
            "every event is stamped by the engine's clock: {events:?}"
        );
        events.into_iter().map(|e| e.kind).collect()
    }

    /// A journaled step result, as text.
    pub fn journal(&self, run: RunId, step: &str) -> Option<String> {
        self.store
            .get_write(run, step)
            .expect("read the journal")
            .map(|bytes| String::from_utf8(bytes).expect("journaled JSON is UTF-8"))
    }
}

/// The `Node` event the engine records when `node` routes to `next` and writes checkpoint `seq`.
pub fn node_event(node: &str, next: Option<&str>, seq: u64) -> EventKind {
    EventKind::Node {
        node: node.into(),
        next: next.map(Into::into),
        seq,
    }
}

pub fn note(value: u32) -> EventKind {
    EventKind::Note {
        text: format!("effect returned {value}"),
    }
}

pub fn gate_waiting(gate: &str) -> EventKind {
    EventKind::GateWaiting {
        gate: gate.into(),
        kind: GATE_KIND.into(),
    }
}

/// A person's answer as the engine records it (the toy records none itself).
pub fn gate_answered(gate: &str, choice: &str) -> EventKind {
    EventKind::GateAnswered {
        gate: gate.into(),
        choice: choice.into(),
        by: "person".into(),
    }
}

pub fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}
