//! gavel-diffgate's one integration-test binary: real git repositories in temporary
//! directories, analysed and reported on as the `gavel diff-gate` command does. Test names
//! carry the LLD #171 test ids (section 10.0) where one applies.

mod analyze;
mod audit;
mod full;
mod report;
mod util;
