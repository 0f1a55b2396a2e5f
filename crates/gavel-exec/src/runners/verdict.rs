//! The green gate's verdict: whether a run proves that the tests written before the
//! implementation ran and passed, judged from the per-test reports of the red and the green
//! run ([`super::TestListing`]), never from the exit code alone.
//!
//! [`judge_green`] fails closed: the green run is green only when
//! 1. the runner's own outcome is `passed` (exit code and console output, as before);
//! 2. its report was read (a missing, cut or unparseable report is not green);
//! 3. the report names no load error (a file that did not load, a binary or a test file
//!    process that ended before its tests did, a package that failed outside its tests);
//! 4. no test failed or errored;
//! 5. every test the red run listed is listed again: fewer tests than the red run, or other
//!    ones, is not green, and the missing ones are named;
//! 6. every test the red run saw run (passed or failed) passed, not skipped;
//! 7. at least one listed test is declared in the files written before the implementation
//!    (the scaffold files), and each of those passed, unless it was already skipped in red.
//!
//! The red run's list is often short: tests that import code not written yet do not load,
//! so their file is a load error in red and its tests appear first in green; rule 7 is what
//! proves they ran then. A red run without a list (not asked, or unread) leaves rules 5 and
//! 6 nothing to compare.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::{TestCase, TestListing, TestOutcome, TestReport, TestStatus};

/// How many names a reason lists before "and N more".
const NAMED: usize = 10;

/// Why a green run is not green.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "problem")]
pub enum GreenProblem {
    /// The runner's own outcome (exit code, output) is not `passed`.
    RunnerNotPassed { summary: String },
    /// There is no report to judge by.
    NoReport { reason: String },
    /// Tests that could not all be listed.
    LoadErrors { errors: Vec<String> },
    /// Tests that failed, errored, or were skipped where they must pass.
    NotPassed { tests: Vec<(String, TestStatus)> },
    /// Tests the red run listed that the green run does not.
    Missing {
        red: usize,
        green: usize,
        tests: Vec<String>,
    },
    /// No listed test is declared in the scaffold files.
    NoScaffoldTests { files: Vec<String> },
}

/// The green gate's verdict, with a reason a person (or the implementer) can act on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "verdict")]
pub enum GreenVerdict {
    /// The tests ran and passed: `scaffold` of the `passed` tests are the scaffold's.
    Green {
        passed: usize,
        scaffold: usize,
    },
    NotGreen {
        problems: Vec<GreenProblem>,
    },
}

impl GreenVerdict {
    #[must_use]
    pub fn is_green(&self) -> bool {
        matches!(self, GreenVerdict::Green { .. })
    }

    /// One paragraph for a person, e.g. "not green: 2 tests the red run listed are missing
    /// (red 5, green 3): test_calc.py::test_add, test_calc.py::test_sub".
    #[must_use]
    pub fn reason(&self) -> String {
        match self {
            GreenVerdict::Green { passed, scaffold } => format!(
                "green: {passed} tests passed, {scaffold} of them from the files written with the tests"
            ),
            GreenVerdict::NotGreen { problems } => {
                let parts: Vec<String> = problems.iter().map(GreenProblem::describe).collect();
                format!("not green: {}", parts.join("; "))
            }
        }
    }
}

impl GreenProblem {
    fn describe(&self) -> String {
        match self {
            GreenProblem::RunnerNotPassed { summary } => {
                format!("the test run did not pass ({summary})")
            }
            GreenProblem::NoReport { reason } => {
                format!("the run has no per-test report to judge by: {reason}")
            }
            GreenProblem::LoadErrors { errors } => {
                format!("not every test could run: {}", named(errors.iter()))
            }
            GreenProblem::NotPassed { tests } => format!(
                "{} tests did not pass: {}",
                tests.len(),
                named(
                    tests
                        .iter()
                        .map(|(id, s)| format!("{id} ({})", status_name(*s)))
                )
            ),
            GreenProblem::Missing { red, green, tests } => format!(
                "{} tests the red run listed are missing (red {red}, green {green}): {}",
                tests.len(),
                named(tests.iter())
            ),
            GreenProblem::NoScaffoldTests { files } => format!(
                "no test listed comes from the files written with the tests ({})",
                named(files.iter())
            ),
        }
    }
}

fn status_name(status: TestStatus) -> &'static str {
    match status {
        TestStatus::Passed => "passed",
        TestStatus::Skipped => "skipped",
        TestStatus::Failed => "failed",
        TestStatus::Error => "error",
    }
}

