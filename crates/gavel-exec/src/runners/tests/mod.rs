//! Unit tests of the runners: [`classify`] on outputs recorded from the real runners (pytest
//! 9.2, cargo 1.95, node 20, go 1.19), one per row of the module doc's table, and the one-line
//! summaries. Reading command lines and test-file globs is tested in [`commands`], the green
//! verdict and the runners' configuration globs in [`verdict`].

mod blame;
mod commands;
mod verdict;

use std::time::Duration;

use super::*;
use crate::process::Timeout;

fn exited(code: i32, output: &str) -> TestRun {
    TestRun {
        exit_code: Some(code),
        signal: None,
        duration: Duration::from_millis(400),
        output: output.to_owned(),
        output_omitted: 0,
        timed_out: None,
    }
}

fn killed(signal: i32) -> TestRun {
    TestRun {
        exit_code: None,
        signal: Some(signal),
        ..exited(0, "")
    }
}

fn missing(items: &[(&str, Option<&str>)]) -> TestOutcome {
    TestOutcome::MissingImport {
        missing: items
            .iter()
            .map(|(module, name)| MissingImport {
                module: (*module).to_owned(),
                name: name.map(str::to_owned),
            })
            .collect(),
    }
}

use RunnerKind::{Cargo, Generic, Go, Node, Pytest};
use TestOutcome::{
    BuildFailed, Crashed, Failed, InternalError, Interrupted, NoTests, Passed, TimedOut, UsageError,
};

#[test]
fn clocks_and_signals_come_first_for_every_runner() {
    for kind in [Pytest, Cargo, Node, Go, Generic] {
        let mut timed = killed(9);
        timed.timed_out = Some(Timeout::Total);
        assert_eq!(classify(kind, &timed), TimedOut, "{kind:?}");
        assert_eq!(classify(kind, &killed(2)), Interrupted, "{kind:?}");
        assert_eq!(classify(kind, &exited(130, "")), Interrupted, "{kind:?}");
        assert_eq!(classify(kind, &killed(9)), Crashed, "{kind:?}");
        assert_eq!(classify(kind, &killed(11)), Crashed, "{kind:?}");
    }
}

const PYTEST_MISSING_MODULE: &str = "
==================================== ERRORS ====================================
________________________ ERROR collecting test_calc.py _________________________
ImportError while importing test module '/tmp/rs-py/imp/test_calc.py'.
Hint: make sure your test modules/packages have valid Python names.
Traceback:
/root/.pyenv/versions/3.11.7/lib/python3.11/importlib/__init__.py:126: in import_module
    return _bootstrap._gcd_import(name[level:], package, level)
test_calc.py:1: in <module>
    from calc import add
E   ModuleNotFoundError: No module named 'calc'
=========================== short test summary info ============================
ERROR test_calc.py
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
1 error in 0.25s
";

const PYTEST_SYNTAX_ERROR: &str = "
________________________ ERROR collecting test_calc.py _________________________
test_calc.py:1: in <module>
    import calc
E     File \"/tmp/rs-py/coll/calc.py\", line 1
E       def add(a,b) return a+b
E                    ^^^^^^
E   SyntaxError: expected ':'
=========================== short test summary info ============================
ERROR test_calc.py
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
1 error in 0.21s
";

#[test]
fn pytest_exit_codes() {
    let c = |code, out| classify(Pytest, &exited(code, out));
    assert_eq!(c(0, "1 passed in 0.01s\n"), Passed);
    assert_eq!(
        c(
            1,
            "FAILED test_a.py::test_a - assert 1 == 2\n1 failed, 1 passed in 0.03s\n"
        ),
        Failed
    );
    assert_eq!(
        c(
            2,
            "!!!!!!!!!!!! KeyboardInterrupt !!!!!!!!!!!!\n1 passed in 0.39s\n"
        ),
        Interrupted
    );
    assert_eq!(
        c(3, "INTERNALERROR> Traceback (most recent call last):\n"),
        InternalError
    );
    assert_eq!(
        c(
            4,
            "ERROR: usage: python -m pytest [options] [file_or_dir] [file_or_dir] [...]\n\
              python -m pytest: error: unrecognized arguments: --bogus-flag\n"
        ),
        UsageError
    );
    assert_eq!(c(5, "\nno tests ran in 0.00s\n"), NoTests);
    assert_eq!(c(42, ""), InternalError);
}

