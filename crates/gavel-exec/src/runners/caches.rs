//! Where a boxed test run's tool chain keeps its caches: never where the next build reads.
//!
//! A test a model wrote must not poison the person's next build, so the shared caches of the
//! tool chains (cargo's registry and git checkouts under `CARGO_HOME`, Go's module cache, npm's
//! cache) are read-only to it: the box grants no write there. What a tool chain must write
//! while it builds and tests goes to caches private to the run, in the run's own temporary
//! folder ([`private_caches`]): Go's build cache, npm's cache and logs. cargo builds into the
//! worktree's `target/` (`CARGO_TARGET_DIR` is not on the box's allowlist), and needs the
//! registry only to read dependencies the person has already fetched (`cargo fetch`).

use std::path::Path;

use super::RunnerKind;

/// The variables that move a runner's writable caches into `tmp` (the run's private
/// temporary folder): `GOCACHE` for Go, `npm_config_cache` for node. Set them on the boxed
/// command; the shared caches stay read-only.
pub fn private_caches(kind: RunnerKind, tmp: &Path) -> Vec<(String, String)> {
    let at = |rel: &str| tmp.join(rel).to_string_lossy().into_owned();
    match kind {
        RunnerKind::Go => vec![("GOCACHE".to_owned(), at("go-build"))],
        RunnerKind::Node => vec![("npm_config_cache".to_owned(), at("npm"))],
        RunnerKind::Cargo | RunnerKind::Pytest | RunnerKind::Generic => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writable_caches_go_to_the_runs_own_folder() {
        let tmp = Path::new("/r/.wt.tmp");
        assert_eq!(
            private_caches(RunnerKind::Go, tmp),
            [("GOCACHE".to_owned(), "/r/.wt.tmp/go-build".to_owned())]
        );
        assert_eq!(
            private_caches(RunnerKind::Node, tmp),
            [("npm_config_cache".to_owned(), "/r/.wt.tmp/npm".to_owned())]
        );
        assert!(private_caches(RunnerKind::Cargo, tmp).is_empty());
    }
}
