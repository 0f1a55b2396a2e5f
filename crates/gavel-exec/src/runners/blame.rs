//! Where a test run that did not build or load went wrong, for the red gate.
//!
//! A red gate wants tests that fail because the code they test does not exist yet. A test
//! file that does not even parse fails too, and reading that as red sends the run to an
//! implementer that may not touch tests. So a [`TestOutcome::BuildFailed`] run is read error
//! by error from the runner's output (the compiler's or the collector's messages, with the
//! file and line each names): an error that names something missing (`cannot find function`,
//! `unresolved import`, go's `undefined: Add`, a missing module or name) is the code under
//! test not written yet; any other error (a syntax or type error, an exception while a test
//! file loads) is the tests' own. [`blame`] fails closed: a run whose errors cannot be read is
//! not red.

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use super::{RunnerKind, TestOutcome, TestReport};

/// How many errors a description names before "and N more".
const NAMED: usize = 5;

/// One error the runner reported while building or loading the tests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadError {
    /// The file the runner names, relative to the test command's folder when it is inside.
    pub file: Option<String>,
    pub line: Option<u32>,
    /// The runner's message, e.g. "SyntaxError: invalid syntax".
    pub message: String,
    /// The error names something that does not exist yet (a function, a module, a name).
    pub unimplemented: bool,
}

/// Whose a run's build or load errors are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "blame")]
pub enum LoadBlame {
    /// Every error names something the tests use that is not written yet: red.
    Unimplemented { errors: Vec<LoadError> },
    /// At least one error is the tests' own (or cannot be read): not red. `errors` are those.
    Tests { errors: Vec<LoadError> },
}

impl LoadBlame {
    #[must_use]
    pub fn is_red(&self) -> bool {
        matches!(self, LoadBlame::Unimplemented { .. })
    }

    /// The errors, one per line, e.g. "tests/test_calc.py:3: SyntaxError: invalid syntax".
    #[must_use]
    pub fn describe(&self) -> String {
        let (LoadBlame::Unimplemented { errors } | LoadBlame::Tests { errors }) = self;
        let mut lines: Vec<String> = errors.iter().take(NAMED).map(LoadError::describe).collect();
        if errors.len() > NAMED {
            lines.push(format!("and {} more", errors.len() - NAMED));
        }
        lines.join("\n")
    }
}

impl LoadError {
    fn describe(&self) -> String {
        let place = match (&self.file, self.line) {
            (Some(f), Some(l)) => format!("{f}:{l}"),
            (Some(f), None) => f.clone(),
            _ => "(no file named: gavel cannot tell where this error is)".to_owned(),
        };
        format!("- {place}: {}", self.message)
    }
}

/// Whose the build or load errors of `report` are (see the module doc); `cwd` is the test
/// command's folder. Only a `build_failed` run has any: other outcomes are
/// `Unimplemented` with no errors (a `missing_import` run is one by definition).
#[must_use]
pub fn blame(kind: RunnerKind, report: &TestReport, cwd: &Path) -> LoadBlame {
    if report.outcome != TestOutcome::BuildFailed {
        return LoadBlame::Unimplemented { errors: Vec::new() };
    }
    let output: String = report
        .build
        .iter()
        .chain(report.run.iter())
        .map(|r| r.output.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let mut errors = match kind {
        RunnerKind::Pytest => pytest(&output),
        RunnerKind::Cargo => cargo(&output),
        RunnerKind::Go => go(&output),
        RunnerKind::Node => node(&output),
        RunnerKind::Generic => Vec::new(),
    };
    for e in &mut errors {
        if let Some(f) = &e.file {
            e.file = Some(relative(f, cwd));
        }
    }
    if errors.is_empty() {
        // Fail closed: an error gavel cannot read is not red.
        return LoadBlame::Tests {
            errors: vec![LoadError {
                file: None,
                line: None,
                message: format!("the tests did not build or load ({})", report.summary),
                unimplemented: false,
            }],
        };
    }
    if errors.iter().all(|e| e.unimplemented) {
        LoadBlame::Unimplemented { errors }
    } else {
        LoadBlame::Tests {
            errors: errors.into_iter().filter(|e| !e.unimplemented).collect(),
        }
    }
}

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|e| panic!("a valid built-in pattern {pattern}: {e}"))
}

fn relative(file: &str, cwd: &Path) -> String {
    let file = file.strip_prefix("file://").unwrap_or(file);
    let path = Path::new(file);
    let rel = path.strip_prefix(cwd).unwrap_or(path).to_string_lossy();
    let rel = rel.strip_prefix("./").unwrap_or(&rel);
    clean(rel)
}

fn clean(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).collect()
}

