//! Regression tests of issue 31, "a green that means green": code that fakes a green run
//! (an early exit with status 0, a runner configuration that runs nothing) is judged not
//! green by [`judge_green`] from the runners' per-test reports, on real sample projects run
//! with the real runners. Each attack is shown to pass the old reading (the runner's outcome
//! is `passed`), and each sample also has an honest green, so the verdict is not simply "no".

use std::time::Duration;

use gavel_exec::runners::{
    GreenProblem, GreenVerdict, RunnerKind, TestListing, TestOutcome, TestReport, TestStatus,
    is_test_file, judge_green,
};

use crate::util::{Project, assert_outcome};

fn judge(red: &TestReport, green: &TestReport, scaffold: &[&str]) -> GreenVerdict {
    let scaffold: Vec<String> = scaffold.iter().map(|s| (*s).to_owned()).collect();
    judge_green(red.tests.as_ref(), green, &scaffold)
}

/// The problems of a verdict that must not be green.
#[track_caller]
fn not_green(verdict: &GreenVerdict, green: &TestReport) -> Vec<GreenProblem> {
    match verdict {
        GreenVerdict::NotGreen { problems } => problems.clone(),
        GreenVerdict::Green { .. } => panic!(
            "judged green: {}\n{:#?}\n{}",
            verdict.reason(),
            green.tests,
            green.run.as_ref().map(|r| r.output.as_str()).unwrap_or("")
        ),
    }
}

#[track_caller]
fn assert_green(verdict: &GreenVerdict, green: &TestReport, scaffold: usize) {
    let GreenVerdict::Green {
        scaffold: found, ..
    } = verdict
    else {
        panic!(
            "{}\n{:#?}\n{}",
            verdict.reason(),
            green.tests,
            green.run.as_ref().map(|r| r.output.as_str()).unwrap_or("")
        );
    };
    assert_eq!(*found, scaffold, "{}", verdict.reason());
}

fn missing(problems: &[GreenProblem]) -> Vec<String> {
    problems
        .iter()
        .filter_map(|p| match p {
            GreenProblem::Missing { tests, .. } => Some(tests.clone()),
            _ => None,
        })
        .flatten()
        .collect()
}

fn has_load_error(problems: &[GreenProblem], text: &str) -> bool {
    problems.iter().any(|p| match p {
        GreenProblem::LoadErrors { errors } => errors.iter().any(|e| e.contains(text)),
        _ => false,
    })
}

fn no_scaffold_tests(problems: &[GreenProblem]) -> bool {
    problems
        .iter()
        .any(|p| matches!(p, GreenProblem::NoScaffoldTests { .. }))
}

// --- pytest -------------------------------------------------------------------------------

const PY_TEST: &str = "from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n\ndef test_add_more():\n    assert add(2, 2) == 4\n";
const PY_GOOD: &str = "def add(a, b):\n    return a + b\n";
const PY_BAD: &str = "def add(a, b):\n    return a - b\n";
const PY_SCAFFOLD: &[&str] = &["tests/test_calc.py"];

fn pytest_project() -> Project {
    Project::new(&[
        ("pytest.ini", "[pytest]\naddopts = -p no:cacheprovider\n"),
        ("tests/test_calc.py", PY_TEST),
    ])
}

fn pytest(p: &Project) -> TestReport {
    p.run_reported(
        "python3 -m pytest -q",
        &[("PYTHONPATH", "src"), ("PYTHONDONTWRITEBYTECODE", "1")],
        Duration::from_secs(120),
    )
}

#[test]
fn os_exit_0_while_the_code_under_test_is_imported_is_not_green() {
    let p = pytest_project();
    let red = pytest(&p);
    assert!(
        matches!(red.outcome, TestOutcome::MissingImport { .. }),
        "{}",
        red.summary
    );

    p.write(&[("src/calc.py", "import os\nos._exit(0)\n")]);
    let green = pytest(&p);
    assert_outcome(&green, &TestOutcome::Passed);
    let problems = not_green(&judge(&red, &green, PY_SCAFFOLD), &green);
    assert!(
        problems.iter().any(
            |p| matches!(p, GreenProblem::NoReport { reason } if reason.contains("wrote no report"))
        ),
        "{problems:?}"
    );

    p.write(&[("src/calc.py", PY_GOOD)]);
    let green = pytest(&p);
    assert_green(&judge(&red, &green, PY_SCAFFOLD), &green, 2);
}

