//! Where a runner's tool chain writes outside the project (build and package caches), so a
//! confined test run may still write there and nowhere else.

use std::path::PathBuf;

use super::RunnerKind;

/// The folders a runner's tool chain writes outside the project (build and package caches),
/// those that exist, for a confined run: cargo's registry, git checkouts and package-cache
/// lock under `CARGO_HOME` (and `CARGO_TARGET_DIR` when set), Go's build and module caches,
/// npm's cache. `var` reads the environment.
pub fn tool_caches(kind: RunnerKind, var: &dyn Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    let home = var("HOME").map(PathBuf::from);
    let or_home = |name: &str, rel: &str| {
        var(name)
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(rel)))
    };
    let mut out: Vec<PathBuf> = Vec::new();
    match kind {
        RunnerKind::Cargo => {
            if let Some(cargo_home) = or_home("CARGO_HOME", ".cargo") {
                for part in [
                    "registry",
                    "git",
                    ".package-cache",
                    ".package-cache-mutate",
                    ".global-cache",
                ] {
                    out.push(cargo_home.join(part));
                }
            }
            out.extend(var("CARGO_TARGET_DIR").map(PathBuf::from));
        }
        RunnerKind::Go => {
            out.extend(or_home("GOCACHE", ".cache/go-build"));
            out.extend(or_home("GOMODCACHE", "go/pkg/mod"));
        }
        RunnerKind::Node => out.extend(home.as_ref().map(|h| h.join(".npm"))),
        RunnerKind::Pytest | RunnerKind::Generic => {}
    }
    out.retain(|p| p.is_absolute() && p.exists());
    out
}
