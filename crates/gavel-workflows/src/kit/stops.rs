//! The gates a test or lint run stops at when its result says nothing about the code: it timed
//! out (`test-timeout`), or the runner did not run properly (`test-error`: interrupted, an
//! internal or usage error, a crash; pytest's exits 2, 3 and 4 and their equivalents for
//! cargo, node and go). Both show the runner's summary and the end of its output and offer the
//! same choices: `retry` (run the command again, e.g. after fixing gavel.toml or the project),
//! `back` (to the step that writes the tests before the red gate, to the implementation after
//! it) and `abort`, which ends the run as every abort does (`discard.rs`). At a terminal a
//! person answers; without one the run waits at the gate and prints the commands that go on.

use gavel_core::ArtifactKind;
use gavel_core::{Choice, EventKind, NodeCtx, NodeError, Transition};
use gavel_exec::runners::{TestOutcome, TestReport};

use super::gates::{Which, output_tail};
use super::{ImplementState, ImplementWorkflow};

/// The gate's kind when the run timed out.
pub const TIMEOUT: &str = "test-timeout";
/// The gate's kind when the runner did not run properly.
pub const RUNNER_ERROR: &str = "test-error";

impl ImplementWorkflow {
    /// The gate for a result that says nothing about the code (see the module doc).
    pub(super) fn cannot_judge(
        &self,
        cx: &NodeCtx<'_>,
        report: &TestReport,
        outcome: &TestOutcome,
        which: Which,
    ) -> Transition {
        let back = if which == Which::Red {
            "rewrite the tests"
        } else {
            "revise the implementation"
        };
        let (kind, title) = if *outcome == TestOutcome::TimedOut {
            (TIMEOUT, format!("The {} run timed out", which.name()))
        } else {
            (
                RUNNER_ERROR,
                format!(
                    "The {} command did not run properly ({}): fix [implement] test/lint in gavel.toml or the project, then retry",
                    which.name(),
                    report.summary
                ),
            )
        };
        let mut gate = cx.gate(
            kind,
            title,
            vec![
                Choice::new("retry", 'R', "run the command again"),
                Choice::new("back", 'B', back),
                Choice::new(
                    "abort",
                    'A',
                    "stop; the worktree and branch are removed, the lineage kept",
                ),
            ],
        );
        gate.detail = Some(format!("{}\n{}", report.summary, output_tail(report)));
        Transition::Gate(gate)
    }

    /// The answer to a timeout or runner-error gate of node `here`, if this visit is one.
    /// `retry` visits `here` again (a new visit, so the command runs again rather than its
    /// journaled result being replayed).
    pub(super) fn stop_answer(
        &self,
        s: &mut ImplementState,
        cx: &mut NodeCtx<'_>,
        which: Which,
        here: &str,
        back: &str,
    ) -> Result<Option<Transition>, NodeError> {
        let Some(answer) = cx.answer()? else {
            return Ok(None);
        };
        cx.event(EventKind::GateAnswered {
            gate: answer.gate_id.clone(),
            choice: answer.choice.clone(),
            by: "person".into(),
        });
        // The stopped run's output, written before the gate but not yet in the checkpointed
        // state: recorded again from the journal (same number, same bytes), so a retry's run
        // does not take its file name and an abort or back keeps it.
        let report = cx.journaled::<TestReport>(which.name())?;
        if let Some(r) = &report {
            let text = super::report_text(r);
            self.artifact(
                s,
                cx,
                ArtifactKind::CheckReport,
                &format!("{}.md", which.name()),
                text.as_bytes(),
            )?;
        }
        Ok(match answer.choice.as_str() {
            "retry" => Some(Transition::Goto(here.to_owned())),
            "back" => {
                if let Some(r) = &report {
                    self.sent_back(s, cx, which, r)?;
                }
                Some(Transition::Goto(back.to_owned()))
            }
            _ => Some(self.abandon(
                s,
                cx,
                &format!("aborted by a person at gate {}", answer.gate_id),
            )?),
        })
    }

    /// `back`: the step that runs next is told why (the gate's run, read from this visit's
    /// journal, never run again), without counting an attempt: a person chose it.
    fn sent_back(
        &self,
        s: &mut ImplementState,
        cx: &mut NodeCtx<'_>,
        which: Which,
        report: &TestReport,
    ) -> Result<(), NodeError> {
        let (what, fix) = match (&report.outcome, which) {
            (TestOutcome::TimedOut, Which::Red) => ("timed out", "make the tests finish quickly"),
            (TestOutcome::TimedOut, _) => ("timed out", "make the code finish quickly"),
            (_, Which::Red) => (
                "did not run properly",
                "change the tests or the runner configuration you wrote so that the runner runs them",
            ),
            _ => (
                "did not run properly",
                "change the implementation so that the runner runs the tests",
            ),
        };
        let why = format!(
            "a person sent the run back: the {} command {what} ({}); {fix}\n\n{}",
            which.name(),
            report.summary,
            output_tail(report)
        );
        s.feedback = Some(cx.put_blob(why.as_bytes())?);
        self.artifact(s, cx, ArtifactKind::Feedback, "feedback.md", why.as_bytes())?;
        Ok(())
    }
}
