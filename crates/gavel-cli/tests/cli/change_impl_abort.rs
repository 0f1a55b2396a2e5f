//! An aborted `gavel change impl` (issue 32) ends as every implementation run ends: worktree
//! and branch removed, lineage kept in `docs/lineage/active/change-ID-impl`, the `STATE.yaml`
//! gavel wrote put back; so the next `gavel change impl` starts without the person running a
//! single git command. Tested for each way a change run is aborted.

use crate::change_impl::{DIR, challenged_change, impl_run, review, script};
use crate::red_gate::assert_cleaned_up;
use crate::util::*;

const BRANCH: &str = "gavel/change-add-calc";
const KEPT: &str = "docs/lineage/active/change-add-calc-impl";

/// The change folder as committed: nothing for the person to commit or clean.
fn assert_change_as_committed(env: &Env) {
    assert_eq!(
        env.git(&["status", "--porcelain", "--untracked-files=all", "--", DIR]),
        "",
        "the change folder is as committed"
    );
    assert!(
        env.read(&format!("{DIR}/STATE.yaml"))
            .contains("phase: challenged")
    );
}

/// A change whose reviewer says MAJOR_ISSUES, then APPROVED on the next run.
fn stopped_at_the_review(env: &Env) {
    script(
        env,
        &[TESTS, CODE],
        &[review("MAJOR_ISSUES", &["Wrong approach"])],
    );
    challenged_change(env);
    let out = impl_run(env);
    assert_exit(&out, 3);
    assert!(
        show_output(&out).contains("--choice fix"),
        "{}",
        show_output(&out)
    );
}

#[test]
fn regression_gavel_abort_at_the_review_stop_lets_the_next_change_impl_start() {
    let env = Env::new();
    stopped_at_the_review(&env);
    assert!(
        env.read(&format!("{DIR}/STATE.yaml"))
            .contains("phase: implementing")
    );
    let out = env.run(&["abort", "1"]);
    assert_exit(&out, 0);
    assert!(show_output(&out).contains(KEPT), "{}", show_output(&out));
    assert_cleaned_up(&env, BRANCH, KEPT);
    assert_change_as_committed(&env);
    let audit = show_output(&env.run(&["audit"]));
    assert!(
        audit.contains("ABORTED") && audit.contains("change-impl"),
        "{audit}"
    );
    // No git command by the person: the next run starts and goes to its review.
    script(&env, &[TESTS, CODE], &[review("APPROVED", &[])]);
    let out = impl_run(&env);
    assert_exit(&out, 3);
    let text = show_output(&out);
    assert!(text.contains("review round 1: APPROVED"), "{text}");
}

#[test]
fn a_reject_at_the_change_diff_gate_cleans_up_and_the_change_starts_again() {
    let env = Env::new();
    script(&env, &[TESTS, CODE], &[review("APPROVED", &[])]);
    challenged_change(&env);
    assert_exit(&impl_run(&env), 3);
    let editor = crate::pty::fake_editor(&env);
    let mut p = crate::pty::spawn(&env, &["resume", "1"], &editor.to_string_lossy());
    p.exp_string("Your choice [approve/reject/P]: ")
        .expect("diff gate");
    p.send_line("reject").expect("reject");
    p.exp_eof().expect("eof");
    assert_cleaned_up(&env, BRANCH, KEPT);
    assert_change_as_committed(&env);
    assert!(
        show_output(&env.run(&["audit"])).contains("REJECTED"),
        "the rejection is in the audit"
    );
    let out = impl_run(&env);
    assert_exit(&out, 3);
    assert!(
        show_output(&out).contains("type one of: approve, reject"),
        "{}",
        show_output(&out)
    );
}

#[test]
fn abort_at_a_change_runs_test_error_gate_cleans_up_and_the_change_starts_again() {
    let env = Env::new();
    let broken = format!(
        "=== gavel:write conftest.py\ndef pytest_collection_modifyitems(items):\n    raise RuntimeError('boom')\n=== gavel:end\n{TESTS}"
    );
    script(&env, &[&broken], &[]);
    challenged_change(&env);
    let out = impl_run(&env);
    assert_exit(&out, 3);
    assert!(
        show_output(&out).contains("did not run properly (internal error"),
        "{}",
        show_output(&out)
    );
    let out = env.run(&["resume", "1", "--choice", "abort"]);
    assert!(show_output(&out).contains(KEPT), "{}", show_output(&out));
    assert_cleaned_up(&env, BRANCH, KEPT);
    assert_change_as_committed(&env);
    script(&env, &[TESTS, CODE], &[review("APPROVED", &[])]);
    assert_exit(&impl_run(&env), 3);
}
