//! Unit tests of reading the runners' reports, on reports recorded from the real runners
//! (pytest 9.2, cargo 1.95, node 20, go 1.19), and of how each command is changed to write
//! one.

use std::path::Path;

use super::*;
use crate::runners::RunnerKind::{Cargo, Generic, Go, Node, Pytest};

fn words(command: &str) -> Vec<String> {
    shell_words::split(command).expect("a command line")
}

fn args(kind: RunnerKind, command: &str) -> Result<Vec<String>, String> {
    plan_args(kind, &words(command), Path::new("/r")).map(|p| p.args)
}

fn ids(list: &TestList) -> Vec<(&str, TestStatus)> {
    list.cases
        .iter()
        .map(|c| (c.id.as_str(), c.status))
        .collect()
}

#[test]
fn each_runner_is_told_to_write_its_report() {
    assert_eq!(
        args(Pytest, "python3 -m pytest -q tests").unwrap(),
        words("-m pytest -q tests --junitxml=/r/junit.xml -o junit_family=xunit1")
    );
    assert_eq!(
        args(Pytest, "uv run pytest -x").unwrap(),
        words("run pytest -x --junitxml=/r/junit.xml -o junit_family=xunit1")
    );
    assert_eq!(
        args(Cargo, "cargo test --offline --quiet").unwrap(),
        words("test --offline -- --format=pretty")
    );
    assert_eq!(
        args(Cargo, "env FOO=1 cargo test -q -p x -- --test-threads 1 -q").unwrap(),
        words("FOO=1 cargo test -p x -- --test-threads 1 --format=pretty")
    );
    assert_eq!(
        args(Cargo, "cargo test -- --format pretty").unwrap(),
        words("test -- --format pretty")
    );
    assert!(
        args(Cargo, "cargo test -- --format terse")
            .unwrap_err()
            .contains("--format terse")
    );
    assert_eq!(
        args(Go, "go test -v ./...").unwrap(),
        words("test -json -v ./...")
    );
    assert_eq!(
        args(Go, "go test -json ./...").unwrap(),
        words("test -json ./...")
    );
    assert_eq!(
        args(Node, "node --test test/").unwrap(),
        words(
            "--test --test-reporter=/r/gavel-reporter.mjs --test-reporter-destination=/r/node-tests.jsonl \
             --test-reporter=tap --test-reporter-destination=stdout test/"
        )
    );
    // The command's own reporter keeps stdout; node pairs reporters and destinations in order.
    assert_eq!(
        args(Node, "node --test --test-reporter=spec").unwrap(),
        words(
            "--test --test-reporter=/r/gavel-reporter.mjs --test-reporter-destination=/r/node-tests.jsonl \
             --test-reporter-destination=stdout --test-reporter=spec"
        )
    );
    assert!(args(Node, "node --test --test-reporter-destination=x").is_err());
    for (kind, command) in [
        (Node, "npm test"),
        (Node, "npx jest"),
        (Node, "vitest run"),
        (Cargo, "cargo nextest run"),
        (Pytest, "make test"),
        (Pytest, "tox -e py"),
        (Generic, "make test"),
    ] {
        assert!(args(kind, command).is_err(), "{command}");
        assert!(report_format(kind, command).is_err(), "{command}");
    }
    assert_eq!(
        report_format(Pytest, "PYTHONPATH=src pytest"),
        Ok(ReportFormat::PytestJunit)
    );
    assert_eq!(
        report_format(Cargo, "cargo test"),
        Ok(ReportFormat::LibtestLines)
    );
    assert_eq!(report_format(Go, "go test ./..."), Ok(ReportFormat::GoJson));
    assert_eq!(
        report_format(Node, "node --test"),
        Ok(ReportFormat::NodeEvents)
    );
}

/// `pytest -o junit_family=xunit1 --junitxml` on a file with each kind of result.
const JUNIT: &str = r#"<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" errors="1" failures="1" skipped="2" tests="7" time="0.071" timestamp="2026-11-26T23:29:45.993528+00:00" hostname="vm"><testcase classname="tests.test_calc" name="test_add" file="tests/test_calc.py" line="2" time="0.001" /><testcase classname="tests.test_calc" name="test_fail" file="tests/test_calc.py" line="4" time="0.001"><failure message="assert 3 == 4&#10; +  where 3 = add(1, 2)">def test_fail():
&gt;       assert add(1, 2) == 4
E       assert 3 == 4

