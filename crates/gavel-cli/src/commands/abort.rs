//! `gavel abort RUN`: stop a run for good. Its lineage stays in `active/` for the record.

use clap::Args;

use crate::context::Context;
use crate::driver::open_run;
use crate::error::CliError;
use crate::exit::Exit;

#[derive(Debug, Args)]
pub struct AbortArgs {
    /// The run's id (or slug).
    pub run: String,
}

pub fn cmd_abort(args: &AbortArgs, ctx: Context) -> Result<Exit, CliError> {
    let (store, record) = open_run(&ctx, &args.run)?;
    let run = record.id;
    if record.status.is_terminal() {
        return Err(CliError::error(format!(
            "run {run} is already {}; there is nothing to abort",
            record.status.name()
        ))
        .hint(format!("`gavel show {run}` shows what it did")));
    }
    // Only the store: aborting builds no providers or tracker and works for every workflow.
    gavel_core::abort_run(
        &*store,
        ctx.clock.as_ref(),
        &ctx.holder(),
        run,
        "aborted by a person (`gavel abort`)",
    )?;
    let cleaned = crate::kinds::find(&record.workflow)
        .ok()
        .and_then(|kind| kind.after_abort(&ctx, &*store, run));
    match cleaned {
        Some(what) => ctx.ui.out(&format!("run {run} aborted; {what}")),
        None => ctx
            .ui
            .out(&format!("run {run} aborted; its lineage stays where it is")),
    }
    Ok(Exit::Success)
}
