//! Which files are tests, as gitignore-style globs: each runner's conventional test files
//! ([`RunnerKind::test_globs`]) and the runner's configuration ([`RunnerKind::config_globs`]),
//! which decides what a test run means and so is guarded like the tests.
//!
//! A workflow lets the step that writes the tests write these files and refuses them to the
//! step that writes the implementation: code that may not edit its tests may not edit what
//! runs them either. `pytest.ini` with `addopts = --collect-only`, a `conftest.py` hook that
//! rewrites outcomes, or a `.cargo/config.toml` whose `runner` is `true` would each turn a
//! failing suite green without touching a test file.
//!
//! Some files are counted whole although only part of them configures the runner, because a
//! path glob cannot guard a section: `pyproject.toml` (`[tool.pytest.ini_options]`),
//! `Cargo.toml` (`[[test]]`, `harness = false`, `[profile.test]`), `package.json` (`scripts`,
//! `jest`), `go.mod` (`replace` can swap an assertion library for one that never fails). The
//! price is that the implementation step cannot add a dependency; the step that writes the
//! tests, or a person, can.

use super::RunnerKind;

impl RunnerKind {
    /// Where this runner's tests live by convention, as gitignore-style globs (a pattern
    /// without `/` matches at any depth, `dir/` matches a folder anywhere and everything in it,
    /// `{a,b}` is an alternation). Benchmarks (`benches/`) are not tests.
    #[must_use]
    pub fn test_globs(self) -> &'static [&'static str] {
        match self {
            RunnerKind::Pytest => &["test_*.py", "*_test.py", "conftest.py", "tests/"],
            RunnerKind::Cargo => &["tests/", "tests.rs", "*_test.rs", "*_tests.rs"],
            RunnerKind::Node => &[
                "*.test.{js,mjs,cjs,ts,mts,cts,jsx,tsx}",
                "*.spec.{js,mjs,cjs,ts,mts,cts,jsx,tsx}",
                "test/",
                "tests/",
                "__tests__/",
            ],
            RunnerKind::Go => &["*_test.go", "testdata/"],
            RunnerKind::Generic => &["tests/", "test/"],
        }
    }

    /// The runner's configuration and the files that can change what its run reports, as
    /// globs like [`RunnerKind::test_globs`] (see the module doc). A workflow adds them to the
    /// test globs of its guard. The generic runner has none: gavel does not know what it
    /// reads.
    ///
    /// - pytest: `pytest.ini`, `.pytest.ini`, `pytest.toml`, `.pytest.toml`, `conftest.py`,
    ///   `pyproject.toml`, `setup.cfg`, `tox.ini`, and `sitecustomize.py` /
    ///   `usercustomize.py` (imported by every Python that has them on its path);
    /// - cargo: `Cargo.toml` (every one, workspace members too), `.cargo/` (`config.toml`,
    ///   `config`: `runner`, `rustflags`, aliases), `rust-toolchain.toml`, `rust-toolchain`;
    /// - node: `package.json`, `.npmrc` (`node-options` can preload code),
    ///   `jest.config.*`, `vitest.config.*`, `vitest.workspace.*`, `vite.config.*` (vitest
    ///   reads it), `babel.config.*`, `.babelrc`, `.babelrc.*` (jest transforms tests with it);
    /// - go: `go.mod`, `go.work` and `vendor/` (a vendored assertion library is code the tests
    ///   trust).
    #[must_use]
    pub fn config_globs(self) -> &'static [&'static str] {
        match self {
            RunnerKind::Pytest => &[
                "pytest.ini",
                ".pytest.ini",
                "pytest.toml",
                ".pytest.toml",
                "conftest.py",
                "pyproject.toml",
                "setup.cfg",
                "tox.ini",
                "sitecustomize.py",
                "usercustomize.py",
            ],
            RunnerKind::Cargo => &[
                "Cargo.toml",
                ".cargo/",
                "rust-toolchain.toml",
                "rust-toolchain",
            ],
            RunnerKind::Node => &[
                "package.json",
                ".npmrc",
                "jest.config.*",
                "vitest.config.*",
                "vitest.workspace.*",
                "vite.config.*",
                "babel.config.*",
                ".babelrc",
                ".babelrc.*",
            ],
            RunnerKind::Go => &["go.mod", "go.work", "vendor/"],
            RunnerKind::Generic => &[],
        }
    }
}

/// Compiled test-file globs, in gitignore syntax: `!glob` excludes what it matches (the file,
/// or else its nearest folder a glob matches, decides; among globs matching the same path the
/// last one wins).
#[derive(Debug, Clone)]
pub struct TestFiles {
    matcher: ignore::gitignore::Gitignore,
}

/// A glob that is not valid gitignore syntax.
#[derive(Debug, thiserror::Error)]
#[error("invalid test-file glob `{glob}`: {source}")]
pub struct GlobError {
    pub glob: String,
    #[source]
    pub source: ignore::Error,
}

impl TestFiles {
    /// Compiles `globs`.
    pub fn new(globs: &[String]) -> Result<Self, GlobError> {
        let mut builder = ignore::gitignore::GitignoreBuilder::new(".");
        for glob in globs {
            builder.add_line(None, glob).map_err(|source| GlobError {
                glob: glob.clone(),
                source,
            })?;
        }
        let matcher = builder.build().map_err(|source| GlobError {
            glob: globs.join(", "),
            source,
        })?;
        Ok(Self { matcher })
    }

    /// Whether the repository-relative `path` ('/' separators) is a test file.
    #[must_use]
    pub fn matches(&self, path: &str) -> bool {
        let mut path = path.trim_start_matches('/');
        while let Some(rest) = path.strip_prefix("./") {
            path = rest.trim_start_matches('/');
        }
        if path.is_empty() {
            return false;
        }
        self.matcher
            .matched_path_or_any_parents(path, false)
            .is_ignore()
    }
}

/// Whether the repository-relative `path` ('/' separators) matches the test-file `globs`. An
/// invalid glob matches nothing: check configured globs with [`TestFiles::new`] when loading
/// them, and match many paths with one compiled [`TestFiles`].
#[must_use]
pub fn is_test_file(path: &str, globs: &[String]) -> bool {
    let valid: Vec<String> = globs
        .iter()
        .filter(|g| TestFiles::new(std::slice::from_ref(g)).is_ok())
        .cloned()
        .collect();
    TestFiles::new(&valid).is_ok_and(|files| files.matches(path))
}