fn named<T: std::fmt::Display>(items: impl ExactSizeIterator<Item = T>) -> String {
    let total = items.len();
    let mut shown: Vec<String> = items.take(NAMED).map(|i| i.to_string()).collect();
    if total > NAMED {
        shown.push(format!("and {} more", total - NAMED));
    }
    if shown.is_empty() {
        "none".to_owned()
    } else {
        shown.join(", ")
    }
}

/// Whether the green run `green` is green, given the red run's list (`red`: the red
/// [`TestReport::tests`], `None` when it had none) and `scaffold`, the paths of the files
/// written before the implementation (relative to the test command's folder, `/`-separated;
/// test files and runner configuration alike). The rules are in the module doc.
#[must_use]
pub fn judge_green(
    red: Option<&TestListing>,
    green: &TestReport,
    scaffold: &[String],
) -> GreenVerdict {
    let mut problems = Vec::new();
    if green.outcome != TestOutcome::Passed {
        problems.push(GreenProblem::RunnerNotPassed {
            summary: green.summary.clone(),
        });
    }
    let list = match &green.tests {
        Some(TestListing::Read(list)) => list,
        Some(TestListing::Unread { reason }) => {
            problems.push(GreenProblem::NoReport {
                reason: reason.clone(),
            });
            return GreenVerdict::NotGreen { problems };
        }
        None => {
            problems.push(GreenProblem::NoReport {
                reason: "no report was asked for".to_owned(),
            });
            return GreenVerdict::NotGreen { problems };
        }
    };
    if !list.load_errors.is_empty() {
        problems.push(GreenProblem::LoadErrors {
            errors: list.load_errors.clone(),
        });
    }
    let red_cases: &[TestCase] = red.and_then(TestListing::list).map_or(&[], |l| &l.cases);
    let red_status: HashMap<&str, TestStatus> = red_cases
        .iter()
        .map(|c| (c.id.as_str(), c.status))
        .collect();
    let green_ids: HashMap<&str, TestStatus> = list
        .cases
        .iter()
        .map(|c| (c.id.as_str(), c.status))
        .collect();

    let missing: Vec<String> = red_cases
        .iter()
        .filter(|c| !green_ids.contains_key(c.id.as_str()))
        .map(|c| c.id.clone())
        .collect();
    if !missing.is_empty() || list.cases.len() < red_cases.len() {
        problems.push(GreenProblem::Missing {
            red: red_cases.len(),
            green: list.cases.len(),
            tests: missing,
        });
    }

    let mut not_passed = Vec::new();
    let mut scaffold_tests = 0;
    for case in &list.cases {
        let was = red_status.get(case.id.as_str()).copied();
        let from_scaffold = case
            .files
            .iter()
            .any(|f| scaffold.iter().any(|s| same_file(f, s)));
        if from_scaffold {
            scaffold_tests += 1;
        }
        let ok = match case.status {
            TestStatus::Passed => true,
            TestStatus::Failed | TestStatus::Error => false,
            // Skipped: only what was already skipped in red, or (outside the scaffold files)
            // a test new to this run; a test that ran in red must run in green.
            TestStatus::Skipped => match was {
                Some(TestStatus::Skipped) => true,
                Some(_) => false,
                None => !from_scaffold,
            },
        };
        if !ok {
            not_passed.push((case.id.clone(), case.status));
        }
    }
    if !not_passed.is_empty() {
        problems.push(GreenProblem::NotPassed { tests: not_passed });
    }
    if scaffold_tests == 0 {
        problems.push(GreenProblem::NoScaffoldTests {
            files: scaffold.to_vec(),
        });
    }
    if problems.is_empty() {
        GreenVerdict::Green {
            passed: list
                .cases
                .iter()
                .filter(|c| c.status == TestStatus::Passed)
                .count(),
            scaffold: scaffold_tests,
        }
    } else {
        GreenVerdict::NotGreen { problems }
    }
}

/// Whether the runner's `reported` path and the scaffold path `written` name one file: equal,
/// or one ends with the other at a `/` (a runner may name files from a subfolder it treats as
/// its root, or absolutely).
fn same_file(reported: &str, written: &str) -> bool {
    let norm = |p: &str| {
        let mut p = p.trim_start_matches('/');
        while let Some(rest) = p.strip_prefix("./") {
            p = rest.trim_start_matches('/');
        }
        p.to_owned()
    };
    let (a, b) = (norm(reported), norm(written));
    if a.is_empty() || b.is_empty() {
        return false;
    }
    a == b || a.ends_with(&format!("/{b}")) || b.ends_with(&format!("/{a}"))
}