/// pytest: each `ERROR collecting FILE` section (or conftest's `ImportError while loading
/// conftest`), its exception, and the last frame of that file (a `SyntaxError` names its own).
fn pytest(out: &str) -> Vec<LoadError> {
    static SECTION: LazyLock<Regex> = LazyLock::new(|| {
        re(r"(?m)^_+ ERROR collecting (\S+) _+$|^ImportError while loading conftest '([^']+)'")
    });
    static EXCEPTION: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?m)^E\s+([A-Za-z_][\w.]*(?:Error|Exception|Exit)): ?(.*?)\s*$"));
    static SYNTAX_AT: LazyLock<Regex> =
        LazyLock::new(|| re(r#"(?m)^E\s+File "([^"]+)", line (\d+)"#));
    static FRAME: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^(\S+\.py):(\d+): in "));
    static NO_MODULE: LazyLock<Regex> = LazyLock::new(|| re(r"^No module named '[\w.]+'$"));
    static NO_NAME: LazyLock<Regex> =
        LazyLock::new(|| re(r"^cannot import name '\w+' from '[\w.]+' \("));
    let starts: Vec<(usize, String)> = SECTION
        .captures_iter(out)
        .filter_map(|c| {
            let m = c.get(1).or(c.get(2))?;
            Some((c.get(0)?.start(), m.as_str().to_owned()))
        })
        .collect();
    let mut errors = Vec::new();
    for (i, (start, collected)) in starts.iter().enumerate() {
        let end = starts
            .get(i + 1)
            .map_or_else(|| section_end(out, *start), |(s, _)| *s);
        let section = &out[*start..end];
        let Some(exception) = EXCEPTION.captures(section) else {
            errors.push(LoadError {
                file: Some(collected.clone()),
                line: None,
                message: "pytest could not collect it".to_owned(),
                unimplemented: false,
            });
            continue;
        };
        let (name, message) = (&exception[1], &exception[2]);
        let unimplemented = matches!(name, "ModuleNotFoundError" | "ImportError")
            && (NO_MODULE.is_match(message) || NO_NAME.is_match(message));
        let (file, line) = match SYNTAX_AT.captures(section) {
            Some(c) => (c[1].to_owned(), c[2].parse().ok()),
            None => FRAME
                .captures_iter(section)
                .filter(|c| !c[1].contains("site-packages") && !c[1].starts_with('<'))
                .last()
                .map_or((collected.clone(), None), |c| {
                    (c[1].to_owned(), c[2].parse().ok())
                }),
        };
        errors.push(LoadError {
            file: Some(file),
            line,
            message: clean(&format!("{name}: {message}")),
            unimplemented,
        });
    }
    errors
}

/// Where pytest's last error section ends: its short summary.
fn section_end(out: &str, start: usize) -> usize {
    out[start..]
        .find("short test summary info")
        .map_or(out.len(), |i| start + i)
}

/// The rustc error codes that name something that does not exist: a value or function
/// (E0425), an import (E0432), a path (E0433), a type, struct or trait (E0412, E0422, E0405),
/// a method or associated item (E0599), a field (E0609, E0560), a module's file (E0583).
const RUST_MISSING: &[&str] = &[
    "E0425", "E0432", "E0433", "E0412", "E0422", "E0405", "E0599", "E0609", "E0560", "E0583",
];

/// cargo: each `error[CODE]: message` (or plain `error: message`) with the `--> file:line`
/// under it; cargo's own closing lines are not errors of their own.
fn cargo(out: &str) -> Vec<LoadError> {
    static ERROR: LazyLock<Regex> = LazyLock::new(|| re(r"^error(?:\[(E\d{4})\])?: (.*)$"));
    static AT: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*--> (.+?):(\d+):\d+\s*$"));
    let lines: Vec<&str> = out.lines().collect();
    let mut errors = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(c) = ERROR.captures(line) else {
            continue;
        };
        let message = &c[2];
        let closing = ["could not compile", "aborting due to", "test failed"];
        if c.get(1).is_none() && closing.iter().any(|p| message.starts_with(p)) {
            continue;
        }
        let at = lines
            .iter()
            .skip(i + 1)
            .take(4)
            .find_map(|l| AT.captures(l));
        let code = c.get(1).map(|m| m.as_str());
        errors.push(LoadError {
            file: at.as_ref().map(|a| a[1].to_owned()),
            line: at.as_ref().and_then(|a| a[2].parse().ok()),
            message: clean(&match code {
                Some(code) => format!("error[{code}]: {message}"),
                None => format!("error: {message}"),
            }),
            unimplemented: code.is_some_and(|c| RUST_MISSING.contains(&c)),
        });
    }
    errors
}

/// go: the compiler's and vet's `file.go:line:col: message` lines.
fn go(out: &str) -> Vec<LoadError> {
    static AT: LazyLock<Regex> = LazyLock::new(|| re(r"^(\S+\.go):(\d+)(?::\d+)?: (.*)$"));
    out.lines()
        .filter_map(|l| AT.captures(l.trim_start()))
        .map(|c| {
            let message = &c[3];
            LoadError {
                file: Some(c[1].to_owned()),
                line: c[2].parse().ok(),
                message: clean(message),
                unimplemented: message.starts_with("undefined: ")
                    || message.contains("has no field or method"),
            }
        })
        .collect()
}

/// node: each `SyntaxError` while loading a file, with the `file:line` node prints above it.
fn node(out: &str) -> Vec<LoadError> {
    static SYNTAX: LazyLock<Regex> = LazyLock::new(|| re(r"^(?:# )?(SyntaxError: .*)$"));
    static AT: LazyLock<Regex> =
        LazyLock::new(|| re(r"^(?:# )?((?:file://)?/\S+\.[cm]?[jt]sx?):(\d+)\s*$"));
    let lines: Vec<&str> = out.lines().collect();
    let mut errors: Vec<LoadError> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(c) = SYNTAX.captures(line) else {
            continue;
        };
        if c[1].contains("does not provide an export named") {
            continue;
        }
        let at = lines[..i].iter().rev().take(6).find_map(|l| AT.captures(l));
        let error = LoadError {
            file: at.as_ref().map(|a| a[1].to_owned()),
            line: at.as_ref().and_then(|a| a[2].parse().ok()),
            message: clean(&c[1]),
            unimplemented: false,
        };
        if !errors.contains(&error) {
            errors.push(error);
        }
    }
    errors
}
