//! gavel-exec's integration tests: behaviour that needs a real binary of this crate, such as
//! the `gavel-confine` launcher (`CARGO_BIN_EXE_gavel-confine` exists only for these tests).

mod boxed;
mod confine;
