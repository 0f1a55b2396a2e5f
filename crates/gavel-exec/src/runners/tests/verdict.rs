//! Unit tests of [`judge_green`]: each rule of the verdict on hand-made lists, and reports
//! journaled before there were per-test lists.

use crate::runners::*;

fn case(id: &str, file: &str, status: TestStatus) -> TestCase {
    TestCase {
        id: id.to_owned(),
        files: vec![file.to_owned()],
        status,
    }
}

fn listing(cases: Vec<TestCase>, load_errors: &[&str]) -> TestListing {
    TestListing::Read(TestList {
        format: ReportFormat::PytestJunit,
        cases,
        load_errors: load_errors.iter().map(|e| (*e).to_owned()).collect(),
    })
}

fn report(outcome: TestOutcome, tests: Option<TestListing>) -> TestReport {
    TestReport {
        kind: RunnerKind::Pytest,
        outcome,
        build: None,
        run: None,
        summary: "2 passed (pytest, exit 0, 0.1 s)".to_owned(),
        tests,
    }
}

fn scaffold() -> Vec<String> {
    vec!["tests/test_calc.py".to_owned()]
}

use TestStatus::{Error, Failed, Passed, Skipped};

const NEW: &str = "tests/test_calc.py";
const OLD: &str = "tests/test_old.py";

fn problems(v: GreenVerdict) -> Vec<GreenProblem> {
    match v {
        GreenVerdict::NotGreen { problems } => problems,
        GreenVerdict::Green { .. } => panic!("green: {}", v.reason()),
    }
}

#[test]
fn green_needs_the_scaffold_tests_to_have_passed_in_a_report() {
    let red = listing(
        vec![
            case("old::a", OLD, Passed),
            case("old::slow", OLD, Skipped),
            case("new::a", NEW, Failed),
        ],
        &[],
    );
    let green = report(
        TestOutcome::Passed,
        Some(listing(
            vec![
                case("old::a", OLD, Passed),
                case("old::slow", OLD, Skipped),
                case("new::a", NEW, Passed),
                case("new::b", NEW, Passed),
            ],
            &[],
        )),
    );
    let v = judge_green(Some(&red), &green, &scaffold());
    assert_eq!(
        v,
        GreenVerdict::Green {
            passed: 3,
            scaffold: 2
        }
    );
    assert!(v.is_green());
    assert_eq!(
        v.reason(),
        "green: 3 tests passed, 2 of them from the files written with the tests"
    );

    // The red run's tests did not load: what proves them is that green lists them.
    let red = listing(vec![], &["tests/test_calc.py did not load"]);
    assert!(judge_green(Some(&red), &green, &scaffold()).is_green());
    assert!(judge_green(None, &green, &scaffold()).is_green());
}

#[test]
fn the_exit_code_alone_is_never_green() {
    let passed = report(TestOutcome::Passed, None);
    assert_eq!(
        problems(judge_green(None, &passed, &scaffold())),
        [GreenProblem::NoReport {
            reason: "no report was asked for".to_owned()
        }]
    );
    let unread = report(
        TestOutcome::Passed,
        Some(TestListing::Unread {
            reason: "the runner wrote no report".to_owned(),
        }),
    );
    let v = judge_green(None, &unread, &scaffold());
    assert!(
        v.reason()
            .contains("no per-test report to judge by: the runner wrote no report"),
        "{}",
        v.reason()
    );

    // A report that says passed does not outvote the runner's outcome.
    let failed = report(
        TestOutcome::Failed,
        Some(listing(vec![case("new::a", NEW, Passed)], &[])),
    );
    assert!(matches!(
        problems(judge_green(None, &failed, &scaffold()))[..],
        [GreenProblem::RunnerNotPassed { .. }]
    ));
}

#[test]
fn missing_failed_and_skipped_tests_are_named() {
    let red = listing(
        vec![
            case("old::a", OLD, Passed),
            case("old::b", OLD, Passed),
            case("new::a", NEW, Failed),
            case("new::b", NEW, Failed),
        ],
        &[],
    );
    let green = report(
        TestOutcome::Passed,
        Some(listing(
            vec![
                case("old::a", OLD, Skipped),
                case("new::a", NEW, Error),
                case("new::c", NEW, Skipped),
                case("other::x", "tests/test_x.py", Skipped),
            ],
            &["tests/test_y.py did not load"],
        )),
    );
    let v = judge_green(Some(&red), &green, &scaffold());
    assert_eq!(
        problems(v.clone()),
        [
            GreenProblem::LoadErrors {
                errors: vec!["tests/test_y.py did not load".to_owned()]
            },
            GreenProblem::Missing {
                red: 4,
                green: 4,
                tests: vec!["old::b".to_owned(), "new::b".to_owned()]
            },
            GreenProblem::NotPassed {
                tests: vec![
                    ("old::a".to_owned(), Skipped),
                    ("new::a".to_owned(), Error),
                    ("new::c".to_owned(), Skipped),
                ]
            },
        ]
    );
    assert_eq!(
        v.reason(),
        "not green: not every test could run: tests/test_y.py did not load; \
         2 tests the red run listed are missing (red 4, green 4): old::b, new::b; \
         3 tests did not pass: old::a (skipped), new::a (error), new::c (skipped)"
    );
}