#[test]
fn pytest_collection_errors_are_missing_imports_or_build_failures() {
    let c = |code, out| classify(Pytest, &exited(code, out));
    assert_eq!(c(2, PYTEST_MISSING_MODULE), missing(&[("calc", None)]));
    assert_eq!(
        c(
            2,
            "ERROR collecting test_a.py\nE   ImportError: cannot import name 'add' from 'calc' (/tmp/rs-py/name/calc.py)\n1 error during collection\n"
        ),
        missing(&[("calc", Some("add"))])
    );
    assert_eq!(
        c(
            2,
            "ERROR collecting test_a.py\nE   ModuleNotFoundError: No module named 'pkg.sub'\nERROR test_a.py - ModuleNotFoundError: No module named 'pkg.sub'\n"
        ),
        missing(&[("pkg.sub", None)])
    );
    assert_eq!(c(2, PYTEST_SYNTAX_ERROR), BuildFailed);
    // One missing module and one syntax error: the code does not load either way.
    let both = format!("{PYTEST_MISSING_MODULE}{PYTEST_SYNTAX_ERROR}");
    assert_eq!(c(2, &both), BuildFailed);
    // A circular import names a module that exists: not missing.
    assert_eq!(
        c(
            2,
            "ERROR collecting t.py\nE   ImportError: cannot import name 'a' from partially initialized module 'm' (most likely due to a circular import) (/x/m.py)\n"
        ),
        BuildFailed
    );
    assert_eq!(
        c(
            4,
            "ImportError while loading conftest '/tmp/rs-py/conf/conftest.py'.\nconftest.py:1: in <module>\n    import myapp\nE   ModuleNotFoundError: No module named 'myapp'\n"
        ),
        missing(&[("myapp", None)])
    );
}

const CARGO_FAILED: &str =
    "     Running unittests src/lib.rs (/tmp/rs-cargo/target/debug/deps/c-d4fd4905425e6bfe)

running 2 tests
test tests::ok ... ok
test tests::adds ... FAILED

failures:
    tests::adds

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.08s

error: test failed, to rerun pass `--lib`
";

const CARGO_NO_TESTS: &str =
    "     Running unittests src/lib.rs (/tmp/rs-cargo/target/debug/deps/c-d4fd4905425e6bfe)

running 0 tests

test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

   Doc-tests c

running 0 tests

test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
";

#[test]
fn cargo_exit_codes() {
    let c = |code, out| classify(Cargo, &exited(code, out));
    let passed = CARGO_NO_TESTS
        .replacen("running 0 tests", "running 1 test", 1)
        .replacen("ok. 0 passed", "ok. 1 passed", 1);
    assert_eq!(c(0, &passed), Passed);
    assert_eq!(c(0, CARGO_NO_TESTS), NoTests);
    assert_eq!(
        c(
            0,
            "test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 3 filtered out"
        ),
        NoTests
    );
    assert_eq!(c(101, CARGO_FAILED), Failed);
    assert_eq!(
        c(
            101,
            "   Compiling c v0.1.0 (/tmp/rs-cargo/c)\nerror: expected expression, found `}`\n\
                error: could not compile `c` (lib) due to 1 previous error\n"
        ),
        BuildFailed
    );
    assert_eq!(
        c(
            101,
            "error: test failed, to rerun pass `--lib`\n\nCaused by:\n  process didn't exit successfully: `/t/c-1` (signal: 11, SIGSEGV: invalid memory reference)\n"
        ),
        Crashed
    );
    assert_eq!(
        c(
            1,
            "error: unexpected argument '--bogus' found\n\nUsage: cargo test [OPTIONS] [TESTNAME] [-- [ARGS]...]\n"
        ),
        UsageError
    );
    assert_eq!(
        c(
            101,
            "error: could not find `Cargo.toml` in `/tmp` or any parent directory\n"
        ),
        UsageError
    );
    assert_eq!(c(7, ""), InternalError);
}

#[test]
fn nextest_exit_codes() {
    let c = |code, out| classify(Cargo, &exited(code, out));
    assert_eq!(
        c(
            0,
            "    Starting 2 tests across 1 binary\n     Summary [   0.01s] 2 tests run: 2 passed, 0 skipped\n"
        ),
        Passed
    );
    assert_eq!(
        c(
            0,
            "    Starting 0 tests across 1 binary\n     Summary [   0.00s] 0 tests run: 0 passed, 0 skipped\n"
        ),
        NoTests
    );
    assert_eq!(c(4, "error: no tests to run\n"), NoTests);
    assert_eq!(
        c(
            100,
            "     Summary [   0.01s] 2 tests run: 1 passed, 1 failed, 0 skipped\nerror: test run failed\n"
        ),
        Failed
    );
    assert_eq!(
        c(
            101,
            "error: could not compile `c` (lib test) due to 1 previous error\n"
        ),
        BuildFailed
    );
    assert_eq!(c(96, "error: setup error\n"), UsageError);
}

