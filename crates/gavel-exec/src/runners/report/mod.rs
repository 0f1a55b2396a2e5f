//! Per-test results read from a runner's machine-readable report, so that green means "these
//! tests ran and passed", not only "the runner exited 0".
//!
//! An exit code is easy to fake from inside a test run: `os._exit(0)` while the code under
//! test is imported, a `pytest.ini` with `addopts = --collect-only`, `process.exit(0)` in a
//! node test file, `os.Exit(0)` in a Go `TestMain`. So when a caller asks for a report
//! ([`super::run_tests_reported`], with a folder outside the worktree), the test command is
//! changed to write one, and the run's [`super::TestReport`] carries the list of tests it read
//! ([`TestListing`]), which [`super::judge_green`] compares with the red run's:
//!
//! | Runner | What gavel adds | Where the report is read |
//! |---|---|---|
//! | pytest | `--junitxml=DIR/junit.xml -o junit_family=xunit1` (xunit1 names each test's file) | the JUnit XML file |
//! | cargo test | `--quiet` dropped (cargo then names each test binary), `-- --format=pretty` | the `test NAME ... ok` lines of the output |
//! | node --test | a reporter module of gavel's (`DIR/gavel-reporter.mjs`, JSON lines with each test's file) beside `tap` on stdout | `DIR/node-tests.jsonl` |
//! | go test | `-json` | the JSON events of the output (the text shown is rebuilt from them) |
//!
//! stable libtest has no machine-readable format (`--format json` needs `-Z unstable-options`,
//! i.e. nightly), so cargo's list is read from libtest's own per-test lines, checked against
//! the `running N tests` line and the `test result:` summary of each binary. `npm test`, jest,
//! vitest, `cargo nextest` and the generic runner get no report ([`report_format`] says why);
//! node's built-in `junit` reporter was not used because node 20's does not name files.
//!
//! A report cannot be more trustworthy than the process that writes it: pytest writes its
//! XML in the process that imports the code under test, and a test binary prints its own
//! results. Code that forges the report on purpose (writes the XML, prints `test x ... ok`)
//! is out of a runner's reach; what this proves is that each test the report names ran to a
//! verdict, which an early exit, a collect-only run or a skipped or deselected test cannot
//! fake. The file is removed before the run, must be a regular file afterwards, and is read
//! with a size cap.

mod cargo;
mod go;
mod junit;
mod node;
#[cfg(test)]
mod tests;

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{RunnerKind, basename, subcommand};
use crate::process::TestRun;

/// The largest report file read (a JUnit file of a large suite is a few MiB).
const REPORT_CAP: u64 = 64 << 20;

/// Which report a run's test list was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReportFormat {
    /// pytest's `--junitxml` file, `junit_family=xunit1`.
    PytestJunit,
    /// libtest's `test NAME ... ok` lines, per test binary, from cargo's output.
    LibtestLines,
    /// `go test -json` events.
    GoJson,
    /// gavel's `node --test` reporter: one JSON line per test event.
    NodeEvents,
}

/// How one test ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestStatus {
    Passed,
    /// Skipped, ignored, `todo`, or an expected failure (pytest's `xfail`).
    Skipped,
    /// An assertion or the test body failed.
    Failed,
    /// Something around the test failed (a pytest fixture, setup or teardown).
    Error,
}

/// One test the report names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestCase {
    /// Stable from one run to the next: pytest `file::Class::name[param]`, cargo
    /// `root::module::name [binary]`, node `file::suite > name`, go `package::TestName/sub`.
    pub id: String,
    /// The files the test may be declared in, relative to the command's folder as the runner
    /// names them: its file (pytest, node, go: the `_test.go` file declaring the top-level
    /// test); for cargo, the crate root of its binary and the module files its path names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    pub status: TestStatus,
}

/// The tests a report lists, and what kept others from being listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestList {
    pub format: ReportFormat,
    pub cases: Vec<TestCase>,
    /// Files, binaries or packages whose tests cannot all be listed: a pytest collection
    /// error, a go package that did not build, a node test file that failed to load or whose
    /// process ended before its tests did, a test binary that stopped before its summary.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub load_errors: Vec<String>,
}

/// The per-test results of a run that was asked for a report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "report")]
pub enum TestListing {
    /// The report was read.
    Read(TestList),
    /// There is no report to read, or it does not parse: a green cannot rest on it.
    Unread { reason: String },
}

