//! Integration tests of `gavel_exec::runners` on real sample projects, created in temp dirs
//! by the tests and run with the real runners: pytest, cargo, `node --test` and `go test`
//! (each installed by `.ci/run` when missing).

mod cargo;
mod go;
mod green;
mod node;
mod pytest;
mod util;
