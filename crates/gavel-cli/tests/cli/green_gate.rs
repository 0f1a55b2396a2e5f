//! A green that means green (issue 31): code that ends the test run with exit code 0 before
//! the tests ran, or a runner configuration that collects without running, never passes the
//! green gate; the runner's report of each test decides.

use crate::implement::{CODE, TESTS, approve_in_a_terminal, python_project, start};
use crate::util::*;

#[test]
fn regression_os_exit_0_in_the_code_under_test_is_not_green() {
    let exits = "=== gavel:write calc.py\nimport os\nos._exit(0)\n=== gavel:end\n";
    let env = python_project(&[TESTS, exits, CODE]);
    let out = start(&env);
    let text = show_output(&out);
    assert_exit(&out, 3);
    assert!(
        text.contains("the test command exited 0 but the tests did not pass"),
        "{text}"
    );
    assert!(text.contains("green gate: 1 passed"), "{text}");
    approve_in_a_terminal(&env, "1");
    assert_eq!(env.read("calc.py"), "def add(a, b):\n    return a + b\n");
}

#[test]
fn regression_a_runner_configuration_written_by_the_implementation_is_refused() {
    let collect_only = "=== gavel:write pytest.ini\n[pytest]\naddopts = --collect-only\n=== gavel:end\n=== gavel:write conftest.py\nimport pytest\n=== gavel:end\n=== gavel:write calc.py\nx = 1\n=== gavel:end\n";
    let env = python_project(&[TESTS, collect_only, CODE]);
    let out = start(&env);
    let text = show_output(&out);
    assert_exit(&out, 3);
    assert!(
        text.contains("the implementation may not create a test file"),
        "{text}"
    );
    approve_in_a_terminal(&env, "1");
    assert!(!env.exists("pytest.ini") && !env.exists("conftest.py"));
}
