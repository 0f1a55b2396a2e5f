//! Running a project's real test runner and saying, as a value, how it went.
//!
//! gavel's test-first workflow routes by what the test runner did, never by what a model says:
//! a red gate wants the new tests to fail for the right reason, a green gate wants them to
//! pass. "Failed" is not enough for that: the code may not build, no test may have been
//! collected, the runner may have been interrupted or refused its arguments. So a test command
//! runs through [`run_tests`] (built on [`crate::process::run_test`]: its own process group,
//! the whole group killed on a timeout) and its result is classified by [`classify`], a pure
//! function of the runner's exit code, signal and output, into a [`TestOutcome`].
//!
//! The command is split into words with shell quoting rules and started directly, never
//! through `sh -c`; leading `NAME=value` words are set in its environment. For `cargo test` the
//! test binaries are built first with the same arguments plus `--no-run`, so a compile error is
//! told apart from failing tests; the two steps share the timeout.
//!
//! # How each runner's result is read
//!
//! Checked first, for every runner: a gavel clock stopped it → `timed_out`; killed by SIGINT,
//! or exit 130 → `interrupted`; killed by any other signal (SIGTERM, SIGKILL, SIGSEGV, ...) →
//! `crashed`. Then the rows of the runner are read top to bottom; the first that fits decides.
//!
//! | Runner | Exit | Output | Outcome |
//! |---|---|---|---|
//! | pytest | 0 | | `passed` |
//! | pytest | 1 | | `failed` |
//! | pytest | 2 | `ERROR collecting` / `error during collection`, only missing imports | `missing_import` |
//! | pytest | 2 | `ERROR collecting`, any other error (`SyntaxError`, `NameError`, ...) | `build_failed` |
//! | pytest | 2 | otherwise (Ctrl-C, `pytest.exit()`) | `interrupted` |
//! | pytest | 3 | | `internal_error` |
//! | pytest | 4 | `ImportError while loading conftest` (read like a collection error) | `missing_import` / `build_failed` |
//! | pytest | 4 | otherwise | `usage_error` |
//! | pytest | 5 | | `no_tests` |
//! | pytest | other | | `internal_error` |
//! | cargo test | build step ≠ 0 | `could not compile`, `error[E…]`, `failed to run custom build command` | `build_failed` |
//! | cargo test | build step ≠ 0 | otherwise (bad flag, no `Cargo.toml`, unknown package) | `usage_error` |
//! | cargo test | 0 | no `test result:` line counts a passed or failed test | `no_tests` |
//! | cargo test | 0 | otherwise | `passed` |
//! | cargo test | 101 | `could not compile` (the run step rebuilt and failed) | `build_failed` |
//! | cargo test | 101 | a test binary ended by a signal (`signal: N`) | `crashed` |
//! | cargo test | 101 | `test result: FAILED` or `error: test failed` | `failed` |
//! | cargo test | 1, 101 | otherwise (cargo refused the arguments) | `usage_error` |
//! | cargo nextest | 0 / 4 / 100 / 101 | `Starting 0 tests` at exit 0 → `no_tests` | `passed` / `no_tests` / `failed` / `build_failed` |
//! | cargo nextest | 1, 94–96, 102 | | `usage_error` |
//! | node --test, jest, vitest | 0 | `# tests 0`, `ℹ tests 0`, `No tests found`, `No test files found` | `no_tests` |
//! | node --test, jest, vitest | 0 | otherwise | `passed` |
//! | node --test, jest, vitest | 1 | a file failed to load with a `SyntaxError` (other than a missing export) | `build_failed` |
//! | node --test, jest, vitest | 1 | `Cannot find module 'm'`, `Cannot find package 'm'`, `Failed to resolve import "m"`, `does not provide an export named 'n'` | `missing_import` |
//! | node --test, jest, vitest | 1 | `No tests found`, `No test files found` | `no_tests` |
//! | node --test, jest, vitest | 1 | `Missing script`, `Unrecognized CLI Parameter`, `Unknown option` | `usage_error` |
//! | node --test, jest, vitest | 1 | otherwise | `failed` |
//! | node --test, jest, vitest | 9 | (node: bad option) | `usage_error` |
//! | node --test, jest, vitest | other | | `internal_error` |
//! | go test | 0 | every package `[no test files]` / `[no tests to run]` | `no_tests` |
//! | go test | 0 | otherwise | `passed` |
//! | go test | 1, 2 | `[build failed]`, or `[setup failed]` without a missing package | `build_failed` |
//! | go test | 1, 2 | `[setup failed]` with `no required module provides package P` | `missing_import` |
//! | go test | 1, 2 | `flag provided but not defined`, `flag needs an argument`, `usage: go test`, `invalid regexp` | `usage_error` |
//! | go test | 1, 2 | a `FAIL` line, `--- FAIL`, `panic:` | `failed` |
//! | go test | 1, 2 | otherwise (no package ran: bad path, no module) | `usage_error` |
//! | go test | other | | `internal_error` |
//! | generic | 0 | | `passed` |
//! | generic | other | | `failed` |
//!
//! # Missing imports: a distinct outcome
//!
//! In interpreted languages a test that imports code not written yet does not fail, it fails
//! to load: pytest reports a collection error and exits 2 (as for an interrupt), `node --test`
//! reports the file as failed. That is the usual state of a red gate, but so is a missing
//! third-party package or a typo in an import, which are not "failing for the right reason".
//! So when every load error is a missing module (`ModuleNotFoundError: No module named 'm'`,
//! `Cannot find module 'm'`, Go's `no required module provides package m`) or a missing name
//! in an existing module (`cannot import name 'n' from 'm'`, `does not provide an export
//! named 'n'`), the outcome is [`TestOutcome::MissingImport`] listing what is missing, and the
//! gate decides whether that is the module under test. Any other load error (a `SyntaxError`,
//! a circular import, an exception at import time) means the code does not even load and is
//! [`TestOutcome::BuildFailed`], like a compile error. In compiled languages a missing symbol
//! is a compile error (`cargo`, `go`: `build_failed`, the compiler output is in the report).
//! [`blame`] reads a `build_failed` run error by error: only errors that name something
//! missing (rustc's `cannot find`/`unresolved import` codes, go's `undefined:`) are the code
//! under test not written yet; a syntax or type error in a test file is the tests' own.
//!
//! # Per-test reports and the green verdict
//!
//! The table above reads what a runner says about itself, which code under test can fake
//! (`os._exit(0)` while it is imported makes pytest exit 0 with nothing run). So a workflow
//! runs its gates with [`run_tests_reported`], which has the runner write a machine-readable
//! report outside the worktree (pytest's JUnit XML, libtest's per-test lines, `go test
//! -json`, a node reporter; see `report`) and puts the tests it lists in
//! [`TestReport::tests`]; [`judge_green`] then says whether the green run proves that the
//! tests written before the implementation ran and passed, compared with the red run. The
//! runner's configuration files ([`RunnerKind::config_globs`]) are guarded like its tests.

