//! Several runs on one store at once, and a second process trying to drive a locked run.

use std::process::Stdio;

use gavel_llm::Role;

use crate::util::*;

#[test]
fn scenario_160_parallel_workflows_complete_independently() {
    let env = Env::new();
    env.script(&script_with_delay(2, &[REVISE, APPROVED], 50));
    let a = env.brief("alpha");
    let b = env.brief("beta");
    let ca = env
        .gavel(&["issue", &a, "--auto"])
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn a");
    let cb = env
        .gavel(&["issue", &b, "--auto"])
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn b");
    let oa = ca.wait_with_output().expect("wait a");
    let ob = cb.wait_with_output().expect("wait b");
    assert_exit(&oa, 0);
    assert_exit(&ob, 0);
    let mut issues = env.issues();
    issues.sort();
    assert_eq!(issues.len(), 2, "{issues:?}");
    let statuses: Vec<_> = env.runs().iter().map(|r| r["status"].clone()).collect();
    assert_eq!(statuses, ["done", "done"]);
    let subjects = env.git(&["log", "--format=%s"]);
    assert_eq!(
        subjects.matches("gavel: file issue").count(),
        2,
        "{subjects}"
    );
}

#[test]
fn a_second_process_cannot_drive_a_locked_run() {
    let env = Env::new();
    env.script(&script_with_delay(1, &[APPROVED], 3_000));
    let brief = env.brief("dark-mode");
    let child = env
        .gavel(&["issue", &brief, "--auto"])
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let pid = child.id();
    wait_for_call_start(&env, Role::DRAFTER);
    let out = env.run(&["resume", "1"]);
    assert_exit(&out, 1);
    let err = stderr(&out);
    assert!(
        err.contains("being driven by another process") && err.contains(&format!("pid {pid}")),
        "{err}"
    );
    let listed = env.runs();
    assert_eq!(listed[0]["status"], "running");
    let out = child.wait_with_output().expect("wait");
    assert_exit(&out, 0);
}