tests/test_calc.py:6: AssertionError</failure></testcase><testcase classname="tests.test_calc" name="test_skip" file="tests/test_calc.py" line="6" time="0.000"><skipped type="pytest.skip" message="x">/tmp/exp/py/tests/test_calc.py:7: x</skipped></testcase><testcase classname="tests.test_calc" name="test_xf" file="tests/test_calc.py" line="9" time="0.000"><skipped type="pytest.xfail" message="" /></testcase><testcase classname="tests.test_calc.TestK" name="test_p[1]" file="tests/test_calc.py" line="13" time="0.001" /><testcase classname="tests.test_calc.TestK" name="test_p[2]" file="tests/test_calc.py" line="13" time="0.000" /><testcase classname="tests.test_calc" name="test_err" file="tests/test_calc.py" line="19" time="0.000"><error message="failed on setup with &quot;RuntimeError: boom&quot;">@pytest.fixture
tests/test_calc.py:19: RuntimeError</error></testcase></testsuite></testsuites>"#;

/// A collection error: the file is a test case without a class.
const JUNIT_COLLECTION_ERROR: &str = r#"<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" errors="1" failures="0" skipped="0" tests="1" time="0.273" hostname="vm"><testcase classname="" name="tests.test_missing" file="tests/test_missing.py" time="0.000"><error message="collection failure">ImportError while importing test module '/tmp/exp/py/tests/test_missing.py'.
E   ModuleNotFoundError: No module named 'nothere'</error></testcase></testsuite></testsuites>"#;