mod blame;
mod caches;
mod classify;
mod globs;
mod report;
#[cfg(test)]
mod tests;
mod verdict;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::process::{self, ProcessError, ProcessSpec, TestRun};

pub use self::blame::{LoadBlame, LoadError, blame};
pub use self::caches::private_caches;
pub use self::classify::{classify, summarize};
pub use self::globs::{GlobError, TestFiles, is_test_file};
pub use self::report::{
    NoReport, ReportFormat, TestCase, TestList, TestListing, TestStatus, report_format,
};
pub use self::verdict::{GreenProblem, GreenVerdict, judge_green};

/// Which test runner a command starts, which decides how its result is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunnerKind {
    Pytest,
    Cargo,
    Node,
    Go,
    Generic,
}

impl RunnerKind {
    /// The runner a command line starts: `pytest`, `python -m pytest` → pytest; `cargo test`,
    /// `cargo nextest` → cargo; `node --test`, `npm test`, `npx jest`, `jest`, `vitest` → node;
    /// `go test` → go; anything else → generic. Leading `NAME=value` words, `env`, and `uv run`
    /// / `poetry run` / `pdm run` / `pipenv run` in front are looked through.
    #[must_use]
    pub fn detect(command: &str) -> RunnerKind {
        let words = shell_words::split(command)
            .unwrap_or_else(|_| command.split_whitespace().map(str::to_owned).collect());
        let words = program_words(&words);
        let program = |i: usize| words.get(i).map(|w| basename(w));
        let Some(first) = program(0) else {
            return RunnerKind::Generic;
        };
        let rest = &words[1..];
        let has = |word: &str| rest.iter().any(|w| w == word);
        match first {
            "pytest" | "py.test" => RunnerKind::Pytest,
            p if p.starts_with("python") && module_arg(rest) == Some("pytest") => {
                RunnerKind::Pytest
            }
            "cargo" => match subcommand(rest) {
                Some("test" | "nextest" | "t") => RunnerKind::Cargo,
                _ => RunnerKind::Generic,
            },
            "node" if has("--test") => RunnerKind::Node,
            "npm" | "pnpm" | "yarn" => match subcommand(rest) {
                Some("test" | "t" | "tst") => RunnerKind::Node,
                Some("run" | "run-script") if rest.iter().any(|w| w == "test") => RunnerKind::Node,
                Some("jest" | "vitest") => RunnerKind::Node,
                _ => RunnerKind::Generic,
            },
            "npx" | "pnpx" => match subcommand(rest) {
                Some("jest" | "vitest") => RunnerKind::Node,
                _ => RunnerKind::Generic,
            },
            "jest" | "vitest" => RunnerKind::Node,
            "go" if subcommand(rest) == Some("test") => RunnerKind::Go,
            _ => RunnerKind::Generic,
        }
    }

