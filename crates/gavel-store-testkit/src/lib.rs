//! What tests of gavel's stores, and tests that need a store, use; never shipped.
//!
//! The shipped `gavel-store` holds only the backends. This crate, a dev-dependency of the
//! crates whose tests need it (`publish = false`), holds the rest:
//! - [`MemoryStore`], a [`gavel_core::Store`] without a disk, for fast tests;
//! - [`conformance`], the single suite of contract checks every store passes (the in-memory,
//!   SQLite and PostgreSQL stores, and any future backend);
//! - [`TempPostgres`], a throwaway PostgreSQL server for the tests that need a real one.
//!
//! Panicking is how all of it reports.

pub mod conformance;
mod memory;
pub mod temp_postgres;

pub use memory::MemoryStore;
pub use temp_postgres::{TempPostgres, TlsFiles};
