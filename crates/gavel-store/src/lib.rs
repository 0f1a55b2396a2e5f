//! Where gavel keeps its runs: implementations of [`gavel_core::Store`].
//!
//! The engine in `gavel-core` only knows the [`Store`](gavel_core::Store) contract; this crate
//! supplies the backends. [`SqliteStore`] is the default for real runs: a single database file
//! per repository that survives a killed process, that several gavel processes can share while
//! each drives its own run, and whose run locks are OS file locks released when their holder
//! dies. [`PgStore`] keeps a team's runs in one PostgreSQL database, each repository's apart,
//! with run locks the server frees when their holder dies. [`MemoryStore`] has the same
//! behaviour without a disk, for fast tests. [`conformance`] is the single suite of contract
//! checks all three pass, and any future backend must pass too; [`copy`] moves runs between any
//! two; [`testing`] starts a throwaway PostgreSQL server for tests.
//!
//! Conventions shared by every backend, beyond what the trait documents:
//! - [`Store::run`](gavel_core::Store::run) answers `None` for an unknown run; every other
//!   method that takes a run id fails with [`StoreError::UnknownRun`].
//! - A commit whose `seq` is not the head's seq + 1, or whose parent is not the head, is a
//!   [`StoreError::Conflict`]; a checkpoint in a format newer than [`CHECKPOINT_FORMAT`] is
//!   refused with [`StoreError::NewerFormat`].
//! - A run's `updated_at` is the `now` of its last status change or the `created_at` of its
//!   last checkpoint; journaling a step result does not change it.

mod blobs;
pub mod conformance;
pub mod copy;
mod delta;
mod lock;
mod memory;
mod postgres;
mod schema;
mod sqlite;
pub mod testing;

use gavel_core::{CHECKPOINT_FORMAT, Checkpoint, StoreError};

pub use memory::MemoryStore;
pub use postgres::{
    DEFAULT_RECONNECT_FOR as DEFAULT_PG_RECONNECT, PgEnv, PgStore, redact as redact_url,
};
pub use sqlite::SqliteStore;

/// Checks that `cp` may follow a head at seq `head`, before anything is written.
pub(crate) fn check_commit(cp: &Checkpoint, head: u64) -> Result<(), StoreError> {
    if cp.format > CHECKPOINT_FORMAT {
        return Err(StoreError::NewerFormat {
            found: cp.format,
            supported: CHECKPOINT_FORMAT,
        });
    }
    let expected = head.saturating_add(1);
    if cp.seq != expected {
        return Err(StoreError::Conflict {
            run: cp.run,
            expected,
            got: cp.seq,
        });
    }
    match cp.parent {
        Some(parent) if parent == head => Ok(()),
        Some(parent) => Err(StoreError::Conflict {
            run: cp.run,
            expected: head,
            got: parent,
        }),
        None => Err(StoreError::Backend {
            message: format!(
                "checkpoint {} of run {} has no parent; only the initial checkpoint may lack one",
                cp.seq, cp.run
            ),
            source: None,
        }),
    }
}