const NODE_SYNTAX: &str = "TAP version 13
# file:///tmp/rs-node/syn/a.test.mjs:1
# import test from 'node:test'; test('a', () => { let x = ; });
#                                                         ^
# SyntaxError: Unexpected token ';'
#     at compileSourceTextModule (node:internal/modules/esm/utils:346:16)
# Node.js v20.20.2
# Subtest: /tmp/rs-node/syn/a.test.mjs
not ok 1 - /tmp/rs-node/syn/a.test.mjs
  ---
  duration_ms: 182.736187
  failureType: 'testCodeFailure'
  exitCode: 1
  error: 'test failed'
  code: 'ERR_TEST_FAILURE'
  ...
1..1
# tests 1
# pass 0
# fail 1
";

const NODE_RUNTIME_SYNTAX_ERROR: &str = "TAP version 13
# Subtest: a
not ok 1 - a
  ---
  failureType: 'testCodeFailure'
  error: \"Expected property name or '}' in JSON at position 1\"
  code: 'ERR_TEST_FAILURE'
  name: 'SyntaxError'
  ...
1..1
# tests 1
# pass 0
# fail 1
";

#[test]
fn node_exit_codes() {
    let c = |code, out| classify(Node, &exited(code, out));
    assert_eq!(
        c(
            0,
            "TAP version 13\nok 1 - a\n1..1\n# tests 1\n# pass 1\n# fail 0\n"
        ),
        Passed
    );
    assert_eq!(
        c(0, "TAP version 13\n1..0\n# tests 0\n# suites 0\n# pass 0\n"),
        NoTests
    );
    assert_eq!(c(0, "ℹ tests 0\nℹ pass 0\n"), NoTests);
    assert_eq!(
        c(
            1,
            "not ok 1 - a\n  ---\n  error: '1 == 2'\n  name: 'AssertionError'\n# tests 2\n# pass 1\n# fail 1\n"
        ),
        Failed
    );
    assert_eq!(c(1, NODE_RUNTIME_SYNTAX_ERROR), Failed);
    assert_eq!(c(1, NODE_SYNTAX), BuildFailed);
    assert_eq!(
        c(
            1,
            "# Error [ERR_MODULE_NOT_FOUND]: Cannot find module '/tmp/rs-node/mis/calc.mjs' imported from /tmp/rs-node/mis/a.test.mjs\n#   code: 'ERR_MODULE_NOT_FOUND',\nnot ok 1 - /tmp/rs-node/mis/a.test.mjs\n"
        ),
        missing(&[("/tmp/rs-node/mis/calc.mjs", None)])
    );
    assert_eq!(
        c(
            1,
            "# SyntaxError: The requested module './calc.mjs' does not provide an export named 'add'\nnot ok 1 - /tmp/a.test.mjs\n"
        ),
        missing(&[("./calc.mjs", Some("add"))])
    );
    assert_eq!(
        c(
            1,
            "Error: Cannot find module './calc'\nRequire stack:\n- /tmp/a.test.js\n"
        ),
        missing(&[("./calc", None)])
    );
    // jest
    assert_eq!(
        c(
            1,
            " FAIL  ./a.test.js\n  ● Test suite failed to run\n\n    Cannot find module './calc' from 'a.test.js'\n"
        ),
        missing(&[("./calc", None)])
    );
    assert_eq!(
        c(
            1,
            " FAIL  ./a.test.js\n  ● Test suite failed to run\n\n    Jest encountered an unexpected token\n\n    SyntaxError: /tmp/a.test.js: Unexpected token (1:8)\n"
        ),
        BuildFailed
    );
    assert_eq!(c(1, "No tests found, exiting with code 1\n"), NoTests);
    assert_eq!(c(1, "npm ERR! Missing script: \"test\"\n"), UsageError);
    assert_eq!(c(9, "node: bad option: --bogus\n"), UsageError);
    assert_eq!(c(13, ""), InternalError);
}