#[test]
fn fewer_tests_than_red_is_not_green_and_long_lists_are_cut() {
    let red_cases: Vec<TestCase> = (0..15)
        .map(|i| case(&format!("new::t{i}"), NEW, Failed))
        .collect();
    let red = listing(red_cases, &[]);
    let green = report(
        TestOutcome::Passed,
        Some(listing(vec![case("new::t0", NEW, Passed)], &[])),
    );
    let v = judge_green(Some(&red), &green, &scaffold());
    let reason = v.reason();
    assert!(
        reason.contains("14 tests the red run listed are missing (red 15, green 1): new::t1,"),
        "{reason}"
    );
    assert!(reason.ends_with("new::t10, and 4 more"), "{reason}");
}

#[test]
fn a_green_without_a_scaffold_test_is_not_green() {
    let green = report(
        TestOutcome::Passed,
        Some(listing(vec![case("old::a", OLD, Passed)], &[])),
    );
    assert_eq!(
        problems(judge_green(None, &green, &scaffold())),
        [GreenProblem::NoScaffoldTests { files: scaffold() }]
    );
    assert!(
        !judge_green(None, &green, &[]).is_green(),
        "no scaffold files"
    );
}

#[test]
fn runners_may_name_files_from_a_subfolder_or_absolutely() {
    let green = |file: &str| {
        report(
            TestOutcome::Passed,
            Some(listing(vec![case("a", file, Passed)], &[])),
        )
    };
    let scaffold = vec!["python/tests/test_calc.py".to_owned()];
    for file in [
        "python/tests/test_calc.py",
        "./python/tests/test_calc.py",
        "tests/test_calc.py",
        "/work/wt/python/tests/test_calc.py",
    ] {
        assert!(
            judge_green(None, &green(file), &scaffold).is_green(),
            "{file}"
        );
    }
    for file in [
        "test_calc.py.bak",
        "tests/test_calc_other.py",
        "xtest_calc.py",
    ] {
        assert!(
            !judge_green(None, &green(file), &scaffold).is_green(),
            "{file}"
        );
    }
}

#[test]
fn reports_journaled_before_test_lists_still_load() {
    let old = r#"{"kind":"pytest","outcome":{"outcome":"passed"},"build":null,"run":null,"summary":"1 passed"}"#;
    let report: TestReport = serde_json::from_str(old).unwrap();
    assert_eq!(report.tests, None);
    assert!(!serde_json::to_string(&report).unwrap().contains("tests"));

    let with = TestReport {
        tests: Some(listing(vec![case("a", NEW, Passed)], &[])),
        ..report
    };
    let json = serde_json::to_string(&with).unwrap();
    assert!(
        json.contains(r#""tests":{"report":"read","format":"pytest_junit""#),
        "{json}"
    );
    assert_eq!(serde_json::from_str::<TestReport>(&json).unwrap(), with);
    let verdict = judge_green(None, &with, &scaffold());
    let json = serde_json::to_string(&verdict).unwrap();
    assert_eq!(
        serde_json::from_str::<GreenVerdict>(&json).unwrap(),
        verdict
    );
}

#[test]
fn config_files_are_guarded_like_tests() {
    let guarded = |kind: RunnerKind, path: &str| {
        let globs: Vec<String> = kind
            .config_globs()
            .iter()
            .map(|g| (*g).to_owned())
            .collect();
        is_test_file(path, &globs)
    };
    let cases: &[(RunnerKind, &[&str], &[&str])] = &[
        (
            RunnerKind::Pytest,
            &[
                "pytest.ini",
                "conftest.py",
                "a/b/conftest.py",
                "pyproject.toml",
                "sub/pyproject.toml",
                "setup.cfg",
                "tox.ini",
                ".pytest.ini",
                "pytest.toml",
                "sitecustomize.py",
            ],
            &["setup.py", "src/calc.py", "requirements.txt"],
        ),
        (
            RunnerKind::Cargo,
            &[
                "Cargo.toml",
                "crates/a/Cargo.toml",
                ".cargo/config.toml",
                ".cargo/config",
                "rust-toolchain.toml",
            ],
            &["src/lib.rs", "Cargo.lock", "build.rs"],
        ),
        (
            RunnerKind::Node,
            &[
                "package.json",
                "web/package.json",
                ".npmrc",
                "jest.config.js",
                "jest.config.ts",
                "vitest.config.mts",
                "vite.config.js",
                "babel.config.json",
                ".babelrc",
            ],
            &["index.js", "package-lock.json", "src/config.js"],
        ),
        (
            RunnerKind::Go,
            &["go.mod", "sub/go.mod", "go.work", "vendor/x/y.go"],
            &["go.sum", "main.go"],
        ),
    ];
    for (kind, yes, no) in cases {
        for path in *yes {
            assert!(guarded(*kind, path), "{kind:?}: {path} is configuration");
        }
        for path in *no {
            assert!(!guarded(*kind, path), "{kind:?}: {path} is not");
        }
    }
    assert!(RunnerKind::Generic.config_globs().is_empty());
}
