//! Test helpers: running one test of this binary again in a child process whose environment the
//! test chooses (PATH emptied, git variables of a hook set), since a test must not change the
//! environment of the process all tests share.

use std::process::Command;

/// The variable that tells a child test it was started by [`rerun`] (and carries its argument).
pub(crate) const CHILD_VAR: &str = "GAVEL_EXEC_TEST_CHILD";

/// The argument [`rerun`] passed, or `None` when the test runs on its own (then it does
/// nothing: it is ignored by default and only meaningful as a child).
pub(crate) fn child_arg() -> Option<String> {
    std::env::var(CHILD_VAR).ok()
}

/// Runs the ignored test `name` (its full path, e.g. `process::tests::child_x`) of this test
/// binary with `arg` in [`CHILD_VAR`] and the environment changed by `env` (`None` removes a
/// variable); with `clear`, nothing else is inherited. Panics unless it passed.
pub(crate) fn rerun(name: &str, arg: &str, clear: bool, env: &[(&str, Option<&str>)]) {
    let exe = std::env::current_exe().expect("the test binary");
    let mut cmd = Command::new(exe);
    cmd.args([
        name,
        "--exact",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ]);
    if clear {
        cmd.env_clear();
    }
    cmd.env(CHILD_VAR, arg);
    for (key, value) in env {
        match value {
            Some(v) => cmd.env(key, v),
            None => cmd.env_remove(key),
        };
    }
    let out = cmd.output().expect("rerun the test binary");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "the child test {name} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
