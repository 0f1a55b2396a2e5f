//! The driver loop: run a node, checkpoint, route, repeat, until a gate, a halt or the end.
//!
//! Durability rules, which every workflow relies on:
//! - After every node the new state is checkpointed in one transaction with the node's events
//!   and the run's status; a crash before that commit replays the node from the previous
//!   checkpoint.
//! - A side effect inside a node goes through [`NodeCtx::step`], keyed by a deterministic step
//!   id (`{checkpoint seq}:{node}:{name}`). Its result is journaled before the step counts as
//!   done, and a replayed node gets the stored result back instead of running it again.
//! - A gate answer is journaled as a step too, so a crash after answering never loses it.
//! - Each drive ends by writing its account of where its time went (`timing.rs`) with its last
//!   events.

mod answered;
mod ctx;
mod journal;
mod types;

pub use ctx::{Blobs, NodeCtx};
pub use types::{
    CancelToken, CrashHook, EngineError, Limits, NodeError, Observer, Outcome, Progress, StepError,
    Transition, Workflow,
};

use crate::clock::Clock;
use crate::event::{Event, EventKind};
use crate::gate::{Choice, GateAnswer, GateRequest};
use crate::run::{CHECKPOINT_FORMAT, Checkpoint, RunId, RunStatus};
use crate::store::{LockInfo, NewBlob, RunLock, Store, StoreError};
use crate::timing::DriveTime;
use answered::answered_event;
use jiff::Timestamp;
use journal::Journal;
use std::sync::Mutex;

/// A run held by this process: drive it as often as needed; the lock goes when this is dropped.
pub struct Session<'e, 'a, W: Workflow> {
    engine: &'e Engine<'a, W>,
    run: RunId,
    /// The run's step ids, known to this lock holder (see [`journal`]).
    journal: Journal,
    _lock: RunLock,
}

impl<W: Workflow> Session<'_, '_, W> {
    /// Drives the run until it finishes, pauses at a gate, halts or fails (see [`Engine::drive`]).
    pub fn drive(&self, answer: Option<GateAnswer>) -> Result<Outcome, EngineError> {
        self.engine.drive_locked(self.run, answer, &self.journal)
    }

    /// Journals the marker step `step` (an empty result) unless the run has it; whether it was
    /// new. For steps outside any node (which clone last drove the run).
    pub fn mark_once(&self, step: &str) -> Result<bool, EngineError> {
        let store = self.engine.store;
        if self.journal.get(store, step)?.is_some() {
            return Ok(false);
        }
        self.journal
            .put(store, step, b"", &self.engine.clock.now_rfc3339())?;
        Ok(true)
    }
}

/// Drives runs of one workflow against one store.
pub struct Engine<'a, W: Workflow> {
    store: &'a dyn Store,
    workflow: &'a W,
    clock: &'a dyn Clock,
    cancel: CancelToken,
    limits: Limits,
    crash: Option<&'a CrashHook>,
    observer: Option<&'a Observer>,
    holder: LockInfo,
    /// When the first drive's account starts, if earlier than the drive (see
    /// [`Self::counting_from`]); taken by that drive.
    since: Mutex<Option<Timestamp>>,
}

/// Stops `run` for good, with only the store: no workflow, providers or tracker are needed,
/// so any run can be aborted by any gavel that can open its store. Takes the run's lock.
pub fn abort_run(
    store: &dyn Store,
    clock: &dyn Clock,
    holder: &LockInfo,
    run: RunId,
    reason: &str,
) -> Result<(), EngineError> {
    let _lock = store.lock(run, holder)?;
    let record = store.run(run)?.ok_or(StoreError::UnknownRun(run))?;
    EngineError::refuse_unknown(run, &record.status)?;
    if record.status.is_terminal() {
        return Err(EngineError::Finished {
            run,
            status: record.status.name().into(),
        });
    }
    let now = clock.now_rfc3339();
    let events = [Event {
        at: now.clone(),
        kind: EventKind::Aborted {
            reason: reason.into(),
        },
    }];
    store.set_status(
        run,
        &RunStatus::Aborted {
            reason: reason.into(),
        },
        &events,
        &now,
    )?;
    Ok(())
}

