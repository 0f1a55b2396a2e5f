//! `go test` on a small module without dependencies (Go is installed by `.ci/run` when
//! missing; the module proxy is turned off, nothing is downloaded).

use gavel_exec::runners::{MissingImport, RunnerKind, TestOutcome, TestReport};

use crate::util::{Project, assert_outcome};

fn run(p: &Project) -> TestReport {
    p.run_with(
        "go test ./...",
        &[
            ("GOPROXY", "off"),
            ("GOFLAGS", ""),
            ("GOTOOLCHAIN", "local"),
        ],
        std::time::Duration::from_secs(300),
    )
}

const TEST: &str = "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"1 + 2 != 3\")\n\t}\n}\n";

#[test]
fn passing_failing_no_tests_and_build_errors() {
    let p = Project::new(&[
        ("go.mod", "module example.com/calc\n\ngo 1.19\n"),
        (
            "calc.go",
            "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
        ),
    ]);
    let r = run(&p);
    assert_eq!(r.kind, RunnerKind::Go);
    assert_outcome(&r, &TestOutcome::NoTests);

    p.write(&[("calc_test.go", TEST)]);
    assert_outcome(&run(&p), &TestOutcome::Passed);

    p.write(&[(
        "calc.go",
        "package calc\n\nfunc Add(a, b int) int { return a - b }\n",
    )]);
    let r = run(&p);
    assert_outcome(&r, &TestOutcome::Failed);
    assert!(
        r.summary.starts_with("0 packages ok, 1 failed (go, exit 1"),
        "{}",
        r.summary
    );

    // The function under test does not exist yet: a compile error.
    p.write(&[("calc.go", "package calc\n")]);
    assert_outcome(&run(&p), &TestOutcome::BuildFailed);

    // The test imports a package of the module that does not exist yet.
    p.write(&[
        ("calc.go", "package calc\n\nfunc Add(a, b int) int { return a + b }\n"),
        (
            "calc_test.go",
            "package calc\n\nimport (\n\t\"testing\"\n\n\t\"example.com/calc/util\"\n)\n\nfunc TestTwice(t *testing.T) { util.Twice(Add(1, 2)) }\n",
        ),
    ]);
    assert_outcome(
        &run(&p),
        &TestOutcome::MissingImport {
            missing: vec![MissingImport {
                module: "example.com/calc/util".into(),
                name: None,
            }],
        },
    );
}
