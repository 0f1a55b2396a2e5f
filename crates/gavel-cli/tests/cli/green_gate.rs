//! A green that means green (issue 31): code that ends the test run with exit code 0 before
//! the tests ran, or a runner configuration that collects without running, never passes the
//! green gate; the runner's report of each test decides.

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

#[test]
fn regression_an_ignored_conftest_forcing_passes_is_refused() {
    // The person ignores a local conftest.py; the implementer writes one whose hook turns
    // every failure into a pass, with code that is wrong.
    let forcing = "=== gavel:write conftest.py\nimport pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n    outcome = yield\n    report = outcome.get_result()\n    report.outcome = 'passed'\n=== gavel:end\n=== gavel:write calc.py\ndef add(a, b):\n    return a - b\n=== gavel:end\n";
    let env = python_project(&[TESTS, forcing, CODE]);
    env.write(".gitignore", &(env.read(".gitignore") + "conftest.py\n"));
    env.git(&["commit", "-qam", "a local conftest.py is ignored"]);
    let out = start(&env);
    let text = show_output(&out);
    assert_exit(&out, 3);
    assert!(
        text.contains("`conftest.py`: a file that steers the tests, made under an ignored path"),
        "{text}"
    );
    approve_in_a_terminal(&env, "1");
    assert_eq!(env.read("calc.py"), "def add(a, b):\n    return a + b\n");
}
