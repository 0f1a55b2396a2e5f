//! [`blame`] on build and load errors recorded from the real runners: a syntax or type error
//! in a test file is the tests' own, a missing name is the code under test not written yet.

use std::path::Path;

use super::*;

fn failed_build(kind: RunnerKind, output: &str) -> TestReport {
    let run = exited(2, output);
    TestReport {
        kind,
        outcome: classify(kind, &run),
        build: None,
        run: Some(run),
        summary: "build failed".to_owned(),
        tests: None,
    }
}

fn located(b: &LoadBlame) -> Vec<(Option<String>, Option<u32>)> {
    let (LoadBlame::Unimplemented { errors } | LoadBlame::Tests { errors }) = b;
    errors.iter().map(|e| (e.file.clone(), e.line)).collect()
}

const PYTEST_SYNTAX: &str = "\
==================================== ERRORS ====================================
_____________________ ERROR collecting tests/test_calc.py ______________________
/usr/lib/python3.11/site-packages/_pytest/python.py:528: in importtestmodule
    mod = import_path(
/usr/lib/python3.11/ast.py:50: in parse
    return compile(source, filename, mode, flags,
E     File \"/repo/tests/test_calc.py\", line 3
E       def test_add(:
E                    ^
E   SyntaxError: invalid syntax
=========================== short test summary info ============================
ERROR tests/test_calc.py
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
1 error in 0.34s
";

const PYTEST_NAME_ERROR: &str = "\
==================================== ERRORS ====================================
_____________________ ERROR collecting tests/test_calc.py ______________________
tests/test_calc.py:2: in <module>
    x = undefined_name
        ^^^^^^^^^^^^^^
E   NameError: name 'undefined_name' is not defined
_____________________ ERROR collecting tests/test_more.py ______________________
ImportError while importing test module '/repo/tests/test_more.py'.
E   ModuleNotFoundError: No module named 'calc'
=========================== short test summary info ============================
ERROR tests/test_calc.py - NameError: name 'undefined_name' is not defined
ERROR tests/test_more.py
!!!!!!!!!!!!!!!!!!!! Interrupted: 2 errors during collection !!!!!!!!!!!!!!!!!!!!
";

#[test]
fn a_pytest_syntax_error_is_the_tests_own_with_its_file_and_line() {
    let report = failed_build(Pytest, PYTEST_SYNTAX);
    assert_eq!(report.outcome, BuildFailed);
    let b = blame(Pytest, &report, Path::new("/repo"));
    assert!(!b.is_red());
    assert_eq!(
        located(&b),
        vec![(Some("tests/test_calc.py".to_owned()), Some(3))]
    );
    assert!(
        b.describe()
            .contains("tests/test_calc.py:3: SyntaxError: invalid syntax"),
        "{}",
        b.describe()
    );
}

#[test]
fn a_pytest_exception_at_import_is_the_tests_own_even_beside_a_missing_module() {
    let report = failed_build(Pytest, PYTEST_NAME_ERROR);
    let b = blame(Pytest, &report, Path::new("/repo"));
    assert!(!b.is_red());
    // Only the tests' own error is named: the missing module is the code under test.
    assert_eq!(
        located(&b),
        vec![(Some("tests/test_calc.py".to_owned()), Some(2))]
    );
    assert!(b.describe().contains("NameError"), "{}", b.describe());
}

#[test]
fn rust_missing_functions_and_imports_are_red_a_syntax_or_type_error_is_not() {
    let missing = "\
   Compiling calc v0.1.0 (/repo)
error[E0432]: unresolved import `calc::add`
 --> tests/calc.rs:1:5
  |
1 | use calc::add;
  |     ^^^^^^^^^ no `add` in the root

error[E0425]: cannot find function `mul` in crate `calc`
 --> tests/calc.rs:3:53
  |

Some errors have detailed explanations: E0425, E0432.
error: could not compile `calc` (test \"calc\") due to 2 previous errors
";
    let mut report = failed_build(Cargo, missing);
    report.outcome = BuildFailed;
    let b = blame(Cargo, &report, Path::new("/repo"));
    assert!(b.is_red(), "{b:?}");
    assert_eq!(located(&b).len(), 2);

    let syntax = "\
   Compiling calc v0.1.0 (/repo)
error: expected `;`, found keyword `let`
 --> tests/calc.rs:2:41
  |
error[E0308]: mismatched types
 --> tests/calc.rs:3:14
  |
error[E0425]: cannot find function `mul` in crate `calc`
 --> tests/calc.rs:4:5
error: could not compile `calc` (test \"calc\") due to 3 previous errors
";
    let mut report = failed_build(Cargo, syntax);
    report.outcome = BuildFailed;
    let b = blame(Cargo, &report, Path::new("/repo"));
    assert!(!b.is_red());
    assert_eq!(
        located(&b),
        vec![
            (Some("tests/calc.rs".to_owned()), Some(2)),
            (Some("tests/calc.rs".to_owned()), Some(3))
        ]
    );
}

#[test]
fn go_undefined_names_are_red_a_syntax_error_is_not() {
    let undefined = "# example.com/calc [example.com/calc.test]\n./calc_test.go:6:5: undefined: Add\nFAIL\texample.com/calc [build failed]\n";
    let report = failed_build(Go, undefined);
    assert_eq!(report.outcome, BuildFailed);
    assert!(blame(Go, &report, Path::new("/repo")).is_red());

    let syntax = "# example.com/calc\ncalc_test.go:9:3: expected '}', found 'EOF'\nFAIL\texample.com/calc [setup failed]\n";
    let report = failed_build(Go, syntax);
    assert_eq!(report.outcome, BuildFailed);
    let b = blame(Go, &report, Path::new("/repo"));
    assert!(!b.is_red());
    assert_eq!(
        located(&b),
        vec![(Some("calc_test.go".to_owned()), Some(9))]
    );
}

#[test]
fn a_node_syntax_error_names_the_test_file() {
    let out = "TAP version 13\n# file:///repo/test/calc.test.mjs:4\n# SyntaxError: Unexpected end of input\n#     at compileSourceTextModule (node:internal/modules/esm/utils:346:16)\nnot ok 1 - /repo/test/calc.test.mjs\n";
    let mut report = failed_build(Node, out);
    report.run = Some(exited(1, out));
    report.outcome = classify(Node, report.run.as_ref().expect("run"));
    assert_eq!(report.outcome, BuildFailed);
    let b = blame(Node, &report, Path::new("/repo"));
    assert!(!b.is_red());
    assert_eq!(
        located(&b),
        vec![(Some("test/calc.test.mjs".to_owned()), Some(4))]
    );
}

#[test]
fn errors_that_cannot_be_read_are_not_red() {
    let mut report = failed_build(Cargo, "something went wrong\n");
    report.outcome = BuildFailed;
    let b = blame(Cargo, &report, Path::new("/repo"));
    assert!(!b.is_red());
    assert!(
        b.describe().contains("gavel cannot tell where"),
        "{}",
        b.describe()
    );
    // Other outcomes have nothing to blame.
    let report = failed_build(Pytest, "");
    let mut failing = report.clone();
    failing.outcome = Failed;
    assert!(blame(Pytest, &failing, Path::new("/repo")).is_red());
}
