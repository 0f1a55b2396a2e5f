//! Helpers: a sample project in a temp dir, and running a test command in it.

use std::path::Path;
use std::time::Duration;

use gavel_exec::runners::{
    RunnerKind, TestCommand, TestOutcome, TestReport, run_tests, run_tests_reported,
};

/// A sample project in a temp dir, and a folder outside it for runners' reports.
pub struct Project {
    pub dir: tempfile::TempDir,
    pub reports: tempfile::TempDir,
}

impl Project {
    pub fn new(files: &[(&str, &str)]) -> Self {
        let project = Self {
            dir: tempfile::tempdir().expect("a temp dir"),
            reports: tempfile::tempdir().expect("a temp dir for reports"),
        };
        project.write(files);
        project
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes (or replaces) `files`, creating folders.
    pub fn write(&self, files: &[(&str, &str)]) {
        for (name, text) in files {
            let path = self.dir.path().join(name);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).expect("a folder");
            }
            std::fs::write(&path, text).expect("a file");
        }
    }

    pub fn remove(&self, name: &str) {
        std::fs::remove_file(self.dir.path().join(name)).expect("remove a file");
    }

    /// Runs `command` (its runner detected) here with `env` and `timeout`.
    pub fn run_with(&self, command: &str, env: &[(&str, &str)], timeout: Duration) -> TestReport {
        run_tests(&self.command(command, env, timeout), 1 << 20, &|| false)
            .expect("the runner starts")
    }

    /// [`Project::run_with`], asking for the runner's per-test report (written outside the
    /// project, in [`Project::reports`]).
    pub fn run_reported(
        &self,
        command: &str,
        env: &[(&str, &str)],
        timeout: Duration,
    ) -> TestReport {
        let cmd = self.command(command, env, timeout);
        run_tests_reported(
            &cmd,
            self.reports.path(),
            None,
            1 << 20,
            &|| false,
            &mut |_| {},
        )
        .expect("the runner starts")
    }

    fn command(&self, command: &str, env: &[(&str, &str)], timeout: Duration) -> TestCommand {
        TestCommand {
            kind: RunnerKind::detect(command),
            command: command.to_owned(),
            cwd: self.path().to_owned(),
            timeout,
            env: env
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            env_remove: Vec::new(),
        }
    }

    pub fn run(&self, command: &str) -> TestReport {
        self.run_with(command, &[], Duration::from_secs(120))
    }
}

/// Asserts `report` has `outcome`, showing the output otherwise.
#[track_caller]
pub fn assert_outcome(report: &TestReport, outcome: &TestOutcome) {
    let output = |r: &Option<gavel_exec::process::TestRun>| {
        r.as_ref().map(|r| r.output.clone()).unwrap_or_default()
    };
    assert_eq!(
        &report.outcome,
        outcome,
        "{}\n--- build:\n{}\n--- run:\n{}",
        report.summary,
        output(&report.build),
        output(&report.run)
    );
}