impl<'a, W: Workflow> Engine<'a, W> {
    pub fn new(
        store: &'a dyn Store,
        workflow: &'a W,
        clock: &'a dyn Clock,
        holder: LockInfo,
    ) -> Self {
        Self {
            store,
            workflow,
            clock,
            cancel: CancelToken::new(),
            limits: Limits::default(),
            crash: None,
            observer: None,
            holder,
            since: Mutex::new(None),
        }
    }

    pub fn with_cancel(mut self, cancel: CancelToken) -> Self {
        self.cancel = cancel;
        self
    }

    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    pub fn with_observer(mut self, observer: &'a Observer) -> Self {
        self.observer = Some(observer);
        self
    }

    pub fn with_crash_hook(mut self, hook: &'a CrashHook) -> Self {
        self.crash = Some(hook);
        self
    }

    /// Counts the first drive's time from `at` instead of from its own start: the caller's
    /// work for the run before it (a command's start-up, its checks) is gavel's time too. Only
    /// for a caller that asked a person nothing since `at` (see `timing.rs`).
    pub fn counting_from(self, at: Timestamp) -> Self {
        if let Ok(mut since) = self.since.lock() {
            *since = Some(at);
        }
        self
    }

    /// Creates a run whose first node is `start`.
    pub fn start(&self, slug: &str, state: &W::State, start: &str) -> Result<RunId, EngineError> {
        self.create(slug, state, start, false)
    }

    /// Like [`Self::start`], claiming `slug`: no other unfinished run of this workflow may use
    /// it, checked atomically with the creation
    /// ([`RunStore::create_run_claiming_slug`](crate::RunStore::create_run_claiming_slug)).
    pub fn start_claiming_slug(
        &self,
        slug: &str,
        state: &W::State,
        start: &str,
    ) -> Result<RunId, EngineError> {
        self.create(slug, state, start, true)
    }

    fn create(
        &self,
        slug: &str,
        state: &W::State,
        start: &str,
        claim: bool,
    ) -> Result<RunId, EngineError> {
        let bytes = serde_json::to_vec(state).map_err(|e| EngineError::BadState {
            run: RunId(0),
            message: e.to_string(),
        })?;
        let (workflow, now) = (self.workflow.name(), self.clock.now_rfc3339());
        let id = if claim {
            self.store
                .create_run_claiming_slug(workflow, slug, &bytes, start, &now)?
        } else {
            self.store.create_run(workflow, slug, &bytes, start, &now)?
        };
        Ok(id)
    }

    /// Drives `run` until it finishes, pauses at a gate, halts or fails. `answer` answers the
    /// gate the run is waiting at; without one, a waiting run returns its gate again.
    pub fn drive(&self, run: RunId, answer: Option<GateAnswer>) -> Result<Outcome, EngineError> {
        self.session(run)?.drive(answer)
    }

    /// Takes the run's lock for a series of drives, so that a person answering gates at a
    /// terminal keeps the run to themselves between answers.
    pub fn session(&self, run: RunId) -> Result<Session<'_, 'a, W>, EngineError> {
        let lock = self.store.lock(run, &self.holder)?;
        Ok(Session {
            engine: self,
            run,
            journal: Journal::load(self.store, run),
            _lock: lock,
        })
    }

