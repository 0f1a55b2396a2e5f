//! N2 (red), N4 (green) and N5 (lint): the real commands in the worktree, routed by what the
//! runner's exit means (see `gavel_exec::runners`), never by what a model says.
//!
//! Red: the new tests must fail (or not build, because what they test does not exist yet);
//! tests that pass before any implementation, no tests at all, or tests that do not build or
//! load for a reason of their own (a syntax error in a test file, see
//! `gavel_exec::runners::blame`) send the run back to N1 with the errors. Green: they must
//! pass; anything else goes back to N3 with the output. Lint: a failure goes back to N3 too;
//! no lint command is recorded as skipped, not as passed. A timeout, or a runner that did not
//! run properly (usage or internal error, interrupted, crashed), stops at a gate (`stops.rs`).
//! Each run is journaled (a resumed run does not run it again) and its output goes to the
//! lineage; after red and green the worktree is committed so no generated work is lost.

use gavel_core::ArtifactKind;
use gavel_core::{EventKind, NodeCtx, NodeError, Outside, StepError, Transition};
use gavel_exec::confine::Confinement;
use gavel_exec::git::TreeId;
use gavel_exec::process::ProcessError;
use gavel_exec::runners::{
    RunnerKind, TestCommand, TestOutcome, TestReport, blame, judge_green, report_format,
    run_tests_confined, run_tests_reported,
};

use super::guard::{self, Step};
use super::{CommandSettings, GateRecord, ImplementState, ImplementWorkflow, goto, node};

/// Which command a gate runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Which {
    Red,
    Green,
    Lint,
}

impl Which {
    pub(super) fn name(self) -> &'static str {
        match self {
            Which::Red => "red",
            Which::Green => "green",
            Which::Lint => "lint",
        }
    }
}

impl ImplementWorkflow {
    pub(super) fn red_gate(
        &self,
        s: &mut ImplementState,
        cx: &mut NodeCtx<'_>,
    ) -> Result<Transition, NodeError> {
        if let Some(t) = self.stop_answer(s, cx, Which::Red, node::RED, node::SCAFFOLD)? {
            return Ok(t);
        }
        let (report, record) = self.run_gate(s, cx, Which::Red)?;
        // A test file that does not parse or compile is not red: only errors that name what
        // is not written yet are (see `gavel_exec::runners::blame`).
        let blamed = blame(self.settings.runner, &report, &self.worktree(s)?);
        match &report.outcome {
            // What the tests test does not exist yet: failing, not building, or not importing
            // is the red the seed asks for.
            TestOutcome::BuildFailed if !blamed.is_red() => {
                self.failed_attempt(
                    s,
                    cx,
                    Step::Scaffold,
                    &format!(
                        "the tests do not build or load, and not because the code they test is missing ({}); this is not red, and the implementation step may not change tests: fix these errors in the tests\n{}\n\n{}",
                        report.summary,
                        blamed.describe(),
                        output_tail(&report)
                    ),
                )?;
                goto(node::SCAFFOLD)
            }
            TestOutcome::Failed | TestOutcome::BuildFailed | TestOutcome::MissingImport { .. } => {
                self.milestone(s, cx, "red")?;
                s.red = Some(record);
                s.red_tests = report.tests.clone();
                goto(node::IMPLEMENT)
            }
            TestOutcome::Passed => {
                self.failed_attempt(
                    s,
                    cx,
                    Step::Scaffold,
                    &format!(
                        "the tests pass before any implementation ({}), so they do not test the design: write tests that fail until it is implemented",
                        report.summary
                    ),
                )?;
                goto(node::SCAFFOLD)
            }
            TestOutcome::NoTests => {
                self.failed_attempt(
                    s,
                    cx,
                    Step::Scaffold,
                    &format!("the test command found no tests ({})", report.summary),
                )?;
                goto(node::SCAFFOLD)
            }
            other => Ok(self.cannot_judge(cx, &report, other, Which::Red)),
        }
    }

