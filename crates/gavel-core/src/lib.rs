//! The engine every gavel workflow runs on.
//!
//! gavel keeps LLM agents inside state machines that deterministic code controls. This crate is
//! that machinery and nothing else: typed workflow state, nodes and routing ([`Workflow`]),
//! human gates that are handed out as values ([`GateRequest`]), checkpoints written after every
//! node, and a journal of side effects keyed by deterministic step ids so that a resumed run
//! re-applies a finished step's stored result instead of running it twice.
//!
//! The crate never prints, prompts or reads the terminal; storage is behind the [`Store`] trait,
//! the union of [`RunStore`], [`AuditStore`] and [`SpendStore`] (SQLite and PostgreSQL
//! implementations live in `gavel-store`, an in-memory one in `gavel-store-testkit`).

mod artifact;
mod clock;
mod engine;
mod event;
pub mod fsutil;
mod gate;
mod hash;
mod key;
mod run;
mod run_filter;
mod spend;
mod store;
mod timing;

pub use artifact::ArtifactKind;
pub use clock::{Clock, FixedClock, SystemClock};
pub use engine::{
    Blobs, CancelToken, CrashHook, Engine, EngineError, Limits, NodeCtx, NodeError, Observer,
    Outcome, Progress, Session, StepError, Transition, Workflow, abort_run,
};
pub use event::{CallLedger, Event, EventKind};
pub use gate::{Choice, Confirm, GateAnswer, GateRequest, Presentation};
pub use hash::ContentHash;
pub use key::random_key;
pub use run::{CHECKPOINT_FORMAT, Checkpoint, CheckpointMeta, RunId, RunRecord, RunStatus};
pub use run_filter::{RunFilter, RunPage};
pub use spend::{SchemaRefusal, Spend, SpendTotal, spend_totals_of};
pub use store::{
    AuditStore, LockInfo, NewBlob, RunLock, RunStore, SpendStore, Store, StoreError, check_commit,
    model_call_events_of, month_cost, spent_in_month_of,
};
pub use timing::{Outside, Stopwatch, TimeSpent};
