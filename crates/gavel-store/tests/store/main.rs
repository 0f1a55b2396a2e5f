//! gavel-store's one integration-test binary.
//!
//! `conformance` holds the store tests proper: the shared contract suite against both backends
//! and what only the SQLite store promises. The `engine*` modules drive gavel-core's workflow
//! engine against real stores; they live here because gavel-store depends on gavel-core, so
//! gavel-core cannot test its engine against these backends itself.

mod conformance;
mod copy;
#[macro_use]
mod engine_toy;
mod engine;
mod engine_blobs;
mod engine_control;
mod engine_gates;
mod forward_compat;
mod migrate_spend;
mod postgres;
mod postgres_steps;
mod postgres_tls;
mod sqlite_open;