    pub(super) fn green_gate(
        &self,
        s: &mut ImplementState,
        cx: &mut NodeCtx<'_>,
    ) -> Result<Transition, NodeError> {
        if let Some(t) = self.stop_answer(s, cx, Which::Green, node::GREEN, node::IMPLEMENT)? {
            return Ok(t);
        }
        let (report, record) = self.run_gate(s, cx, Which::Green)?;
        // Where the runner writes a report, green is read per test from it: every test of the
        // red run ran again and passed, the scaffold's tests among them (an `os._exit(0)` or a
        // `--collect-only` exits 0 too).
        if report.outcome == TestOutcome::Passed
            && report_format(self.settings.runner, &self.settings.test.command).is_ok()
        {
            let verdict = judge_green(s.red_tests.as_ref(), &report, &s.scaffold_files);
            if !verdict.is_green() {
                self.failed_attempt(
                    s,
                    cx,
                    Step::Implement,
                    &format!(
                        "the test command exited 0 but the tests did not pass: {}\n\n{}",
                        verdict.reason(),
                        output_tail(&report)
                    ),
                )?;
                return goto(node::IMPLEMENT);
            }
        }
        match &report.outcome {
            TestOutcome::Passed => {
                self.stage.at(super::Moment::Green, self, s, cx)?;
                self.milestone(s, cx, "green")?;
                s.green = Some(record);
                goto(node::LINT)
            }
            TestOutcome::Failed
            | TestOutcome::BuildFailed
            | TestOutcome::NoTests
            | TestOutcome::MissingImport { .. } => {
                self.failed_attempt(
                    s,
                    cx,
                    Step::Implement,
                    &format!(
                        "the tests do not pass yet: {}\n\n{}",
                        report.summary,
                        output_tail(&report)
                    ),
                )?;
                goto(node::IMPLEMENT)
            }
            other => Ok(self.cannot_judge(cx, &report, other, Which::Green)),
        }
    }

    pub(super) fn lint(
        &self,
        s: &mut ImplementState,
        cx: &mut NodeCtx<'_>,
    ) -> Result<Transition, NodeError> {
        if let Some(t) = self.stop_answer(s, cx, Which::Lint, node::LINT, node::IMPLEMENT)? {
            return Ok(t);
        }
        if self.settings.lint.is_none() {
            s.lint = Some(GateRecord {
                artifact: String::new(),
                summary: "skipped: no lint command ([implement] lint)".into(),
            });
            cx.event(EventKind::Note {
                text: "lint skipped: no lint command is configured (not a pass)".into(),
            });
            return goto(self.after_lint(s));
        }
        let (report, record) = self.run_gate(s, cx, Which::Lint)?;
        match &report.outcome {
            TestOutcome::Passed => {
                s.lint = Some(record);
                goto(self.after_lint(s))
            }
            TestOutcome::TimedOut | TestOutcome::Failed => {
                self.failed_attempt(
                    s,
                    cx,
                    Step::Implement,
                    &format!(
                        "the lint command fails: {}\n\n{}",
                        report.summary,
                        output_tail(&report)
                    ),
                )?;
                goto(node::IMPLEMENT)
            }
            other => Ok(self.cannot_judge(cx, &report, other, Which::Lint)),
        }
    }

