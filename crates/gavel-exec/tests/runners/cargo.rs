//! `cargo test` on a tiny crate without dependencies (it builds offline), with its own target
//! dir inside the temp dir. One crate goes through every case, so each build is incremental.

use gavel_exec::runners::{RunnerKind, TestOutcome, TestReport};

use crate::util::{Project, assert_outcome};

const MANIFEST: &str = "[package]\nname = \"sample\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[lib]\ndoctest = false\n";

fn run(p: &Project) -> TestReport {
    let target = p.path().join("target");
    let target = target.to_str().expect("a UTF-8 temp path");
    p.run_with(
        "cargo test --offline --quiet",
        &[("CARGO_TARGET_DIR", target), ("RUSTFLAGS", "")],
        std::time::Duration::from_secs(300),
    )
}

#[test]
fn no_tests_passing_failing_and_a_compile_error() {
    let p = Project::new(&[
        ("Cargo.toml", MANIFEST),
        (
            "src/lib.rs",
            "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
        ),
    ]);
    let r = run(&p);
    assert_eq!(r.kind, RunnerKind::Cargo);
    assert_outcome(&r, &TestOutcome::NoTests);
    assert!(
        r.build.as_ref().is_some_and(|b| b.passed()),
        "the build step ran first"
    );

    p.write(&[(
        "tests/add.rs",
        "#[test]\nfn adds() {\n    assert_eq!(sample::add(1, 2), 3);\n}\n",
    )]);
    let r = run(&p);
    assert_outcome(&r, &TestOutcome::Passed);
    assert!(
        r.summary.starts_with("1 passed (cargo, exit 0"),
        "{}",
        r.summary
    );

    p.write(&[(
        "src/lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n",
    )]);
    let r = run(&p);
    assert_outcome(&r, &TestOutcome::Failed);
    assert!(
        r.summary.starts_with("0 passed, 1 failed (cargo, exit 101"),
        "{}",
        r.summary
    );

    // The test calls a function that does not exist yet: a compile error, found by the
    // `--no-run` step before any test runs.
    p.write(&[(
        "tests/add.rs",
        "#[test]\nfn adds() {\n    assert_eq!(sample::add3(1, 2, 3), 6);\n}\n",
    )]);
    let r = run(&p);
    assert_outcome(&r, &TestOutcome::BuildFailed);
    assert!(r.run.is_none(), "nothing ran after the failed build");
    let build = r.build.as_ref().expect("the build step");
    assert!(build.output.contains("add3"), "{}", build.output);
    assert!(
        r.summary
            .starts_with("build failed (--no-run) (cargo, exit 101"),
        "{}",
        r.summary
    );
}

#[test]
fn a_bad_flag_is_a_usage_error() {
    let p = Project::new(&[("Cargo.toml", MANIFEST), ("src/lib.rs", "")]);
    let target = p.path().join("target");
    let r = p.run_with(
        "cargo test --no-such-flag",
        &[("CARGO_TARGET_DIR", target.to_str().expect("utf-8"))],
        std::time::Duration::from_secs(60),
    );
    assert_outcome(&r, &TestOutcome::UsageError);
}