#[test]
fn addopts_collect_only_in_pytest_ini_is_not_green() {
    let p = pytest_project();
    p.write(&[("src/calc.py", PY_BAD)]);
    let red = pytest(&p);
    assert_outcome(&red, &TestOutcome::Failed);

    p.write(&[("pytest.ini", "[pytest]\naddopts = --collect-only\n")]);
    let green = pytest(&p);
    assert_outcome(&green, &TestOutcome::Passed);
    let verdict = judge(&red, &green, PY_SCAFFOLD);
    let problems = not_green(&verdict, &green);
    assert_eq!(
        missing(&problems),
        [
            "tests/test_calc.py::test_add",
            "tests/test_calc.py::test_add_more"
        ]
    );
    assert!(no_scaffold_tests(&problems), "{problems:?}");
    assert!(
        verdict.reason().contains("red 2, green 0"),
        "{}",
        verdict.reason()
    );

    // Deselecting the test that still fails: one test fewer than red, named.
    p.write(&[
        ("src/calc.py", "def add(a, b):\n    return 3\n"),
        (
            "pytest.ini",
            "[pytest]\naddopts = -k \"not test_add_more\"\n",
        ),
    ]);
    let green = pytest(&p);
    assert_outcome(&green, &TestOutcome::Passed);
    let problems = not_green(&judge(&red, &green, PY_SCAFFOLD), &green);
    assert_eq!(missing(&problems), ["tests/test_calc.py::test_add_more"]);

    // The configuration is the scaffold's, never the implementation's to change.
    assert!(guarded(RunnerKind::Pytest, "pytest.ini"));

    p.write(&[
        ("src/calc.py", PY_GOOD),
        ("pytest.ini", "[pytest]\naddopts = -p no:cacheprovider\n"),
    ]);
    let green = pytest(&p);
    assert_green(&judge(&red, &green, PY_SCAFFOLD), &green, 2);
}

/// Whether the implement step's guard (test globs plus the runner's configuration) covers
/// `path`.
fn guarded(kind: RunnerKind, path: &str) -> bool {
    let globs: Vec<String> = kind
        .test_globs()
        .iter()
        .chain(kind.config_globs())
        .map(|g| (*g).to_owned())
        .collect();
    is_test_file(path, &globs)
}

/// A `conftest.py` hook that rewrites outcomes runs inside pytest, before the JUnit report is
/// written: the report says "passed" as the console does, so no runner-level reading can see
/// it. The defence is that the file is the scaffold's: every `conftest.py`, at any depth, is
/// guarded like a test file, and so are the other files pytest reads its configuration from.
#[test]
fn a_conftest_forcing_passes_is_a_guarded_file() {
    let p = pytest_project();
    p.write(&[("src/calc.py", PY_BAD)]);
    let red = pytest(&p);
    assert_outcome(&red, &TestOutcome::Failed);

    p.write(&[(
        "tests/conftest.py",
        "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n    outcome = yield\n    report = outcome.get_result()\n    report.outcome = 'passed'\n    report.longrepr = None\n",
    )]);
    let green = pytest(&p);
    assert_outcome(&green, &TestOutcome::Passed);
    let forged = green.tests.as_ref().and_then(TestListing::list);
    assert!(
        forged.is_some_and(|l| l.cases.iter().all(|c| c.status == TestStatus::Passed)),
        "the hook forges the report too: {forged:?}"
    );

    for path in [
        "conftest.py",
        "tests/conftest.py",
        "build/ignored/conftest.py",
        "pytest.ini",
        ".pytest.ini",
        "pytest.toml",
        "pyproject.toml",
        "setup.cfg",
        "tox.ini",
        "src/sitecustomize.py",
    ] {
        assert!(guarded(RunnerKind::Pytest, path), "{path}");
    }
    assert!(!guarded(RunnerKind::Pytest, "src/calc.py"));
}

