//! `gavel resume RUN [--choice C] [--feedback-file F]`: continue a paused, halted, failed or
//! interrupted run from its last checkpoint. Finished steps are not repeated.
//!
//! Workflow-neutral: the answer is checked against the gate the run waits at, and the run's
//! workflow kind ([`crate::kinds`]) rebuilds the workflow from the run's own state and drives it.

use std::path::PathBuf;

use clap::Args;
use gavel_core::{GateAnswer, RunStatus};

use crate::context::{self, Context};
use crate::driver::open_run;
use crate::error::CliError;
use crate::exit::Exit;
use crate::kinds::{self, Resume};
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
    /// Change a role's provider for the rest of the run, e.g. `--role reviewer=gemini:2.5-pro`
    /// (recorded in the timeline and the next verdict). Without it the run keeps the roles it
    /// started with, whatever gavel.toml says now.
    #[arg(long, value_name = "ROLE=PROVIDER")]
    pub role: Vec<String>,
}

impl ResumeArgs {
    /// Resume `run` as it is, with no answer.
    pub fn of(run: gavel_core::RunId) -> Self {
        Self {
            run: run.to_string(),
            choice: None,
            budget: None,
            feedback_file: None,
            role: Vec::new(),
        }
    }
}

pub fn cmd_resume(args: &ResumeArgs, ctx: Context) -> Result<Exit, CliError> {
    let changes = role_changes(&args.role)?;
    let (store, record) = open_run(&ctx, &args.run)?;
    let run = record.id;
    let kind = kinds::find(&record.workflow)?;
    if let Some((role, _)) = changes
        .iter()
        .find(|(r, _)| !kind.roles().contains(&r.as_str()))
    {
        return Err(CliError::usage(format!(
            "--role {role}=...: `{}` runs have no role `{role}`",
            kind.name()
        ))
        .hint(format!("its roles: {}", kind.roles().join(", "))));
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
        (Some(_), RunStatus::Waiting { gate })
            if gate.present.confirm == gavel_core::Confirm::Word =>
        {
            // A gate confirmed by a typed word (the diff review) has no --choice: the word is
            // typed by a person at a terminal, or nothing is approved.
            return Err(CliError::usage(format!(
                "gate {} is answered only by typing the word at a terminal; --choice does not apply",
                gate.id
            ))
            .hint(format!("run `gavel resume {run}` in a terminal")));
        }
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
    // A run this clone never drove (started in another clone, a shared store): its lineage
    // files come from the store.
    let root = &ctx.settings.repo_root;
    let mark = gavel_workflows::lineage::clone_mark(root);
    let restored = if store.get_write(run, &mark)?.is_some() {
        gavel_workflows::lineage::Restored::default()
    } else {
        gavel_workflows::lineage::restore(&*store, run, root).map_err(|e| match e {
            gavel_workflows::lineage::RestoreError::Store(e) => CliError::from(e),
            other => CliError::error(format!("run {run}: {other}")),
        })?
    };
    if !restored.written.is_empty() {
        ctx.ui.info(&format!(
            "run {run} has lineage files this clone lacked; wrote {} from the store: {}",
            restored.written.len(),
            restored
                .written
                .iter()
                .map(|p| sanitize(&p.display().to_string()))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    kind.resume(Resume {
        ctx,
        store: &*store,
        record: &record,
        answer,
        budget: args.budget,
        roles: changes,
    })
}

/// `--role ROLE=PROVIDER` values, checked before anything happens.
fn role_changes(values: &[String]) -> Result<Vec<(String, String)>, CliError> {
    values
        .iter()
        .map(|v| {
            let bad = || {
                CliError::usage(format!("--role {}: expected ROLE=PROVIDER", sanitize(v)))
                    .hint("for example --role reviewer=gemini:2.5-pro")
            };
            let (role, provider) = v.split_once('=').ok_or_else(bad)?;
            let role = role.trim();
            if role.is_empty() || provider.trim().is_empty() {
                return Err(bad());
            }
            Ok((role.to_owned(), provider.trim().to_owned()))
        })
        .collect()
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
