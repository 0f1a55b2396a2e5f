//! Where gavel keeps its runs: implementations of [`gavel_core::Store`].
//!
//! The engine in `gavel-core` only knows the [`Store`](gavel_core::Store) contract; this crate
//! supplies the backends, each implementing its three parts ([`RunStore`](gavel_core::RunStore),
//! [`AuditStore`](gavel_core::AuditStore), [`SpendStore`](gavel_core::SpendStore)).
//! [`SqliteStore`] is the default for real runs: a single database file per repository that
//! survives a killed process, that several gavel processes can share while each drives its own
//! run, and whose run locks are OS file locks released when their holder dies; it keeps no
//! audit lines (the repository's audit log file is the record). [`PgStore`] keeps a team's runs
//! in one PostgreSQL database, each repository's apart, with run locks the server frees when
//! their holder dies, the team's audit lines and a running monthly spend. [`copy`] moves runs
//! between any two stores.
//!
//! Nothing here is test support: the in-memory store, the conformance suite every backend
//! passes and the throwaway PostgreSQL server tests start live in the dev-only
//! `gavel-store-testkit` crate.
//!
//! Conventions shared by every backend, beyond what the trait documents:
//! - [`RunStore::run`](gavel_core::RunStore::run) answers `None` for an unknown run; every
//!   other method that takes a run id fails with [`StoreError::UnknownRun`].
//! - A commit whose `seq` is not the head's seq + 1, or whose parent is not the head, is a
//!   [`StoreError::Conflict`]; a checkpoint in a format newer than [`CHECKPOINT_FORMAT`] is
//!   refused with [`StoreError::NewerFormat`] ([`gavel_core::check_commit`]).
//! - A run's `updated_at` is the `now` of its last status change or the `created_at` of its
//!   last checkpoint; journaling a step result does not change it.
//!
//! [`StoreError::UnknownRun`]: gavel_core::StoreError::UnknownRun
//! [`StoreError::Conflict`]: gavel_core::StoreError::Conflict
//! [`StoreError::NewerFormat`]: gavel_core::StoreError::NewerFormat
//! [`CHECKPOINT_FORMAT`]: gavel_core::CHECKPOINT_FORMAT

mod blobs;
pub mod copy;
mod delta;
mod lock;
mod postgres;
mod schema;
mod sqlite;
mod status_name;

pub use postgres::{
    DEFAULT_RECONNECT_FOR as DEFAULT_PG_RECONNECT, PgEnv, PgStore, redact as redact_url,
};
pub use sqlite::SqliteStore;