    /// The runner named in gavel.toml's `[implement] runner`.
    #[must_use]
    pub fn parse(name: &str) -> Option<RunnerKind> {
        match name.trim() {
            "pytest" => Some(RunnerKind::Pytest),
            "cargo" => Some(RunnerKind::Cargo),
            "node" => Some(RunnerKind::Node),
            "go" => Some(RunnerKind::Go),
            "generic" => Some(RunnerKind::Generic),
            _ => None,
        }
    }

    /// The name [`RunnerKind::parse`] reads.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            RunnerKind::Pytest => "pytest",
            RunnerKind::Cargo => "cargo",
            RunnerKind::Node => "node",
            RunnerKind::Go => "go",
            RunnerKind::Generic => "generic",
        }
    }
}

/// The words after leading `NAME=value` assignments and wrappers that only start the program.
fn program_words(words: &[String]) -> &[String] {
    let mut words = words;
    loop {
        match words {
            [first, rest @ ..] if env_assignment(first).is_some() => words = rest,
            [first, rest @ ..] if basename(first) == "env" => {
                let options = rest.iter().take_while(|w| w.starts_with('-')).count();
                words = &rest[options..];
            }
            [first, run, rest @ ..]
                if matches!(
                    basename(first),
                    "uv" | "poetry" | "pdm" | "pipenv" | "hatch"
                ) && run == "run" =>
            {
                words = rest;
            }
            _ => return words,
        }
    }
}

/// The first argument that is not an option (nor a `+toolchain`).
fn subcommand(args: &[String]) -> Option<&str> {
    args.iter()
        .map(String::as_str)
        .find(|w| !w.starts_with('-') && !w.starts_with('+'))
}

/// The module of `python -m MODULE`.
fn module_arg(args: &[String]) -> Option<&str> {
    let at = args.iter().position(|w| w == "-m")?;
    args.get(at + 1).map(String::as_str)
}

fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// `NAME=value` as a pair, when `word` is a shell variable assignment.
fn env_assignment(word: &str) -> Option<(&str, &str)> {
    let (name, value) = word.split_once('=')?;
    let mut chars = name.chars();
    let first = chars.next()?;
    let valid = (first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then_some((name, value))
}

/// How a test run ended, as the gates read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum TestOutcome {
    /// Tests ran and all passed.
    Passed,
    /// Tests ran and at least one failed.
    Failed,
    /// The runner found no test to run.
    NoTests,
    /// The code (or the tests) do not compile, or do not load for another reason than a
    /// missing import.
    BuildFailed,
    /// The tests could not load because what they import does not exist (see the module doc):
    /// a gate decides whether that is the code under test.
    MissingImport { missing: Vec<MissingImport> },
    /// The runner was interrupted (SIGINT, pytest's exit 2).
    Interrupted,
    /// The runner itself failed.
    InternalError,
    /// The runner refused its command line (or the project's configuration).
    UsageError,
    /// A gavel clock stopped it (its process group was killed).
    TimedOut,
    /// Killed by a signal it did not get from gavel's clocks (or a test binary was).
    Crashed,
}

