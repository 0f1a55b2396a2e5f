//! Links the `gavel` binary as a position-dependent executable (`-no-pie`, the default of Go's
//! linker on Linux). A PIE's loader must rewrite every pointer in its relocated read-only data
//! at each start, some 180 pages for gavel: about 0.6 ms of every command (`perf stat -r 30
//! gavel --version`: 2.10 ms as a PIE, 1.51 ms without). The cost is that the executable's own
//! code is not randomised in memory (its libraries, stack and heap still are); see
//! ARCHITECTURE.md, "Process start".

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if os == "linux" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
