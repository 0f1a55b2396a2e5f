//! Unit tests of reading a command line ([`RunnerKind::detect`], the cargo build step's
//! arguments), of runner names and of the test-file globs.

use crate::runners::RunnerKind::{Cargo, Generic, Go, Node, Pytest};
use crate::runners::*;

#[test]
fn detect_reads_the_command_line() {
    let cases = [
        ("pytest -q", Pytest),
        ("python -m pytest tests/", Pytest),
        ("python3 -m pytest", Pytest),
        ("/usr/bin/python3.11 -X dev -m pytest", Pytest),
        ("uv run pytest", Pytest),
        ("PYTHONPATH=src poetry run pytest -x", Pytest),
        ("python -m unittest", Generic),
        ("cargo test", Cargo),
        ("cargo +nightly test -p foo -- --nocapture", Cargo),
        ("cargo nextest run", Cargo),
        ("cargo build", Generic),
        ("node --test", Node),
        ("node --test test/", Node),
        ("node script.js", Generic),
        ("env -i PATH=/bin FOO=1 pytest", Pytest),
        ("deno test", Generic),
        ("npm test", Node),
        ("npm run test", Node),
        ("pnpm test", Node),
        ("npx jest --ci", Node),
        ("jest", Node),
        ("./node_modules/.bin/vitest run", Node),
        ("npx vitest", Node),
        ("go test ./...", Go),
        ("go vet ./...", Generic),
        ("make test", Generic),
        ("", Generic),
        ("'unbalanced", Generic),
    ];
    for (command, kind) in cases {
        assert_eq!(RunnerKind::detect(command), kind, "{command}");
    }
}

#[test]
fn parse_reads_the_config_names() {
    for kind in [Pytest, Cargo, Node, Go, Generic] {
        assert_eq!(RunnerKind::parse(kind.name()), Some(kind));
    }
    assert_eq!(RunnerKind::parse("jest"), None);
}

fn globs(kind: RunnerKind) -> Vec<String> {
    kind.test_globs().iter().map(|g| (*g).to_owned()).collect()
}

#[test]
fn default_globs_match_each_runners_conventions() {
    let cases: &[(RunnerKind, &[&str], &[&str])] = &[
        (
            Pytest,
            &[
                "test_calc.py",
                "src/pkg/test_calc.py",
                "calc_test.py",
                "tests/helpers.py",
                "a/tests/data.json",
                "conftest.py",
            ],
            &[
                "calc.py",
                "src/testing.py",
                "contest.py",
                "test_calc.pyc.txt",
            ],
        ),
        (
            Cargo,
            &[
                "tests/it.rs",
                "crates/x/tests/main.rs",
                "src/tests.rs",
                "src/a/tests.rs",
                "src/parse_test.rs",
                "src/parse_tests.rs",
            ],
            &[
                "src/lib.rs",
                "src/testing.rs",
                "benches/b.rs",
                "src/latest.rs",
            ],
        ),
        (
            Node,
            &[
                "a.test.js",
                "src/b.test.tsx",
                "c.spec.mjs",
                "test/x.js",
                "tests/y.ts",
                "src/__tests__/z.js",
            ],
            &["index.js", "src/testing.js", "a.test.json"],
        ),
        (
            Go,
            &["calc_test.go", "pkg/x/y_test.go", "pkg/testdata/in.txt"],
            &["calc.go", "test.go"],
        ),
        (
            Generic,
            &["tests/a", "test/b/c.sh", "x/tests/y"],
            &["src/main.c", "testing/a"],
        ),
    ];
    for (kind, yes, no) in cases {
        let g = globs(*kind);
        for path in *yes {
            assert!(is_test_file(path, &g), "{kind:?}: {path} is a test file");
        }
        for path in *no {
            assert!(
                !is_test_file(path, &g),
                "{kind:?}: {path} is not a test file"
            );
        }
    }
}

#[test]
fn test_file_globs_are_gitignore_style() {
    let g: Vec<String> = ["/spec/", "*.check.sh", "!tests/fixtures/"]
        .iter()
        .map(|s| (*s).to_owned())
        .chain(std::iter::once("tests/".to_owned()))
        .collect();
    assert!(is_test_file("spec/a.rb", &g), "anchored folder");
    assert!(
        !is_test_file("lib/spec/a.rb", &g),
        "anchored: only at the root"
    );
    assert!(is_test_file("a/b.check.sh", &g));
    assert!(
        is_test_file("/tests/a.py", &g),
        "a leading slash is ignored"
    );
    assert!(is_test_file("./tests/a.py", &g));
    assert!(!is_test_file("", &g));
    // `!glob` excludes: the nearest path that a glob matches decides, whatever the order.
    assert!(!is_test_file("tests/fixtures/x", &g));
    let excluded = vec!["tests/".to_owned(), "!tests/fixtures/".to_owned()];
    assert!(!is_test_file("tests/fixtures/x", &excluded));
    assert!(is_test_file("tests/a.rs", &excluded));
    // An invalid glob matches nothing; the others still work, and `TestFiles::new` reports it.
    let bad = vec!["*.{js".to_owned(), "tests/".to_owned()];
    assert!(is_test_file("tests/a.rs", &bad));
    assert!(TestFiles::new(&bad).is_err());
}

#[test]
fn cargo_builds_with_the_same_arguments_and_no_run() {
    let args = |s: &str| shell_words::split(s).expect("words");
    assert_eq!(
        cargo_build_args(Cargo, "cargo", &args("test -p foo -- --nocapture")),
        Some(args("test -p foo --no-run -- --nocapture"))
    );
    assert_eq!(
        cargo_build_args(Cargo, "cargo", &args("test")),
        Some(args("test --no-run"))
    );
    assert_eq!(cargo_build_args(Cargo, "cargo", &args("nextest run")), None);
    assert_eq!(cargo_build_args(Cargo, "make", &args("test")), None);
    assert_eq!(cargo_build_args(Generic, "cargo", &args("test")), None);
}