#[test]
fn pytest_junit_lists_each_test_with_its_file() {
    let list = junit::parse(JUNIT).unwrap();
    assert_eq!(list.format, ReportFormat::PytestJunit);
    assert_eq!(
        ids(&list),
        [
            ("tests/test_calc.py::test_add", TestStatus::Passed),
            ("tests/test_calc.py::test_fail", TestStatus::Failed),
            ("tests/test_calc.py::test_skip", TestStatus::Skipped),
            ("tests/test_calc.py::test_xf", TestStatus::Skipped),
            ("tests/test_calc.py::TestK::test_p[1]", TestStatus::Passed),
            ("tests/test_calc.py::TestK::test_p[2]", TestStatus::Passed),
            ("tests/test_calc.py::test_err", TestStatus::Error),
        ]
    );
    assert!(list.cases.iter().all(|c| c.files == ["tests/test_calc.py"]));
    assert!(list.load_errors.is_empty());

    let list = junit::parse(JUNIT_COLLECTION_ERROR).unwrap();
    assert!(list.cases.is_empty());
    assert_eq!(
        list.load_errors,
        ["tests/test_missing.py did not load (pytest collection error)"]
    );

    // `--collect-only`: a report without tests.
    let list = junit::parse(r#"<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" errors="0" failures="0" skipped="0" tests="0" time="0.042" hostname="vm" /></testsuites>"#).unwrap();
    assert!(list.cases.is_empty() && list.load_errors.is_empty());
}

#[test]
fn a_junit_file_that_is_cut_or_not_junit_is_no_report() {
    let cut = &JUNIT[..JUNIT.len() / 2];
    assert!(junit::parse(cut).is_err(), "cut short");
    assert!(junit::parse("").is_err(), "empty");
    assert!(junit::parse("<html><body/></html>").is_err(), "not JUnit");
    assert!(
        junit::parse("<testsuites><testcase name='a'></testsuite></testsuites>").is_err(),
        "mismatched tags"
    );
    // No DTD is read and no entity but the predefined ones is expanded.
    let entity = r#"<?xml version="1.0"?><!DOCTYPE t [<!ENTITY x SYSTEM "file:///etc/passwd">]><testsuites><testcase classname="a" name="&x;"/></testsuites>"#;
    match junit::parse(entity) {
        Err(_) => {}
        Ok(list) => assert!(
            list.cases.iter().all(|c| !c.id.contains("root:")),
            "{list:?}"
        ),
    }
}

/// `cargo test -- --format=pretty` (no `--quiet`): a unit test binary, an integration test
/// binary with a failure, one that called `std::process::exit(0)` in its first test, and doc
/// tests.
const LIBTEST: &str = "    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.02s
     Running unittests src/lib.rs (target/debug/deps/sample-e6daf73c296d6df0)

running 3 tests
test tests::ign ... ignored, slow
test tests::inner ... ok
test tests::panics - should panic ... ok

test result: ok. 2 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.16s

     Running tests/add.rs (target/debug/deps/add-656a4a9ae5565544)

running 2 tests
test adds ... ok
test fails ... FAILED

failures:

---- fails stdout ----

thread 'fails' (4920) panicked at tests/add.rs:4:14:
assertion `left == right` failed

failures:
    fails

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.18s

error: test failed, to rerun pass `--test add`
     Running tests/exit.rs (target/debug/deps/exit-ec6b9fb9a94cc8af)

running 2 tests
   Doc-tests sample

running 1 test
test src/lib.rs - add (line 1) ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.19s

error: 1 target failed:
    `--test add`
";

#[test]
fn libtest_lines_are_read_binary_by_binary() {
    let list = cargo::parse(LIBTEST);
    assert_eq!(
        ids(&list),
        [
            ("src/lib.rs::tests::ign [sample]", TestStatus::Skipped),
            ("src/lib.rs::tests::inner [sample]", TestStatus::Passed),
            ("src/lib.rs::tests::panics [sample]", TestStatus::Passed),
            ("tests/add.rs::adds [add]", TestStatus::Passed),
            ("tests/add.rs::fails [add]", TestStatus::Failed),
            (
                "doc-tests sample::src/lib.rs - add (line 1)",
                TestStatus::Passed
            ),
        ]
    );
    assert_eq!(
        list.cases[1].files,
        ["src/lib.rs", "src/tests.rs", "src/tests/mod.rs"]
    );
    assert_eq!(list.cases[3].files, ["tests/add.rs"]);
    assert_eq!(list.cases[5].files, ["src/lib.rs"]);
    assert_eq!(
        list.load_errors,
        ["tests/exit.rs (exit) stopped before its summary (0 of 2 tests reported)"]
    );

    // A line a test printed that looks like a result: more results than announced.
    let forged = "     Running tests/a.rs (target/debug/deps/a-0123)\n\nrunning 1 test\ntest b ... ok\ntest a ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s\n";
    let list = cargo::parse(forged);
    assert_eq!(
        list.load_errors,
        ["tests/a.rs (a) announced 1 tests, reported 2 and summed up 1"]
    );
}

#[test]
fn libtest_module_files_follow_rusts_module_layout() {
    assert_eq!(
        cargo::module_files("tests/runners/main.rs", "green::a::it_works"),
        [
            "tests/runners/main.rs",
            "tests/runners/green.rs",
            "tests/runners/green/mod.rs",
            "tests/runners/green/a.rs",
            "tests/runners/green/a/mod.rs",
        ]
    );
    assert_eq!(
        cargo::module_files("tests/add.rs", "adds"),
        ["tests/add.rs"]
    );
}

/// `go test -json ./...` (go 1.19, times removed): a package with a pass, a failure, a skip
/// and a subtest, and a package that does not build.
const GO_JSON: &str = r#"# example.com/calc/sub [example.com/calc/sub.test]
sub/sub_test.go:5:28: undefined: undefined
{"Action":"run","Package":"example.com/calc","Test":"TestAdd"}
{"Action":"output","Package":"example.com/calc","Test":"TestAdd","Output":"=== RUN   TestAdd\n"}
{"Action":"output","Package":"example.com/calc","Test":"TestAdd","Output":"--- PASS: TestAdd (0.00s)\n"}
{"Action":"pass","Package":"example.com/calc","Test":"TestAdd","Elapsed":0}
{"Action":"run","Package":"example.com/calc","Test":"TestFail"}
{"Action":"output","Package":"example.com/calc","Test":"TestFail","Output":"=== RUN   TestFail\n"}
{"Action":"output","Package":"example.com/calc","Test":"TestFail","Output":"    calc_test.go:10: x\n"}
{"Action":"output","Package":"example.com/calc","Test":"TestFail","Output":"--- FAIL: TestFail (0.00s)\n"}
{"Action":"fail","Package":"example.com/calc","Test":"TestFail","Elapsed":0}
{"Action":"run","Package":"example.com/calc","Test":"TestSkip"}
{"Action":"skip","Package":"example.com/calc","Test":"TestSkip","Elapsed":0}
{"Action":"run","Package":"example.com/calc","Test":"TestSub"}
{"Action":"run","Package":"example.com/calc","Test":"TestSub/a_b"}
{"Action":"pass","Package":"example.com/calc","Test":"TestSub/a_b","Elapsed":0}
{"Action":"pass","Package":"example.com/calc","Test":"TestSub","Elapsed":0}
{"Action":"output","Package":"example.com/calc","Output":"FAIL\n"}
{"Action":"output","Package":"example.com/calc","Output":"FAIL\texample.com/calc\t0.002s\n"}
{"Action":"fail","Package":"example.com/calc","Elapsed":0.002}
FAIL	example.com/calc/sub [build failed]
"#;

#[test]
fn go_json_events_are_read_and_the_text_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("go.mod"),
        "module example.com/calc\n\ngo 1.19\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("calc_test.go"),
        "package calc\n\nfunc TestAdd(t *testing.T) {}\nfunc TestFail(t *testing.T) {}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("more_test.go"),
        "package calc\n\nfunc TestSkip(t *testing.T) {}\n\nfunc TestSub(t *testing.T) {}\n",
    )
    .unwrap();
    let (list, text) = go::parse(GO_JSON, dir.path());
    assert_eq!(
        ids(&list),
        [
            ("example.com/calc::TestAdd", TestStatus::Passed),
            ("example.com/calc::TestFail", TestStatus::Failed),
            ("example.com/calc::TestSkip", TestStatus::Skipped),
            ("example.com/calc::TestSub", TestStatus::Passed),
            ("example.com/calc::TestSub/a_b", TestStatus::Passed),
        ]
    );
    let files: Vec<&[String]> = list.cases.iter().map(|c| c.files.as_slice()).collect();
    assert_eq!(
        files,
        [
            &["calc_test.go".to_owned()][..],
            &["calc_test.go".to_owned()],
            &["more_test.go".to_owned()],
            &["more_test.go".to_owned()],
            &["more_test.go".to_owned()],
        ]
    );
    assert_eq!(
        list.load_errors,
        ["package example.com/calc/sub did not build"]
    );
    assert!(text.contains("--- FAIL: TestFail (0.00s)\n"), "{text}");
    assert!(text.contains("FAIL\texample.com/calc\t0.002s\n"), "{text}");
    assert!(text.contains("FAIL\texample.com/calc/sub [build failed]\n"));
    assert!(!text.contains("\"Action\""), "{text}");
}