#[test]
fn go_exit_codes() {
    let c = |code, out| classify(Go, &exited(code, out));
    assert_eq!(c(0, "ok  \texample.com/pass\t0.002s\n"), Passed);
    assert_eq!(c(0, "?   \texample.com/none\t[no test files]\n"), NoTests);
    assert_eq!(
        c(0, "ok  \texample.com/pass\t0.002s [no tests to run]\n"),
        NoTests
    );
    assert_eq!(
        c(
            0,
            "?   \texample.com/a\t[no test files]\nok  \texample.com/b\t0.002s\n"
        ),
        Passed
    );
    assert_eq!(
        c(
            1,
            "--- FAIL: TestAdd (0.00s)\n    calc_test.go:3: bad\nFAIL\nFAIL\texample.com/fail\t0.002s\nFAIL\n"
        ),
        Failed
    );
    assert_eq!(
        c(
            2,
            "# example.com/undef [example.com/undef.test]\n./calc_test.go:3:33: undefined: Add\nFAIL\texample.com/undef [build failed]\nFAIL\n"
        ),
        BuildFailed
    );
    assert_eq!(
        c(
            1,
            "# example.com/build\ncalc_test.go:3:66: expected '}', found 'EOF'\nFAIL\texample.com/build [setup failed]\nFAIL\n"
        ),
        BuildFailed
    );
    assert_eq!(
        c(
            1,
            "# example.com/m\ncalc_test.go:2:20: no required module provides package example.com/m/util; to add it:\n\tgo get example.com/m/util\nFAIL\texample.com/m [setup failed]\nFAIL\n"
        ),
        missing(&[("example.com/m/util", None)])
    );
    assert_eq!(
        c(
            2,
            "flag needs an argument: -count\nusage: go test [build/test flags] [packages] [build/test flags & test binary flags]\n"
        ),
        UsageError
    );
    assert_eq!(
        c(
            1,
            "flag provided but not defined: -bogus\nUsage of /tmp/go-build1/b001/pass.test:\nFAIL\texample.com/pass\t0.001s\n"
        ),
        UsageError
    );
    assert_eq!(
        c(1, "stat /tmp/rs-go/pass/nope: directory not found\n"),
        UsageError
    );
    assert_eq!(c(3, ""), InternalError);
}

#[test]
fn generic_exit_codes() {
    assert_eq!(classify(Generic, &exited(0, "")), Passed);
    assert_eq!(classify(Generic, &exited(1, "")), Failed);
    assert_eq!(classify(Generic, &exited(2, "")), Failed);
}

#[test]
fn outcomes_serialize_with_an_outcome_tag() {
    let json = |o: &TestOutcome| serde_json::to_string(o).expect("json");
    assert_eq!(json(&NoTests), r#"{"outcome":"no_tests"}"#);
    assert_eq!(
        json(&missing(&[("calc", Some("add"))])),
        r#"{"outcome":"missing_import","missing":[{"module":"calc","name":"add"}]}"#
    );
    let back: TestOutcome =
        serde_json::from_str(r#"{"outcome":"missing_import","missing":[{"module":"m"}]}"#)
            .expect("parse");
    assert_eq!(back, missing(&[("m", None)]));
}

#[test]
fn summaries_name_the_counts_the_runner_and_how_it_ended() {
    let run = exited(1, "FAILED test_a.py::test_a\n1 failed, 1 passed in 0.03s\n");
    assert_eq!(
        summarize(Pytest, &Failed, None, Some(&run)),
        "1 failed, 1 passed (pytest, exit 1, 0.4 s)"
    );
    let run = exited(101, CARGO_FAILED);
    let build = exited(0, "");
    assert_eq!(
        summarize(Cargo, &Failed, Some(&build), Some(&run)),
        "1 passed, 1 failed (cargo, exit 101, 0.8 s)"
    );
    let run = exited(2, PYTEST_MISSING_MODULE);
    assert_eq!(
        summarize(Pytest, &missing(&[("calc", None)]), None, Some(&run)),
        "missing import: calc (pytest, exit 2, 0.4 s)"
    );
    let mut timed = killed(9);
    timed.timed_out = Some(Timeout::Total);
    assert_eq!(
        summarize(Node, &TimedOut, None, Some(&timed)),
        "timed out (node, killed by gavel's clock, 0.4 s)"
    );
    assert_eq!(
        summarize(Cargo, &BuildFailed, Some(&exited(101, "")), None),
        "build failed (--no-run) (cargo, exit 101, 0.4 s)"
    );
}
