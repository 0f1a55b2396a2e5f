//! Reading a test runner's exit code, signal and output as a [`TestOutcome`], and as one line
//! for a person. Pure functions over a recorded [`TestRun`], so every row of the table in the
//! parent module is unit-tested on real runners' outputs.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

use super::{MissingImport, RunnerKind, TestOutcome};
use crate::process::TestRun;

const SIGINT: i32 = 2;

/// The outcome of `run` by `kind`'s rules (the table in the module doc).
#[must_use]
pub fn classify(kind: RunnerKind, run: &TestRun) -> TestOutcome {
    if run.timed_out.is_some() {
        return TestOutcome::TimedOut;
    }
    match (run.signal, run.exit_code) {
        (Some(SIGINT), _) | (None, Some(130)) => TestOutcome::Interrupted,
        (Some(_), _) => TestOutcome::Crashed,
        (None, None) => TestOutcome::InternalError,
        (None, Some(code)) => {
            let out = run.output.as_str();
            match kind {
                RunnerKind::Pytest => pytest(code, out),
                RunnerKind::Cargo => cargo(code, out),
                RunnerKind::Node => node(code, out),
                RunnerKind::Go => go(code, out),
                RunnerKind::Generic if code == 0 => TestOutcome::Passed,
                RunnerKind::Generic => TestOutcome::Failed,
            }
        }
    }
}

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|e| panic!("a valid built-in pattern {pattern}: {e}"))
}

fn pytest(code: i32, out: &str) -> TestOutcome {
    match code {
        0 => TestOutcome::Passed,
        1 => TestOutcome::Failed,
        2 if out.contains("ERROR collecting")
            || out.contains("during collection")
            || out.contains("ImportError while importing test module") =>
        {
            python_load_errors(out)
        }
        2 => TestOutcome::Interrupted,
        3 => TestOutcome::InternalError,
        4 if out.contains("ImportError while loading conftest") => python_load_errors(out),
        4 => TestOutcome::UsageError,
        5 => TestOutcome::NoTests,
        _ => TestOutcome::InternalError,
    }
}

/// `missing_import` when every exception pytest reports while loading is a missing module or
/// name, `build_failed` otherwise.
fn python_load_errors(out: &str) -> TestOutcome {
    static EXCEPTION: LazyLock<Regex> = LazyLock::new(|| {
        re(r"(?m)^(?:E\s+|ERROR \S.* - )([A-Za-z_][\w.]*(?:Error|Exception|Exit)): (.*?)\s*$")
    });
    static NO_MODULE: LazyLock<Regex> = LazyLock::new(|| re(r"^No module named '([\w.]+)'$"));
    static NO_NAME: LazyLock<Regex> =
        LazyLock::new(|| re(r"^cannot import name '(\w+)' from '([\w.]+)' \("));
    let mut missing = BTreeSet::new();
    for caps in EXCEPTION.captures_iter(out) {
        let message = &caps[2];
        let found = match &caps[1] {
            "ModuleNotFoundError" | "ImportError" => {
                if let Some(m) = NO_MODULE.captures(message) {
                    Some(MissingImport {
                        module: m[1].to_owned(),
                        name: None,
                    })
                } else {
                    NO_NAME.captures(message).map(|m| MissingImport {
                        module: m[2].to_owned(),
                        name: Some(m[1].to_owned()),
                    })
                }
            }
            _ => None,
        };
        match found {
            Some(m) => {
                missing.insert(m);
            }
            None => return TestOutcome::BuildFailed,
        }
    }
    if missing.is_empty() {
        TestOutcome::BuildFailed
    } else {
        sorted_missing(missing)
    }
}

fn sorted_missing(missing: BTreeSet<MissingImport>) -> TestOutcome {
    TestOutcome::MissingImport {
        missing: missing.into_iter().collect(),
    }
}

fn compile_error(out: &str) -> bool {
    out.contains("could not compile")
        || out.contains("error[E")
        || out.contains("failed to run custom build command")
}

fn cargo(code: i32, out: &str) -> TestOutcome {
    static SIGNALLED: LazyLock<Regex> =
        LazyLock::new(|| re(r"process didn't exit successfully: .*\(signal: \d+"));
    let nextest = out.contains("Starting ") && out.contains("Summary [");
    match code {
        0 if out.contains("Starting 0 tests") => TestOutcome::NoTests,
        0 if nextest => TestOutcome::Passed,
        0 => match cargo_counts(out) {
            Some((passed, failed, _)) if passed + failed > 0 => TestOutcome::Passed,
            _ => TestOutcome::NoTests,
        },
        4 => TestOutcome::NoTests,
        100 => TestOutcome::Failed,
        101 if compile_error(out) => TestOutcome::BuildFailed,
        101 if SIGNALLED.is_match(out) => TestOutcome::Crashed,
        101 if out.contains("test result: FAILED") || out.contains("error: test failed") => {
            TestOutcome::Failed
        }
        1 | 94..=96 | 101 | 102 => TestOutcome::UsageError,
        _ => TestOutcome::InternalError,
    }
}