// --- go -----------------------------------------------------------------------------------

const GO_TEST: &str = "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"1 + 2 != 3\")\n\t}\n}\n";
const GO_GOOD: &str = "package calc\n\nfunc Add(a, b int) int { return a + b }\n";
const GO_SCAFFOLD: &[&str] = &["calc_test.go"];

fn go(p: &Project) -> TestReport {
    let cache = p.reports.path().join("go-build");
    p.run_reported(
        "go test ./...",
        &[
            ("GOPROXY", "off"),
            ("GOFLAGS", ""),
            ("GOTOOLCHAIN", "local"),
            ("GOCACHE", cache.to_str().expect("a UTF-8 temp path")),
        ],
        Duration::from_secs(300),
    )
}

#[test]
fn os_exit_0_in_test_main_or_in_an_init_is_not_green() {
    let p = Project::new(&[
        ("go.mod", "module example.com/calc\n\ngo 1.19\n"),
        (
            "calc.go",
            "package calc\n\nfunc Add(a, b int) int { return a - b }\n",
        ),
        ("calc_test.go", GO_TEST),
    ]);
    let red = go(&p);
    assert_outcome(&red, &TestOutcome::Failed);

    p.write(&[(
        "main_test.go",
        "package calc\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestMain(m *testing.M) { os.Exit(0) }\n",
    )]);
    let green = go(&p);
    assert_outcome(&green, &TestOutcome::Passed);
    let problems = not_green(&judge(&red, &green, GO_SCAFFOLD), &green);
    assert_eq!(missing(&problems), ["example.com/calc::TestAdd"]);
    assert!(no_scaffold_tests(&problems), "{problems:?}");

    // The code under test exits while its package initialises.
    p.remove("main_test.go");
    p.write(&[(
        "calc.go",
        "package calc\n\nimport \"os\"\n\nfunc init() { os.Exit(0) }\n\nfunc Add(a, b int) int { return a - b }\n",
    )]);
    let green = go(&p);
    assert_outcome(&green, &TestOutcome::Passed);
    let problems = not_green(&judge(&red, &green, GO_SCAFFOLD), &green);
    assert_eq!(missing(&problems), ["example.com/calc::TestAdd"]);

    p.write(&[("calc.go", GO_GOOD)]);
    let green = go(&p);
    assert_green(&judge(&red, &green, GO_SCAFFOLD), &green, 1);
    assert!(
        green
            .run
            .as_ref()
            .is_some_and(|r| r.output.contains("ok  \texample.com/calc")),
        "the output is go's text, not its JSON events"
    );
    assert!(guarded(RunnerKind::Go, "go.mod"));
}

// --- node ---------------------------------------------------------------------------------

const NODE_TEST: &str = "import test from 'node:test';\nimport assert from 'node:assert';\nimport { add } from './calc.mjs';\n\ntest('adds', () => assert.equal(add(1, 2), 3));\ntest('adds later', async () => {\n  await new Promise((resolve) => setTimeout(resolve, 200));\n  assert.equal(add(2, 2), 4);\n});\n";
const NODE_SCAFFOLD: &[&str] = &["calc.test.mjs"];