impl TestListing {
    /// The list, when the report was read.
    #[must_use]
    pub fn list(&self) -> Option<&TestList> {
        match self {
            TestListing::Read(list) => Some(list),
            TestListing::Unread { .. } => None,
        }
    }
}

/// Why a test command gets no machine-readable report.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no per-test report for `{command}`: {why}")]
pub struct NoReport {
    pub command: String,
    pub why: String,
}

/// The report `command` (run by `kind`) can be asked for, or why it cannot: only
/// `pytest`, `cargo test`, `node --test` and `go test` (started directly, or through `env`,
/// `uv run`, ...) are changed to write one.
pub fn report_format(kind: RunnerKind, command: &str) -> Result<ReportFormat, NoReport> {
    let no = |why: &str| NoReport {
        command: command.to_owned(),
        why: why.to_owned(),
    };
    let words = shell_words::split(command).map_err(|e| no(&e.to_string()))?;
    let start = words
        .iter()
        .take_while(|w| super::env_assignment(w).is_some())
        .count();
    plan_args(kind, &words[start..], Path::new("/report"))
        .map(|plan| plan.format)
        .map_err(|why| no(&why))
}

/// How a run is changed to write its report, and where the report is read.
#[derive(Debug, Clone)]
pub(super) struct ReportPlan {
    pub format: ReportFormat,
    /// The run step's arguments (the build step keeps the command's own).
    pub args: Vec<String>,
    /// The report file, for runners that write one.
    file: Option<PathBuf>,
    /// node: gavel's reporter module, written before the run.
    reporter: Option<PathBuf>,
}

/// The plan for `words` (the program, then its arguments) writing its report in `dir`.
pub(super) fn plan_args(
    kind: RunnerKind,
    words: &[String],
    dir: &Path,
) -> Result<ReportPlan, String> {
    let inner = super::program_words(words);
    let wrappers = &words[..words.len() - inner.len()];
    let [program, args @ ..] = inner else {
        return Err("there is no program to run".to_owned());
    };
    let path = |name: &str| dir.join(name).to_string_lossy().into_owned();
    let (format, args, file, reporter) = match (kind, basename(program)) {
        (RunnerKind::Pytest, p)
            if matches!(p, "pytest" | "py.test")
                || (p.starts_with("python") && super::module_arg(args) == Some("pytest")) =>
        {
            let mut args = args.to_vec();
            args.extend([
                format!("--junitxml={}", path(junit::FILE)),
                "-o".to_owned(),
                "junit_family=xunit1".to_owned(),
            ]);
            (ReportFormat::PytestJunit, args, Some(junit::FILE), None)
        }
        (RunnerKind::Cargo, "cargo") if matches!(subcommand(args), Some("test" | "t")) => (
            ReportFormat::LibtestLines,
            cargo::run_args(args)?,
            None,
            None,
        ),
        (RunnerKind::Node, "node" | "nodejs") if args.iter().any(|a| a == "--test") => {
            let args = node::run_args(args, &path(node::REPORTER), &path(node::FILE))?;
            let (file, reporter) = (Some(node::FILE), Some(node::REPORTER));
            (ReportFormat::NodeEvents, args, file, reporter)
        }
        (RunnerKind::Go, "go") if subcommand(args) == Some("test") => {
            let mut args = args.to_vec();
            if !args.iter().any(|a| a == "-json" || a == "--json") {
                let at = args.iter().position(|a| a == "test").map_or(0, |i| i + 1);
                args.insert(at, "-json".to_owned());
            }
            (ReportFormat::GoJson, args, None, None)
        }
        (RunnerKind::Pytest, _) => {
            return Err(
                "only `pytest` and `python -m pytest` are changed to write a report".to_owned(),
            );
        }
        (RunnerKind::Node, _) => {
            return Err("only `node --test` is changed to write a report (npm scripts, jest and vitest are not)".to_owned());
        }
        (RunnerKind::Cargo, _) => {
            return Err("only `cargo test` is read per test (not nextest)".to_owned());
        }
        (RunnerKind::Go, _) => return Err("only `go test` is read per test".to_owned()),
        (RunnerKind::Generic, _) => {
            return Err("the generic runner has no report gavel reads".to_owned());
        }
    };
    let args = wrappers
        .iter()
        .skip(1)
        .chain(if wrappers.is_empty() {
            None
        } else {
            Some(program)
        })
        .cloned()
        .chain(args)
        .collect();
    Ok(ReportPlan {
        format,
        args,
        file: file.map(|f| dir.join(f)),
        reporter: reporter.map(|r| dir.join(r)),
    })
}