    /// Runs the gate's command once (journaled) and writes its output to the lineage.
    fn run_gate(
        &self,
        s: &mut ImplementState,
        cx: &mut NodeCtx<'_>,
        which: Which,
    ) -> Result<(TestReport, GateRecord), NodeError> {
        let worktree = self.worktree(s)?;
        let (settings, kind): (&CommandSettings, RunnerKind) = match which {
            Which::Lint => match &self.settings.lint {
                Some(l) => (l, RunnerKind::Generic),
                None => return Err(NodeError::Failed("no lint command".into())),
            },
            _ => (&self.settings.test, self.settings.runner),
        };
        let name = s.worktree_name();
        let home = self.root().join(gavel_exec::git::DEFAULT_WORKTREE_HOME);
        // The tests are untrusted code (a model wrote them, or what they test): boxed like
        // the agent, writing only in the worktree (its `.git` read-only) and a private temp
        // folder that also holds the tool chain's writable caches, without the network unless
        // allowed, and with only the allowlisted environment.
        let (confine, env) = match &self.settings.confine {
            Some(launcher) => {
                let tmp = home.join(format!(".{name}.tmp"));
                std::fs::create_dir_all(&tmp).map_err(|e| super::io_failed("create", &tmp, e))?;
                let mut env = gavel_exec::runners::private_caches(kind, &tmp);
                // The runner writes its report of each test here, outside the worktree.
                let reports = home.join(format!(".{name}.report"));
                std::fs::create_dir_all(&reports)
                    .map_err(|e| super::io_failed("create", &reports, e))?;
                let writable = vec![worktree.clone(), tmp.clone(), reports];
                let tmp = tmp.to_string_lossy().into_owned();
                env.extend([
                    ("TMPDIR".to_owned(), tmp.clone()),
                    ("TMP".to_owned(), tmp.clone()),
                    ("TEMP".to_owned(), tmp),
                ]);
                (
                    Some(Confinement {
                        launcher: launcher.clone(),
                        writable,
                        read_only: vec![worktree.join(".git")],
                        network: self.settings.test_network,
                    }),
                    env,
                )
            }
            None => (None, Vec::new()),
        };
        let cmd = TestCommand {
            kind,
            command: settings.command.clone(),
            cwd: worktree,
            timeout: settings.timeout,
            env,
            env_remove: gavel_exec::sandbox_env::removed_names(&self.settings.pass_env),
        };
        let limit = self.settings.output_limit;
        let cancel = cx.cancel().clone();
        // A gavel killed while it waited leaves the test process group running: its id is in
        // this file, and the next run of the gate kills it before starting again.
        let pid_file = home.join(format!(".{name}.{}.pid", which.name()));
        if let Some(pgid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok())
        {
            if gavel_exec::process::kill_stale_group(pgid, &cmd.cwd) {
                cx.event(EventKind::Note {
                    text: format!(
                        "killed the {} processes (group {pgid}) an interrupted gavel left running",
                        which.name()
                    ),
                });
            }
            let _ = std::fs::remove_file(&pid_file);
        }
        // The worktree before the run, so that what the run itself leaves behind is judged.
        let wt = self.wt_git(s)?;
        if confine.is_none() {
            // Unboxed, the run's code can reach the worktree's git folder: not a spare.
            s.spare_ok = false;
        }
        let mut seen = None;
        let carried = self.carry.take(cx, &s.worktree_name())?;
        let lineage = self.lineage(s)?.rel().display().to_string();
        let before: Result<TreeId, StepError<gavel_exec::git::GitError>> =
            cx.step(&format!("{}-before", which.name()), || {
                let before = super::sweep::before(&wt, self.scratch(), carried, &lineage)?;
                seen = Some(before.ignored);
                Ok(before.tree)
            });
        let before =
            before.map_err(|e| NodeError::Failed(format!("cannot snapshot the worktree: {e}")))?;
        // A replay (the journaled snapshot, the closure not run) looks again.
        let ignored_before = match seen {
            Some(ignored) => ignored,
            None => {
                wt.survey(self.scratch())
                    .map_err(|e| NodeError::Failed(format!("cannot look at the worktree: {e}")))?
                    .ignored
            }
        };
        // The red and green runs write the runner's own report of each test, outside the
        // worktree, for a green read per test rather than from the exit code.
        let report_dir = home.join(format!(".{name}.report"));
        // The command's time is the tests', not gavel's (the run's account, `gavel show`).
        let stopwatch = cx.stopwatch();
        let ran: Result<TestReport, StepError<ProcessError>> = cx.step(which.name(), || {
            let mut on_start = |pid: u32| {
                let _ = crate::fsutil::write_atomic(&pid_file, pid.to_string().as_bytes());
            };
            let report = stopwatch.time(Outside::Tests, || match which {
                Which::Lint => run_tests_confined(
                    &cmd,
                    confine.as_ref(),
                    limit,
                    &|| cancel.is_cancelled(),
                    &mut on_start,
                ),
                Which::Red | Which::Green => run_tests_reported(
                    &cmd,
                    &report_dir,
                    confine.as_ref(),
                    limit,
                    &|| cancel.is_cancelled(),
                    &mut on_start,
                ),
            });
            let _ = std::fs::remove_file(&pid_file);
            report
        });
        let report = match ran {
            Ok(r) => r,
            Err(StepError::Step(ProcessError::Cancelled)) => return Err(NodeError::Cancelled),
            Err(StepError::Step(e)) => {
                return Err(NodeError::Failed(format!(
                    "the {} command `{}` cannot run: {e}",
                    which.name(),
                    settings.command
                )));
            }
            Err(e) => return Err(super::commit::step_failed(e)),
        };
        self.refuse_side_effects(s, cx, &wt, (&before, &ignored_before), which)?;
        let text = super::report_text(&report);
        let artifact = self.artifact(
            s,
            cx,
            ArtifactKind::CheckReport,
            &format!("{}.md", which.name()),
            text.as_bytes(),
        )?;
        cx.event(EventKind::Note {
            text: format!(
                "{} gate: {}{}",
                which.name(),
                report.summary,
                if self.settings.test_network && self.settings.confine.is_some() {
                    " (run with the network allowed: [implement] test_network = true)"
                } else {
                    ""
                }
            ),
        });
        let record = GateRecord {
            artifact,
            summary: report.summary.clone(),
        };
        Ok((report, record))
    }