/// Something a test imports that does not exist.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct MissingImport {
    /// The module as the runner names it: dotted for Python (`pkg.calc`), the specifier or the
    /// resolved path for Node (`./calc`, `/repo/src/calc.mjs`), the package path for Go.
    pub module: String,
    /// The name missing from a module that exists (`from calc import add` → `add`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// A test command to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestCommand {
    pub kind: RunnerKind,
    /// Shell words (quoting as in `sh`), started directly, never through a shell.
    pub command: String,
    pub cwd: PathBuf,
    /// For the whole run (cargo: the build step and the run together).
    pub timeout: Duration,
    /// Variables set on top of the inherited environment (after the command's own `NAME=value`).
    pub env: Vec<(String, String)>,
    /// Variables removed from the inherited environment first (see
    /// [`crate::sandbox_env::removed_names`]).
    pub env_remove: Vec<String>,
}

/// What a test command did, to journal and to route by.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestReport {
    pub kind: RunnerKind,
    pub outcome: TestOutcome,
    /// cargo: the `--no-run` build step.
    pub build: Option<TestRun>,
    /// The test run (`None` when the build step already decided the outcome).
    pub run: Option<TestRun>,
    /// One line for a person, e.g. "3 passed, 1 failed (pytest, exit 1, 0.4 s)".
    pub summary: String,
    /// The tests the runner's report lists, when one was asked for ([`run_tests_reported`]);
    /// `None` otherwise, and in reports journaled before there were any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests: Option<TestListing>,
}

/// Runs `cmd` (cargo: build step first) and classifies the result, keeping at most `limit`
/// bytes of each step's output. A timeout is an outcome; only a command that cannot be split
/// or started, or a cancellation, is an error.
pub fn run_tests(
    cmd: &TestCommand,
    limit: usize,
    cancelled: &dyn Fn() -> bool,
) -> Result<TestReport, ProcessError> {
    run_tests_with(cmd, limit, cancelled, &mut |_| {})
}

/// [`run_tests`], telling `on_start` each step's process group id as it starts (see
/// [`process::run_test_with`]).
pub fn run_tests_with(
    cmd: &TestCommand,
    limit: usize,
    cancelled: &dyn Fn() -> bool,
    on_start: &mut dyn FnMut(u32),
) -> Result<TestReport, ProcessError> {
    run_tests_confined(cmd, None, limit, cancelled, on_start)
}

/// [`run_tests_with`], each step run through `confine` when given (the tests are untrusted
/// code: a model wrote them, or the code they test).
pub fn run_tests_confined(
    cmd: &TestCommand,
    confine: Option<&crate::confine::Confinement>,
    limit: usize,
    cancelled: &dyn Fn() -> bool,
    on_start: &mut dyn FnMut(u32),
) -> Result<TestReport, ProcessError> {
    run(cmd, None, confine, limit, cancelled, on_start)
}

/// [`run_tests_confined`], the command changed to write a machine-readable report in
/// `report_dir` (a folder outside the worktree that the box may write, e.g. the run's private
/// temporary folder; created if missing, its earlier report removed) and the tests it lists
/// put in [`TestReport::tests`] for [`judge_green`]. A command that cannot write one (see
/// [`report_format`]) runs unchanged, with the reason in an [`TestListing::Unread`].
pub fn run_tests_reported(
    cmd: &TestCommand,
    report_dir: &Path,
    confine: Option<&crate::confine::Confinement>,
    limit: usize,
    cancelled: &dyn Fn() -> bool,
    on_start: &mut dyn FnMut(u32),
) -> Result<TestReport, ProcessError> {
    run(cmd, Some(report_dir), confine, limit, cancelled, on_start)
}