#[test]
fn go_tests_that_never_end_and_packages_failing_outside_tests_are_load_errors() {
    let out = concat!(
        r#"{"Action":"run","Package":"p","Test":"TestA"}"#,
        "\n",
        r#"{"Action":"output","Package":"p","Output":"FAIL\tp\t0.01s\n"}"#,
        "\n",
        r#"{"Action":"fail","Package":"p","Elapsed":0.01}"#,
        "\n"
    );
    let (list, _) = go::parse(out, Path::new("/nonexistent"));
    assert!(list.cases.is_empty());
    assert_eq!(
        list.load_errors,
        [
            "p::TestA started and never ended (the test binary exited)",
            "package p failed outside its tests (TestMain, an init, or the binary exited)"
        ]
    );
}

fn node_event(kind: &str, name: &str, nesting: usize, extra: &str) -> String {
    format!(
        r#"{{"type":"{kind}","name":"{name}","nesting":{nesting},"file":"/w/calc.test.mjs"{extra}}}"#
    )
}

#[test]
fn node_events_name_files_suites_and_unfinished_tests() {
    let w = "/w/calc.test.mjs";
    let lines = [
        node_event("test:enqueue", w, 0, ""),
        node_event("test:enqueue", "adds", 0, ""),
        node_event("test:enqueue", "skips", 0, ""),
        node_event("test:enqueue", "suite", 0, ""),
        node_event("test:enqueue", "inner", 1, ""),
        node_event("test:enqueue", "never", 0, ""),
        node_event("test:start", "adds", 0, ""),
        node_event("test:pass", "adds", 0, ""),
        node_event("test:start", "skips", 0, ""),
        node_event("test:pass", "skips", 0, r#","skip":true"#),
        node_event("test:start", "suite", 0, ""),
        node_event("test:start", "inner", 1, ""),
        node_event("test:fail", "inner", 1, ""),
        node_event("test:fail", "suite", 0, r#","suite":true"#),
        "not json".to_owned(),
    ];
    let list = node::parse(&lines.join("\n"), Path::new("/w"));
    assert_eq!(
        ids(&list),
        [
            ("calc.test.mjs::adds", TestStatus::Passed),
            ("calc.test.mjs::skips", TestStatus::Skipped),
            ("calc.test.mjs::suite > inner", TestStatus::Failed),
            ("calc.test.mjs::suite", TestStatus::Failed),
        ]
    );
    assert_eq!(list.cases[0].files, ["calc.test.mjs"]);
    assert_eq!(
        list.load_errors,
        ["calc.test.mjs: 1 of 5 tests never finished (its process ended early)"]
    );

    // The file's own test: passing says nothing, failing is a load error.
    let passed = [
        node_event("test:start", w, 0, ""),
        node_event("test:pass", w, 0, ""),
    ];
    let list = node::parse(&passed.join("\n"), Path::new("/w"));
    assert!(list.cases.is_empty() && list.load_errors.is_empty());
    let failed = node_event("test:fail", w, 0, "");
    let list = node::parse(&failed, Path::new("/w"));
    assert_eq!(
        list.load_errors,
        ["calc.test.mjs failed outside its tests (it did not load, or its process failed)"]
    );
}

#[test]
fn repeated_ids_keep_the_worst_status() {
    let case = |status| TestCase {
        id: "a".to_owned(),
        files: Vec::new(),
        status,
    };
    let kept = dedup(vec![
        case(TestStatus::Failed),
        case(TestStatus::Passed),
        case(TestStatus::Skipped),
    ]);
    assert_eq!(kept, [case(TestStatus::Failed)]);
}

#[test]
fn a_report_file_must_be_a_regular_file_under_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let plan = plan_args(Pytest, &words("pytest"), dir.path()).unwrap();
    plan.prepare(dir.path()).unwrap();
    let mut run = crate::process::TestRun {
        exit_code: Some(0),
        signal: None,
        duration: std::time::Duration::ZERO,
        output: String::new(),
        output_omitted: 0,
        timed_out: None,
    };
    let unread = |listing: TestListing| match listing {
        TestListing::Unread { reason } => reason,
        TestListing::Read(list) => panic!("read {list:?}"),
    };
    assert!(unread(plan.read(&mut run, dir.path())).contains("wrote no report"));

    let report = dir.path().join("junit.xml");
    std::os::unix::fs::symlink("/dev/zero", &report).unwrap();
    assert!(unread(plan.read(&mut run, dir.path())).contains("not a regular file"));
    // An earlier run's report (or a planted one) is removed before the run.
    plan.prepare(dir.path()).unwrap();
    assert!(!report.exists() && report.symlink_metadata().is_err());

    std::fs::write(&report, JUNIT).unwrap();
    assert!(plan.read(&mut run, dir.path()).list().is_some());
}

#[test]
fn a_cut_output_is_no_report_for_runners_read_from_it() {
    let plan = plan_args(Cargo, &words("cargo test"), Path::new("/r")).unwrap();
    let mut run = crate::process::TestRun {
        exit_code: Some(0),
        signal: None,
        duration: std::time::Duration::ZERO,
        output: LIBTEST.to_owned(),
        output_omitted: 10,
        timed_out: None,
    };
    match plan.read(&mut run, Path::new("/r")) {
        TestListing::Unread { reason } => assert!(reason.contains("output limit"), "{reason}"),
        TestListing::Read(list) => panic!("read {list:?}"),
    }
}

#[test]
fn go_build_output_events_keep_the_compiler_errors_in_the_text() {
    // Go 1.24 and later report a build's output as `build-output` events in `-json` mode: the
    // red gate reads each error's file and line from the text (see `blame`).
    let out = concat!(
        "{\"ImportPath\":\"example.com/calc [example.com/calc.test]\",\"Action\":\"build-output\",\"Output\":\"# example.com/calc [example.com/calc.test]\\n\"}\n",
        "{\"ImportPath\":\"example.com/calc [example.com/calc.test]\",\"Action\":\"build-output\",\"Output\":\"./calc_test.go:6:5: undefined: Add\\n\"}\n",
        "{\"ImportPath\":\"example.com/calc [example.com/calc.test]\",\"Action\":\"build-fail\"}\n",
        "FAIL\texample.com/calc [build failed]\n",
    );
    let dir = tempfile::tempdir().unwrap();
    let (list, text) = go::parse(out, dir.path());
    assert!(
        text.contains("./calc_test.go:6:5: undefined: Add\n"),
        "{text}"
    );
    assert_eq!(list.load_errors, ["package example.com/calc did not build"]);
}