    fn drive_locked(
        &self,
        run: RunId,
        answer: Option<GateAnswer>,
        journal: &Journal,
    ) -> Result<Outcome, EngineError> {
        let started = self
            .since
            .lock()
            .ok()
            .and_then(|mut since| since.take())
            .unwrap_or_else(|| self.clock.now());
        let drive = DriveTime::starting_at(started);
        let record = self.store.run(run)?.ok_or(StoreError::UnknownRun(run))?;
        EngineError::refuse_unknown(run, &record.status)?;
        if record.status.is_terminal() {
            return Err(EngineError::Finished {
                run,
                status: record.status.name().into(),
            });
        }
        let mut cp = self
            .store
            .head(run)?
            .ok_or(EngineError::NoCheckpoint { run })?;
        if cp.format > CHECKPOINT_FORMAT {
            return Err(StoreError::NewerFormat {
                found: cp.format,
                supported: CHECKPOINT_FORMAT,
            }
            .into());
        }
        // The answer the first node consumes, for the timeline (see [`answered_event`]).
        let mut answered: Option<GateAnswer> = None;
        match (&record.status, answer) {
            (RunStatus::Waiting { gate }, answer) => {
                let node = cp.next.clone().unwrap_or_default();
                let step = step_id(cp.seq, &node, ANSWER_STEP);
                // An answer journaled just before a crash is applied, never asked for again.
                let journaled: Option<GateAnswer> =
                    match journal.get(self.store, &step)? {
                        Some(bytes) => Some(serde_json::from_slice(&bytes).map_err(|e| {
                            EngineError::BadState {
                                run,
                                message: format!("stored gate answer: {e}"),
                            }
                        })?),
                        None => None,
                    };
                match (journaled, answer) {
                    (Some(done), Some(new))
                        if done.choice != new.choice || done.feedback != new.feedback =>
                    {
                        return Err(EngineError::AlreadyAnswered {
                            run,
                            gate: gate.id.clone(),
                            choice: done.choice,
                        });
                    }
                    (Some(done), _) => answered = Some(done),
                    (None, None) => return Ok(Outcome::Waiting(gate.clone())),
                    (None, Some(answer)) => {
                        let choice = validate_answer(run, gate, &answer)?;
                        let answer = GateAnswer {
                            choice: choice.name.clone(),
                            ..answer
                        };
                        let bytes =
                            serde_json::to_vec(&answer).map_err(|e| EngineError::BadState {
                                run,
                                message: e.to_string(),
                            })?;
                        journal.put(self.store, &step, &bytes, &self.clock.now_rfc3339())?;
                        answered = Some(answer);
                    }
                }
            }
            (status, Some(_)) => {
                return Err(EngineError::NotWaiting {
                    run,
                    status: status.name().into(),
                });
            }
            (_, None) => {}
        }
        self.store
            .set_status(run, &RunStatus::Running, &[], &self.clock.now_rfc3339())?;

        let mut steps = 0u32;
        loop {
            if self.cancel.is_cancelled() {
                return self.interrupted(run, Vec::new(), &drive);
            }
            let Some(node) = cp.next.clone() else {
                // A head without a next node is finished; repair the status if a crash hit
                // between the final checkpoint and the status write (they share a transaction,
                // so this is only reachable with a foreign store).
                let summary = String::from("finished");
                self.store.set_status(
                    run,
                    &RunStatus::Done {
                        summary: summary.clone(),
                    },
                    &[drive.event(self.clock)],
                    &self.clock.now_rfc3339(),
                )?;
                return Ok(Outcome::Done { summary });
            };
            steps += 1;
            if steps > self.limits.max_steps_per_drive {
                let reason = format!(
                    "engine step limit ({}) reached in one drive; the workflow may be looping",
                    self.limits.max_steps_per_drive
                );
                return self.halt(run, reason, Vec::new(), &drive);
            }
            self.crash_point(&format!("before:{node}"));
            if let Some(obs) = self.observer {
                obs(Progress::NodeStarted { node: &node });
            }
            tracing::info!(run = run.0, node = %node, seq = cp.seq, "node started");
            let mut state: W::State =
                serde_json::from_slice(&cp.state).map_err(|e| EngineError::BadState {
                    run,
                    message: e.to_string(),
                })?;
            let mut cx = NodeCtx {
                store: self.store,
                clock: self.clock,
                cancel: &self.cancel,
                crash: self.crash,
                run,
                seq: cp.seq,
                node: node.clone(),
                events: Vec::new(),
                journal,
                pending: Default::default(),
                drive: &drive,
            };
            let result = self.workflow.run_node(&node, &mut state, &mut cx);
            let mut events = std::mem::take(&mut cx.events);
            if let Some(a) = answered.take()
                && !matches!(result, Err(NodeError::Cancelled))
            {
                answered_event(&mut events, a, self.clock.now_rfc3339());
            }
            let blobs = cx.take_pending();
            drop(cx);
            if !matches!(
                result,
                Ok(Transition::Goto(_) | Transition::Done { .. } | Transition::Abort { .. })
                    | Err(NodeError::Store(_))
            ) {
                // No checkpoint follows: the events about to be recorded may name them.
                self.store_blobs(&blobs)?;
            }
            let blobs: Vec<NewBlob<'_>> = blobs
                .iter()
                .map(|b| NewBlob {
                    bytes: &b.bytes,
                    similar: &b.similar,
                })
                .collect();
            let transition = match result {
                Ok(t) => t,
                Err(NodeError::Cancelled) => return self.interrupted(run, events, &drive),
                Err(NodeError::Failed(error)) => {
                    tracing::warn!(run = run.0, node = %node, %error, "node failed");
                    events.push(self.event(EventKind::Failed {
                        error: error.clone(),
                    }));
                    events.push(drive.event(self.clock));
                    self.store.set_status(
                        run,
                        &RunStatus::Failed {
                            error: error.clone(),
                        },
                        &events,
                        &self.clock.now_rfc3339(),
                    )?;
                    self.report(&events);
                    return Ok(Outcome::Failed { error });
                }
                Err(NodeError::Store(e)) => return Err(e.into()),
            };
            match transition {
                Transition::Goto(next) => {
                    tracing::info!(run = run.0, node = %node, next = %next, "checkpoint {}", cp.seq + 1);
                    events.push(self.event(EventKind::Node {
                        node: node.clone(),
                        next: Some(next.clone()),
                        seq: cp.seq + 1,
                    }));
                    cp = self.checkpoint(
                        &cp,
                        (&node, Some(next)),
                        &state,
                        &events,
                        &RunStatus::Running,
                        &blobs,
                    )?;
                    self.crash_point(&format!("after:{node}"));
                }
                Transition::Gate(gate) => {
                    events.push(self.event(EventKind::GateWaiting {
                        gate: gate.id.clone(),
                        kind: gate.kind.clone(),
                    }));
                    events.push(drive.event(self.clock));
                    self.store.set_status(
                        run,
                        &RunStatus::Waiting { gate: gate.clone() },
                        &events,
                        &self.clock.now_rfc3339(),
                    )?;
                    self.report(&events);
                    return Ok(Outcome::Waiting(gate));
                }
                Transition::Done { summary } => {
                    events.push(self.event(EventKind::Node {
                        node: node.clone(),
                        next: None,
                        seq: cp.seq + 1,
                    }));
                    events.push(self.event(EventKind::Done {
                        summary: summary.clone(),
                    }));
                    events.push(drive.event(self.clock));
                    self.checkpoint(
                        &cp,
                        (&node, None),
                        &state,
                        &events,
                        &RunStatus::Done {
                            summary: summary.clone(),
                        },
                        &blobs,
                    )?;
                    self.crash_point(&format!("after:{node}"));
                    return Ok(Outcome::Done { summary });
                }
                Transition::Abort { reason } => {
                    events.push(self.event(EventKind::Aborted {
                        reason: reason.clone(),
                    }));
                    events.push(drive.event(self.clock));
                    self.checkpoint(
                        &cp,
                        (&node, None),
                        &state,
                        &events,
                        &RunStatus::Aborted {
                            reason: reason.clone(),
                        },
                        &blobs,
                    )?;
                    return Ok(Outcome::Aborted { reason });
                }
                Transition::Halt { reason } => return self.halt(run, reason, events, &drive),
            }
        }
    }