/// Passed, failed and ignored tests over every `test result:` line, if there is one.
fn cargo_counts(out: &str) -> Option<(u64, u64, u64)> {
    static RESULT: LazyLock<Regex> =
        LazyLock::new(|| re(r"test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored"));
    let mut total = None;
    for caps in RESULT.captures_iter(out) {
        let n = |i: usize| caps[i].parse::<u64>().unwrap_or(0);
        let (p, f, i) = total.unwrap_or((0, 0, 0));
        total = Some((p + n(1), f + n(2), i + n(3)));
    }
    total
}

fn node(code: i32, out: &str) -> TestOutcome {
    static ZERO: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^(?:# |ℹ )tests 0\s*$"));
    let no_tests = out.contains("No tests found") || out.contains("No test files found");
    match code {
        0 if no_tests || ZERO.is_match(out) => TestOutcome::NoTests,
        0 => TestOutcome::Passed,
        1 => {
            if node_syntax_error(out) {
                return TestOutcome::BuildFailed;
            }
            let missing = node_missing(out);
            if !missing.is_empty() {
                sorted_missing(missing)
            } else if no_tests {
                TestOutcome::NoTests
            } else if out.contains("Missing script")
                || out.contains("Unrecognized CLI Parameter")
                || out.contains("Unknown option")
            {
                TestOutcome::UsageError
            } else {
                TestOutcome::Failed
            }
        }
        9 => TestOutcome::UsageError,
        _ => TestOutcome::InternalError,
    }
}

/// A `SyntaxError` while loading a file (not one a test threw: node's TAP reporter puts those
/// in the test's YAML block, jest under the test's name), other than a missing export.
fn node_syntax_error(out: &str) -> bool {
    static LOAD: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^(?:# )?SyntaxError: (.*)$"));
    let tap_or_plain = LOAD
        .captures_iter(out)
        .any(|c| !c[1].contains("does not provide an export named"));
    let jest = out.contains("Test suite failed to run")
        && (out.contains("Jest encountered an unexpected token")
            || out
                .lines()
                .any(|l| l.trim_start().starts_with("SyntaxError: ")));
    tap_or_plain || jest
}

fn node_missing(out: &str) -> BTreeSet<MissingImport> {
    static MODULE: LazyLock<Regex> = LazyLock::new(|| {
        re(concat!(
            r"Cannot find (?:module|package) '([^'\n]+)'(?: imported from| from|\s*$)",
            r#"|Failed to resolve import "([^"\n]+)""#,
        ))
    });
    static EXPORT: LazyLock<Regex> = LazyLock::new(|| {
        re(r"The requested module '([^'\n]+)' does not provide an export named '([^'\n]+)'")
    });
    let mut missing = BTreeSet::new();
    for line in out.lines() {
        if let Some(m) = MODULE
            .captures(line)
            .and_then(|c| c.get(1).or_else(|| c.get(2)))
        {
            missing.insert(MissingImport {
                module: clean(m.as_str()),
                name: None,
            });
        }
        if let Some(c) = EXPORT.captures(line) {
            missing.insert(MissingImport {
                module: clean(&c[1]),
                name: Some(clean(&c[2])),
            });
        }
    }
    missing
}

/// Text from a subprocess kept in a value a person may see: control characters dropped.
fn clean(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).collect()
}

fn go(code: i32, out: &str) -> TestOutcome {
    static PACKAGE: LazyLock<Regex> = LazyLock::new(|| {
        re(concat!(
            r"no required module provides package ([^\s;]+)",
            r"|package ([^\s;]+) is not in (?:GOROOT|std)",
            r#"|cannot find package "([^"\n]+)""#,
        ))
    });
    match code {
        0 => {
            let ran = out.lines().any(|l| {
                (l.starts_with("ok ") || l.starts_with("ok\t")) && !l.contains("[no tests to run]")
            });
            let none = out.contains("[no test files]")
                || out.contains("[no tests to run]")
                || out.contains("no packages to test");
            if none && !ran {
                TestOutcome::NoTests
            } else {
                TestOutcome::Passed
            }
        }
        1 | 2 => {
            if out.contains("[build failed]") {
                return TestOutcome::BuildFailed;
            }
            if out.contains("[setup failed]") {
                let missing: BTreeSet<MissingImport> = PACKAGE
                    .captures_iter(out)
                    .filter_map(|c| c.get(1).or(c.get(2)).or(c.get(3)))
                    .map(|m| MissingImport {
                        module: clean(m.as_str()),
                        name: None,
                    })
                    .collect();
                return if missing.is_empty() {
                    TestOutcome::BuildFailed
                } else {
                    sorted_missing(missing)
                };
            }
            let usage = [
                "flag provided but not defined",
                "flag needs an argument",
                "usage: go test",
                "invalid regexp",
            ];
            if usage.iter().any(|u| out.contains(u)) {
                return TestOutcome::UsageError;
            }
            let failed = out
                .lines()
                .any(|l| l == "FAIL" || l.starts_with("FAIL\t") || l.starts_with("--- FAIL"))
                || out.contains("panic:");
            if failed {
                TestOutcome::Failed
            } else {
                TestOutcome::UsageError
            }
        }
        _ => TestOutcome::InternalError,
    }
}

/// One line for a person: the counts the runner printed (or what happened), then the runner,
/// how it ended and how long it took, e.g. "1 failed, 1 passed (pytest, exit 1, 0.4 s)".
#[must_use]
pub fn summarize(
    kind: RunnerKind,
    outcome: &TestOutcome,
    build: Option<&TestRun>,
    run: Option<&TestRun>,
) -> String {
    let last = run.or(build);
    let counts = run.and_then(|r| counts(kind, &r.output));
    let what = match (outcome, counts) {
        (TestOutcome::Passed | TestOutcome::Failed, Some(counts)) => counts,
        (TestOutcome::Passed, None) => "passed".to_owned(),
        (TestOutcome::Failed, None) => "failed".to_owned(),
        (TestOutcome::NoTests, _) => "no tests ran".to_owned(),
        (TestOutcome::BuildFailed, _) if build.is_some() && run.is_none() => {
            "build failed (--no-run)".to_owned()
        }
        (TestOutcome::BuildFailed, _) => "build failed".to_owned(),
        (TestOutcome::MissingImport { missing }, _) => {
            let names: Vec<String> = missing
                .iter()
                .map(|m| match &m.name {
                    Some(name) => format!("{name} from {}", m.module),
                    None => m.module.clone(),
                })
                .collect();
            format!("missing import: {}", names.join(", "))
        }
        (TestOutcome::Interrupted, _) => "interrupted".to_owned(),
        (TestOutcome::InternalError, _) => "internal error".to_owned(),
        (TestOutcome::UsageError, _) => "usage error".to_owned(),
        (TestOutcome::TimedOut, _) => "timed out".to_owned(),
        (TestOutcome::Crashed, _) => "crashed".to_owned(),
    };
    let ended = match last {
        Some(r) if r.timed_out.is_some() => "killed by gavel's clock".to_owned(),
        Some(TestRun {
            signal: Some(s), ..
        }) => format!("signal {s}"),
        Some(TestRun {
            exit_code: Some(c), ..
        }) => format!("exit {c}"),
        _ => "no exit code".to_owned(),
    };
    let secs: f64 = [build, run]
        .into_iter()
        .flatten()
        .map(|r| r.duration.as_secs_f64())
        .sum();
    format!("{what} ({}, {ended}, {secs:.1} s)", kind.name())
}

/// The counts the runner printed, e.g. "3 passed, 1 failed".
fn counts(kind: RunnerKind, out: &str) -> Option<String> {
    static PYTEST: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?m)^=*\s*((?:\d+ \w+(?:, )?)+) in [\d.]+s"));
    static NODE: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?m)^(?:# |ℹ )(pass|fail|skipped|todo|cancelled) (\d+)\s*$"));
    static JEST: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^Tests:\s+(.+?), \d+ total"));
    match kind {
        RunnerKind::Pytest => PYTEST
            .captures_iter(out)
            .last()
            .map(|c| c[1].trim_end_matches(", ").to_owned()),
        RunnerKind::Cargo => cargo_counts(out).map(|(p, f, i)| {
            let mut parts = vec![format!("{p} passed")];
            if f > 0 {
                parts.push(format!("{f} failed"));
            }
            if i > 0 {
                parts.push(format!("{i} ignored"));
            }
            parts.join(", ")
        }),
        RunnerKind::Node => {
            if let Some(c) = JEST.captures_iter(out).last() {
                return Some(c[1].to_owned());
            }
            let parts: Vec<String> = NODE
                .captures_iter(out)
                .filter(|c| &c[2] != "0" || &c[1] == "pass")
                .map(|c| {
                    let what = match &c[1] {
                        "pass" => "passed",
                        "fail" => "failed",
                        other => other,
                    };
                    format!("{} {what}", &c[2])
                })
                .collect();
            (!parts.is_empty()).then(|| parts.join(", "))
        }
        RunnerKind::Go => {
            let ok = out.lines().filter(|l| l.starts_with("ok ")).count();
            let failed = out.lines().filter(|l| l.starts_with("FAIL\t")).count();
            (ok + failed > 0).then(|| format!("{ok} packages ok, {failed} failed"))
        }
        RunnerKind::Generic => None,
    }
}
