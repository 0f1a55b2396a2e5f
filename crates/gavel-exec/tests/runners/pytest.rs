//! pytest on a small Python project: each outcome the gates tell apart.

use std::time::{Duration, Instant};

use gavel_exec::runners::{MissingImport, RunnerKind, TestOutcome};

use crate::util::{Project, assert_outcome};

const CALC: &str = "def add(a, b):\n    return a + b\n";

fn project() -> Project {
    // No cache folder left behind in the sample, no bytecode: each case sees its own files.
    Project::new(&[("pytest.ini", "[pytest]\naddopts = -p no:cacheprovider\n")])
}

#[test]
fn passing_failing_and_no_tests() {
    let p = project();
    p.write(&[("calc.py", CALC)]);
    let r = p.run("python3 -m pytest -q");
    assert_eq!(r.kind, RunnerKind::Pytest);
    assert_outcome(&r, &TestOutcome::NoTests);
    assert!(r.summary.contains("exit 5"), "{}", r.summary);

    p.write(&[(
        "test_calc.py",
        "from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n\ndef test_more():\n    assert add(2, 2) == 4\n",
    )]);
    let r = p.run("python3 -m pytest -q");
    assert_outcome(&r, &TestOutcome::Passed);
    assert!(
        r.summary.starts_with("2 passed (pytest, exit 0"),
        "{}",
        r.summary
    );

    p.write(&[("calc.py", "def add(a, b):\n    return a - b\n")]);
    let r = p.run("pytest -q");
    assert_outcome(&r, &TestOutcome::Failed);
    assert!(
        r.summary.starts_with("2 failed (pytest, exit 1"),
        "{}",
        r.summary
    );
    assert!(r.build.is_none());
}

#[test]
fn a_missing_module_under_test_is_a_missing_import() {
    let p = project();
    p.write(&[(
        "test_calc.py",
        "from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    )]);
    let r = p.run("python3 -m pytest -q");
    assert_outcome(
        &r,
        &TestOutcome::MissingImport {
            missing: vec![MissingImport {
                module: "calc".into(),
                name: None,
            }],
        },
    );
    assert!(
        r.summary
            .starts_with("missing import: calc (pytest, exit 2"),
        "{}",
        r.summary
    );

    // The module exists but not the function: still missing, with its name.
    p.write(&[("calc.py", "def sub(a, b):\n    return a - b\n")]);
    let r = p.run("python3 -m pytest -q");
    assert_outcome(
        &r,
        &TestOutcome::MissingImport {
            missing: vec![MissingImport {
                module: "calc".into(),
                name: Some("add".into()),
            }],
        },
    );

    // A syntax error in the code under test: it does not load, which is not the right reason.
    p.write(&[("calc.py", "def add(a, b) return a + b\n")]);
    let r = p.run("python3 -m pytest -q");
    assert_outcome(&r, &TestOutcome::BuildFailed);
}

#[test]
fn a_bad_flag_is_a_usage_error() {
    let p = project();
    p.write(&[("test_a.py", "def test_a():\n    pass\n")]);
    let r = p.run("python3 -m pytest --no-such-flag");
    assert_outcome(&r, &TestOutcome::UsageError);
}

#[test]
fn leading_assignments_and_env_reach_the_runner() {
    let p = project();
    p.write(&[
        ("src/calc.py", CALC),
        (
            "tests/test_calc.py",
            "import os\nfrom calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n    assert os.environ['GAVEL_SAMPLE'] == 'yes'\n",
        ),
    ]);
    let r = p.run_with(
        "PYTHONPATH=src python3 -m pytest -q tests",
        &[("GAVEL_SAMPLE", "yes")],
        Duration::from_secs(120),
    );
    assert_outcome(&r, &TestOutcome::Passed);
}

#[test]
fn a_hanging_test_times_out_and_its_process_group_is_gone() {
    let p = project();
    let pidfile = p.path().join("child.pid");
    p.write(&[(
        "test_hang.py",
        &format!(
            "import os, subprocess, time\n\n\
             def test_hang():\n    \
             child = subprocess.Popen(['sleep', '60'])\n    \
             open({pidfile:?}, 'w').write(str(child.pid))\n    \
             time.sleep(60)\n"
        ),
    )]);
    let started = Instant::now();
    let r = p.run_with("python3 -m pytest -q", &[], Duration::from_secs(3));
    assert_outcome(&r, &TestOutcome::TimedOut);
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    assert!(
        r.summary.contains("killed by gavel's clock"),
        "{}",
        r.summary
    );
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .expect("the test wrote its child's pid")
        .trim()
        .parse()
        .expect("a pid");
    assert!(
        gone(pid, Duration::from_secs(3)),
        "the test's child {pid} was killed too"
    );
}

/// Whether process `pid` is gone (or a zombie), waiting up to `within`.
fn gone(pid: i32, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    loop {
        let dead = match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => stat
                .rsplit(')')
                .next()
                .is_some_and(|rest| matches!(rest.trim_start().chars().next(), Some('Z' | 'X'))),
        };
        if dead {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