    /// Puts back what a test or lint run left that no step may leave (a `.git` in any case, a
    /// link out of the worktree, a submodule), naming it in the timeline: the write guard
    /// covers the tests' side effects as well as the model's steps, before any of it can reach
    /// a milestone commit or the merge.
    fn refuse_side_effects(
        &self,
        s: &ImplementState,
        cx: &mut NodeCtx<'_>,
        wt: &gavel_exec::git::Git,
        (before, ignored_before): (&TreeId, &std::collections::BTreeSet<String>),
        which: Which,
    ) -> Result<(), NodeError> {
        let (cleared, survey) =
            super::sweep::after(wt, self.scratch(), ignored_before).map_err(NodeError::Failed)?;
        let mut named: Vec<String> = cleared
            .into_iter()
            .map(|(p, why)| format!("`{p}`: {why}"))
            .collect();
        if !wt.linkage_intact() {
            // Only an unboxed run can reach it (the box binds it read-only); gavel's git never
            // reads it, and it is put back for everyone else's.
            wt.restore_linkage().map_err(|e| {
                NodeError::Failed(format!("cannot restore the worktree's .git: {e}"))
            })?;
            named.push("`.git`: the worktree's link to its repository is gavel's".to_owned());
        }
        // What was removed made the survey stale: look again.
        let ignored_after = survey.as_ref().map(|s| s.ignored.clone());
        let after = match survey {
            Some(survey) => wt.record(survey),
            None => wt.snapshot_with(self.scratch()),
        }
        .map_err(|e| NodeError::Failed(format!("cannot snapshot the worktree: {e}")))?;
        let lineage_prefix = format!("{}/", self.lineage(s)?.rel().display());
        let (lineage_changes, changes): (Vec<_>, Vec<_>) = wt
            .changes(before, &after)
            .map_err(|e| NodeError::Failed(format!("cannot diff the worktree: {e}")))?
            .into_iter()
            .partition(|c| c.path.starts_with(&lineage_prefix));
        let mut refused = guard::refused_side_effects(wt.root(), &changes);
        refused.extend(lineage_changes.into_iter().map(|change| guard::Refused {
            change,
            why: "the run's lineage folder is gavel's record".to_owned(),
        }));
        // A run may not change the tests either (code that rewrites `tests/test_x.py` at import
        // would pass every later run with the same test ids): put back as the model's steps'.
        let globs = &self.settings.test_globs;
        for c in &changes {
            if gavel_exec::runners::is_test_file(&c.path, globs)
                && !refused.iter().any(|r| r.change.path == c.path)
            {
                refused.push(guard::Refused {
                    change: c.clone(),
                    why: "a test or runner configuration file, which only the test-writing step may change".to_owned(),
                });
            }
        }
        if !refused.is_empty() {
            let paths: Vec<String> = refused.iter().map(|r| r.change.path.clone()).collect();
            wt.restore_paths(before, &paths).map_err(|e| {
                NodeError::Failed(format!("cannot put back the tests' side effects: {e}"))
            })?;
            named.extend(
                refused
                    .iter()
                    .map(|r| format!("`{}`: {}", r.change.path, r.why)),
            );
        }
        if named.is_empty()
            && let Some(ignored) = ignored_after
        {
            // The worktree is as `after` records it: the next node's look starts from it.
            self.carry.keep(
                cx,
                &s.worktree_name(),
                super::sweep::Before {
                    tree: after,
                    ignored,
                },
            );
        }
        if !named.is_empty() {
            cx.event(EventKind::Note {
                text: format!(
                    "the {} run left changes no step may make; put back: {}",
                    which.name(),
                    named.join("; ")
                ),
            });
        }
        Ok(())
    }

    /// Commits the worktree (without the lineage) after the red or green milestone.
    fn milestone(
        &self,
        s: &ImplementState,
        cx: &mut NodeCtx<'_>,
        name: &str,
    ) -> Result<(), NodeError> {
        let wt = self.wt_git(s)?;
        let lineage = self.without_lineage(s)?;
        let message = format!("gavel: {name} for {}", s.subject());
        let done: Result<String, StepError<gavel_exec::git::GitError>> =
            cx.step(&format!("commit-{name}"), || {
                wt.run(&["add", "--all", "--", ".", &lineage])?;
                let staged = wt.run(&["diff", "--cached", "--name-only"])?;
                if !staged.trim().is_empty() {
                    wt.run(&["commit", "--quiet", "--no-verify", "-m", &message])?;
                }
                Ok(wt.head()?.unwrap_or_default())
            });
        done.map(|_| ())
            .map_err(|e| NodeError::Failed(format!("cannot commit the {name} milestone: {e}")))
    }
}

/// The end of a run's output, for the model.
pub(super) fn output_tail(report: &TestReport) -> String {
    let Some(run) = report.run.as_ref().or(report.build.as_ref()) else {
        return String::new();
    };
    let lines: Vec<&str> = run.output.lines().collect();
    let start = lines.len().saturating_sub(80);
    format!("```text\n{}\n```", lines[start..].join("\n"))
}