impl ReportPlan {
    /// Before the run: the folder exists, no report of an earlier run is left in it, and
    /// node's reporter module is in place.
    pub fn prepare(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        for file in self.file.iter().chain(&self.reporter) {
            match std::fs::remove_file(file) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        if let Some(reporter) = &self.reporter {
            std::fs::write(reporter, node::REPORTER_SOURCE)?;
        }
        Ok(())
    }

    /// After the run: the tests it lists. For go the run's output, JSON events, is replaced
    /// by the text they carry, which is what [`super::classify`] and a person read.
    pub fn read(&self, run: &mut TestRun, cwd: &Path) -> TestListing {
        let listing = match self.format {
            ReportFormat::GoJson => {
                let (list, text) = go::parse(&run.output, cwd);
                run.output = text;
                uncut(run).map(|()| list)
            }
            ReportFormat::LibtestLines => uncut(run).map(|()| cargo::parse(&run.output)),
            ReportFormat::PytestJunit => self.file_text().and_then(|xml| junit::parse(&xml)),
            ReportFormat::NodeEvents => self.file_text().map(|text| node::parse(&text, cwd)),
        };
        match listing {
            Ok(list) => TestListing::Read(list),
            Err(reason) => TestListing::Unread { reason },
        }
    }

    /// The report file's text: a regular file (never followed through a symlink), at most
    /// [`REPORT_CAP`] bytes, UTF-8.
    fn file_text(&self) -> Result<String, String> {
        let Some(path) = &self.file else {
            return Err("this runner writes no report file".to_owned());
        };
        let shown = path.display();
        let meta = std::fs::symlink_metadata(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => format!(
                "the runner wrote no report ({shown}): it ended before writing it, or was told not to"
            ),
            _ => format!("cannot read the report {shown}: {e}"),
        })?;
        if !meta.file_type().is_file() {
            return Err(format!("the report {shown} is not a regular file"));
        }
        let file = std::fs::File::open(path).map_err(|e| format!("cannot open {shown}: {e}"))?;
        match file.metadata() {
            Ok(m) if m.is_file() => {}
            _ => return Err(format!("the report {shown} is not a regular file")),
        }
        let mut bytes = Vec::new();
        file.take(REPORT_CAP + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("cannot read {shown}: {e}"))?;
        if bytes.len() as u64 > REPORT_CAP {
            return Err(format!(
                "the report {shown} is over {} MiB",
                REPORT_CAP >> 20
            ));
        }
        String::from_utf8(bytes).map_err(|_| format!("the report {shown} is not UTF-8"))
    }
}

/// Reports read from the output need all of it.
fn uncut(run: &TestRun) -> Result<(), String> {
    if run.output_omitted > 0 {
        Err(format!(
            "{} bytes of the output were dropped to keep it under the cap, and the per-test results are read from it: raise the output limit",
            run.output_omitted
        ))
    } else {
        Ok(())
    }
}

/// Text from a subprocess kept in a value a person may see: control characters dropped.
fn clean(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).collect()
}

/// `path` relative to `cwd` when it is beneath it (as given or canonical), `file://` dropped.
fn relative(path: &str, cwd: &Path) -> String {
    let path = path.strip_prefix("file://").unwrap_or(path);
    let canonical = cwd.canonicalize().ok();
    for base in std::iter::once(cwd).chain(canonical.as_deref()) {
        if let Ok(rest) = Path::new(path).strip_prefix(base) {
            return clean(&rest.to_string_lossy());
        }
    }
    clean(path)
}

/// Keeps one case per id, the worst status (a forged or repeated "passed" never hides a
/// failure), in first-seen order.
fn dedup(cases: Vec<TestCase>) -> Vec<TestCase> {
    let mut out: Vec<TestCase> = Vec::with_capacity(cases.len());
    let mut at = std::collections::HashMap::new();
    for case in cases {
        match at.get(&case.id) {
            Some(&i) => {
                let kept: &mut TestCase = &mut out[i];
                kept.status = kept.status.max(case.status);
            }
            None => {
                at.insert(case.id.clone(), out.len());
                out.push(case);
            }
        }
    }
    out
}