#[test]
fn process_exit_0_in_a_node_test_run_is_not_green() {
    let p = Project::new(&[("calc.test.mjs", NODE_TEST)]);
    let node = |p: &Project| p.run_reported("node --test", &[], Duration::from_secs(120));
    let red = node(&p);
    assert!(
        matches!(red.outcome, TestOutcome::MissingImport { .. }),
        "{}",
        red.summary
    );

    // The code under test exits while it is imported, or while the first test runs: node
    // counts the file as one passing test, and no test of it is reported.
    for calc in [
        "process.exit(0);\nexport const add = (a, b) => a + b;\n",
        "export const add = (a, b) => process.exit(0);\n",
    ] {
        p.write(&[("calc.mjs", calc)]);
        let green = node(&p);
        assert_outcome(&green, &TestOutcome::Passed);
        let problems = not_green(&judge(&red, &green, NODE_SCAFFOLD), &green);
        assert!(no_scaffold_tests(&problems), "{problems:?}");
    }

    // It exits while the second test waits, before that test can fail: the first test is
    // reported, the second was queued and never finished.
    p.write(&[(
        "calc.mjs",
        "setTimeout(() => process.exit(0), 50);\nexport const add = (a, b) => (a === 2 ? 5 : a + b);\n",
    )]);
    let green = node(&p);
    assert_outcome(&green, &TestOutcome::Passed);
    let problems = not_green(&judge(&red, &green, NODE_SCAFFOLD), &green);
    // (Events the file's process had not handed over when it exited are lost with it.)
    assert!(
        has_load_error(&problems, "calc.test.mjs: 1 of 2 tests never finished")
            || no_scaffold_tests(&problems),
        "{problems:?}"
    );

    p.write(&[("calc.mjs", "export const add = (a, b) => a + b;\n")]);
    let green = node(&p);
    assert_green(&judge(&red, &green, NODE_SCAFFOLD), &green, 2);
    assert!(
        green
            .run
            .as_ref()
            .is_some_and(|r| r.output.contains("# pass 2")),
        "the console output is node's tap, as before"
    );
    for path in [
        "package.json",
        ".npmrc",
        "jest.config.js",
        "vitest.config.ts",
    ] {
        assert!(guarded(RunnerKind::Node, path), "{path}");
    }
}

// --- cargo --------------------------------------------------------------------------------

const MANIFEST: &str = "[package]\nname = \"sample\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[lib]\ndoctest = false\n";
/// The crate had a passing unit test before the scaffold.
const LIB_TESTS: &str = "\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn one() {\n        assert_eq!(1, 1);\n    }\n}\n";
const CARGO_SCAFFOLD: &[&str] = &["tests/add.rs"];

fn cargo(p: &Project) -> TestReport {
    let target = p.path().join("target");
    p.run_reported(
        "cargo test --offline --quiet",
        &[
            (
                "CARGO_TARGET_DIR",
                target.to_str().expect("a UTF-8 temp path"),
            ),
            ("RUSTFLAGS", ""),
        ],
        Duration::from_secs(300),
    )
}

#[test]
fn process_exit_0_in_a_rust_test_binary_is_not_green() {
    let p = Project::new(&[
        ("Cargo.toml", MANIFEST),
        ("src/lib.rs", LIB_TESTS),
        (
            "tests/add.rs",
            "#[test]\nfn adds() {\n    assert_eq!(sample::add(1, 2), 3);\n}\n",
        ),
    ]);
    let red = cargo(&p);
    assert_outcome(&red, &TestOutcome::BuildFailed);

    p.write(&[(
        "src/lib.rs",
        &format!(
            "pub fn add(_: i32, _: i32) -> i32 {{\n    std::process::exit(0)\n}}\n{LIB_TESTS}"
        ),
    )]);
    let green = cargo(&p);
    assert_outcome(&green, &TestOutcome::Passed);
    let problems = not_green(&judge(&red, &green, CARGO_SCAFFOLD), &green);
    assert!(
        has_load_error(&problems, "tests/add.rs (add) stopped before its summary"),
        "{problems:?}"
    );
    assert!(no_scaffold_tests(&problems), "{problems:?}");

    p.write(&[(
        "src/lib.rs",
        &format!("pub fn add(a: i32, b: i32) -> i32 {{\n    a + b\n}}\n{LIB_TESTS}"),
    )]);
    let green = cargo(&p);
    assert_green(&judge(&red, &green, CARGO_SCAFFOLD), &green, 1);
    for path in [
        "Cargo.toml",
        "crates/x/Cargo.toml",
        ".cargo/config.toml",
        ".cargo/config",
    ] {
        assert!(guarded(RunnerKind::Cargo, path), "{path}");
    }
}
