//! `node --test` on a small ES-module project.

use gavel_exec::runners::{MissingImport, RunnerKind, TestOutcome};

use crate::util::{Project, assert_outcome};

const TEST: &str = "import test from 'node:test';\nimport assert from 'node:assert';\nimport { add } from './calc.mjs';\n\ntest('adds', () => assert.equal(add(1, 2), 3));\n";

#[test]
fn passing_failing_no_tests_and_load_errors() {
    let p = Project::new(&[("calc.mjs", "export const add = (a, b) => a + b;\n")]);
    let r = p.run("node --test");
    assert_eq!(r.kind, RunnerKind::Node);
    assert_outcome(&r, &TestOutcome::NoTests);

    p.write(&[("calc.test.mjs", TEST)]);
    let r = p.run("node --test");
    assert_outcome(&r, &TestOutcome::Passed);
    assert!(
        r.summary.starts_with("1 passed (node, exit 0"),
        "{}",
        r.summary
    );

    p.write(&[("calc.mjs", "export const add = (a, b) => a - b;\n")]);
    let r = p.run("node --test");
    assert_outcome(&r, &TestOutcome::Failed);
    assert!(
        r.summary.starts_with("0 passed, 1 failed (node, exit 1"),
        "{}",
        r.summary
    );

    p.write(&[("calc.mjs", "export const add = (a, b) => a +;\n")]);
    let r = p.run("node --test");
    assert_outcome(&r, &TestOutcome::BuildFailed);

    p.write(&[("calc.mjs", "export const sub = (a, b) => a - b;\n")]);
    let r = p.run("node --test");
    assert_outcome(
        &r,
        &TestOutcome::MissingImport {
            missing: vec![MissingImport {
                module: "./calc.mjs".into(),
                name: Some("add".into()),
            }],
        },
    );

    p.remove("calc.mjs");
    let r = p.run("node --test");
    let TestOutcome::MissingImport { missing } = &r.outcome else {
        panic!("a missing module: {r:?}");
    };
    assert_eq!(missing.len(), 1);
    assert!(missing[0].module.ends_with("/calc.mjs"), "{missing:?}");
}