fn run(
    cmd: &TestCommand,
    report_dir: Option<&Path>,
    confine: Option<&crate::confine::Confinement>,
    limit: usize,
    cancelled: &dyn Fn() -> bool,
    on_start: &mut dyn FnMut(u32),
) -> Result<TestReport, ProcessError> {
    let words = shell_words::split(&cmd.command).map_err(|e| bad_command(cmd, &e.to_string()))?;
    let mut env: Vec<(String, String)> = Vec::new();
    let mut words = words.as_slice();
    while let [first, rest @ ..] = words {
        let Some((name, value)) = env_assignment(first) else {
            break;
        };
        env.push((name.to_owned(), value.to_owned()));
        words = rest;
    }
    let [program, args @ ..] = words else {
        return Err(bad_command(cmd, "there is no program to run"));
    };
    // The report: how the run step's arguments change, or why there is none.
    let plan = report_dir.map(|dir| {
        report::plan_args(cmd.kind, words, dir).and_then(|plan| {
            plan.prepare(dir)
                .map(|()| plan)
                .map_err(|e| format!("cannot prepare the report folder {}: {e}", dir.display()))
        })
    });
    let unread = |reason: &str| TestListing::Unread {
        reason: reason.to_owned(),
    };
    env.extend(cmd.env.iter().cloned());
    let spec = |args: Vec<String>, timeout: Duration| {
        let spec = ProcessSpec {
            program: program.into(),
            args,
            env: env.clone(),
            env_remove: cmd.env_remove.clone(),
            cwd: Some(cmd.cwd.clone()),
            stdin: String::new(),
            // Tests may be silent for long: only the total clock counts.
            idle_timeout: timeout.saturating_add(Duration::from_secs(1)),
            total_timeout: timeout,
        };
        match confine {
            Some(c) => c.wrap(&spec),
            None => spec,
        }
    };
    let mut build = None;
    let mut timeout = cmd.timeout;
    if let Some(build_args) = cargo_build_args(cmd.kind, program, args) {
        let step = process::run_test_with(&spec(build_args, timeout), limit, cancelled, on_start)?;
        refused_by_the_box(confine.is_some(), &step, &cmd.command)?;
        if !step.passed() {
            let outcome = classify(cmd.kind, &step);
            let summary = summarize(cmd.kind, &outcome, Some(&step), None);
            return Ok(TestReport {
                kind: cmd.kind,
                outcome,
                build: Some(step),
                run: None,
                summary,
                tests: plan.map(|_| unread("the tests did not build, so none ran")),
            });
        }
        timeout = timeout.saturating_sub(step.duration);
        build = Some(step);
    }
    let run_args = match &plan {
        Some(Ok(plan)) => plan.args.clone(),
        _ => args.to_vec(),
    };
    let mut run = process::run_test_with(&spec(run_args, timeout), limit, cancelled, on_start)?;
    refused_by_the_box(confine.is_some(), &run, &cmd.command)?;
    let tests = plan.map(|plan| match plan {
        Ok(plan) => plan.read(&mut run, &cmd.cwd),
        Err(reason) => unread(&reason),
    });
    let outcome = classify(cmd.kind, &run);
    let summary = summarize(cmd.kind, &outcome, build.as_ref(), Some(&run));
    Ok(TestReport {
        kind: cmd.kind,
        outcome,
        build,
        run: Some(run),
        summary,
        tests,
    })
}

/// The launcher's own refusal (exit 126 with its `gavel confine:` line) is not a failing test:
/// the command never ran, and reading it as red would let a box that cannot be built pass the
/// red gate. It is an error naming the launcher's reason.
fn refused_by_the_box(
    boxed: bool,
    run: &crate::process::TestRun,
    command: &str,
) -> Result<(), ProcessError> {
    if !boxed || run.exit_code != Some(i32::from(crate::confine::EXIT_REFUSED)) {
        return Ok(());
    }
    match run
        .output
        .lines()
        .find_map(|l| l.strip_prefix("gavel confine: "))
    {
        Some(reason) => Err(ProcessError::Spawn {
            program: command.to_owned(),
            source: std::io::Error::other(format!("the box refused to run it: {reason}")),
        }),
        None => Ok(()),
    }
}

fn bad_command(cmd: &TestCommand, why: &str) -> ProcessError {
    ProcessError::Spawn {
        program: cmd.command.clone(),
        source: std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("not a test command: {why}"),
        ),
    }
}

/// The arguments of the `--no-run` build step, when `program args` is `cargo test`: the same
/// arguments with `--no-run` before any `--`. (nextest says "build failed" by its exit code.)
fn cargo_build_args(kind: RunnerKind, program: &str, args: &[String]) -> Option<Vec<String>> {
    if kind != RunnerKind::Cargo || basename(program) != "cargo" {
        return None;
    }
    if !matches!(subcommand(args), Some("test" | "t")) || args.iter().any(|a| a == "--no-run") {
        return None;
    }
    let mut build = args.to_vec();
    let at = build.iter().position(|a| a == "--").unwrap_or(build.len());
    build.insert(at, "--no-run".to_owned());
    Some(build)
}