    /// Marks a run aborted by a person (from any non-terminal status).
    pub fn abort(&self, run: RunId, reason: &str) -> Result<(), EngineError> {
        abort_run(self.store, self.clock, &self.holder, run, reason)
    }

    /// Commits the state `state` reached by leaving `node` for `next` (`route`).
    fn checkpoint(
        &self,
        prev: &Checkpoint,
        (node, next): (&str, Option<String>),
        state: &W::State,
        events: &[Event],
        status: &RunStatus,
        blobs: &[NewBlob<'_>],
    ) -> Result<Checkpoint, EngineError> {
        let bytes = serde_json::to_vec(state).map_err(|e| EngineError::BadState {
            run: prev.run,
            message: e.to_string(),
        })?;
        let cp = Checkpoint {
            run: prev.run,
            seq: prev.seq + 1,
            parent: Some(prev.seq),
            node: Some(node.to_owned()),
            next,
            state: bytes,
            format: CHECKPOINT_FORMAT,
            created_at: self.clock.now_rfc3339(),
        };
        self.store.commit_with_blobs(&cp, events, status, blobs)?;
        self.report(events);
        Ok(cp)
    }

    /// Stores a node's kept blobs on their own (no checkpoint follows to carry them).
    fn store_blobs(&self, blobs: &[ctx::PendingBlob]) -> Result<(), StoreError> {
        for blob in blobs {
            self.store.put_blob_sharing(&blob.bytes, &blob.similar)?;
        }
        Ok(())
    }

    fn halt(
        &self,
        run: RunId,
        reason: String,
        mut events: Vec<Event>,
        drive: &DriveTime,
    ) -> Result<Outcome, EngineError> {
        events.push(self.event(EventKind::Halted {
            reason: reason.clone(),
        }));
        events.push(drive.event(self.clock));
        self.store.set_status(
            run,
            &RunStatus::Halted {
                reason: reason.clone(),
            },
            &events,
            &self.clock.now_rfc3339(),
        )?;
        self.report(&events);
        Ok(Outcome::Halted { reason })
    }

    fn interrupted(
        &self,
        run: RunId,
        mut events: Vec<Event>,
        drive: &DriveTime,
    ) -> Result<Outcome, EngineError> {
        let reason = String::from("interrupted (Ctrl-C)");
        events.push(self.event(EventKind::Halted {
            reason: reason.clone(),
        }));
        events.push(drive.event(self.clock));
        self.store.set_status(
            run,
            &RunStatus::Halted { reason },
            &events,
            &self.clock.now_rfc3339(),
        )?;
        self.report(&events);
        Ok(Outcome::Interrupted)
    }

    fn report(&self, events: &[Event]) {
        if let Some(obs) = self.observer {
            for e in events {
                obs(Progress::Event(e));
            }
        }
    }

    fn event(&self, kind: EventKind) -> Event {
        Event {
            at: self.clock.now_rfc3339(),
            kind,
        }
    }

    fn crash_point(&self, point: &str) {
        if let Some(hook) = self.crash {
            hook(point);
        }
    }
}

pub(crate) const ANSWER_STEP: &str = "answer";

pub(crate) fn step_id(seq: u64, node: &str, name: &str) -> String {
    format!("{seq}:{node}:{name}")
}

fn validate_answer<'g>(
    run: RunId,
    gate: &'g GateRequest,
    answer: &GateAnswer,
) -> Result<&'g Choice, EngineError> {
    if answer.gate_id != gate.id {
        return Err(EngineError::WrongGate {
            run,
            expected: gate.id.clone(),
            got: answer.gate_id.clone(),
        });
    }
    gate.choice(&answer.choice)
        .ok_or_else(|| EngineError::InvalidChoice {
            gate: gate.id.clone(),
            choice: answer.choice.clone(),
            valid: gate.choice_names().join(", "),
        })
}
