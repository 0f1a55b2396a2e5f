//! `gavel resume RUN [--choice C] [--feedback-file F]`: continue a paused, halted, failed or
//! interrupted run from its last checkpoint. Finished steps are not repeated.

use std::path::PathBuf;

use clap::Args;
use gavel_core::{GateAnswer, RunStatus, Store};
use gavel_workflows::issue::WORKFLOW;

use crate::context::{self, Context};
use crate::driver::{self, GateMode, open_run};
use crate::editor;
use crate::error::CliError;
use crate::exit::Exit;
use crate::settings::Overrides;
use crate::ui::sanitize;

#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The run's id (or slug).
    pub run: String,
    /// Answer the gate the run is waiting at (for example `send`, `approve`, `revise`).
    #[arg(long, value_name = "CHOICE")]
    pub choice: Option<String>,
    /// A new budget for the run (USD), e.g. after it halted on its budget.
    #[arg(long, value_name = "USD")]
    pub budget: Option<f64>,
    /// Feedback for a choice that takes it (revise), from a file.
    #[arg(long, value_name = "FILE", requires = "choice")]
    pub feedback_file: Option<PathBuf>,
}

pub fn cmd_resume(args: &ResumeArgs, state_dir: Option<PathBuf>) -> Result<Exit, CliError> {
    let ctx = Context::load(&Overrides {
        state_dir,
        budget: args.budget,
        ..Overrides::default()
    })?;
    let (store, record) = open_run(&ctx, &args.run)?;
    let run = record.id;
    if record.workflow != WORKFLOW {
        return Err(CliError::error(format!(
            "run {run} is a `{}` run, which this gavel cannot drive",
            record.workflow
        )));
    }
    if record.status.is_terminal() {
        return Err(CliError::error(format!(
            "run {run} is already {}; there is nothing to resume",
            record.status.name()
        ))
        .hint(format!("`gavel show {run}` shows what it did")));
    }
    let feedback = match &args.feedback_file {
        Some(p) => Some(read_feedback(&context::absolute(p))?),
        None => None,
    };
    let answer = match (&args.choice, &record.status) {
        (Some(choice), RunStatus::Waiting { gate }) => {
            let c = gate.choice(choice).ok_or_else(|| {
                CliError::usage(format!(
                    "`{}` is not a valid answer at gate {}",
                    sanitize(choice),
                    gate.id
                ))
                .hint(format!("valid answers: {}", gate.choice_names().join(", ")))
            })?;
            if feedback.is_some() && !c.takes_feedback {
                return Err(CliError::usage(format!(
                    "--feedback-file does not apply to `{}`",
                    c.name
                )));
            }
            Some(GateAnswer {
                gate_id: gate.id.clone(),
                choice: c.name.clone(),
                feedback,
            })
        }
        (Some(_), status) => {
            return Err(CliError::usage(format!(
                "run {run} is not waiting at a gate (it is {}); resume it without --choice",
                status.name()
            )));
        }
        (None, _) => None,
    };
    let auto = auto_mode(&store, run)?;
    let editor_program = if auto || !ctx.ui.interactive() {
        None
    } else {
        editor::resolve()?.into_iter().next()
    };
    let wf = ctx.issue_workflow(editor_program);
    driver::drive(&ctx, &store, &wf, run, answer, GateMode::for_ui(&ctx))
}

fn auto_mode(store: &dyn Store, run: gavel_core::RunId) -> Result<bool, CliError> {
    let Some(head) = store.head(run)? else {
        return Ok(false);
    };
    let value: serde_json::Value = serde_json::from_slice(&head.state).unwrap_or_default();
    Ok(value
        .get("auto")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false))
}

fn read_feedback(path: &std::path::Path) -> Result<String, CliError> {
    let bytes = std::fs::read(path).map_err(|e| {
        CliError::error(format!("cannot read feedback file {}: {e}", path.display()))
    })?;
    String::from_utf8(bytes).map_err(|_| {
        CliError::error(format!(
            "feedback file {} is not valid UTF-8",
            path.display()
        ))
    })
}
