//! `gavel change archive ID`: start the archive run of a complete change (see
//! `gavel_workflows::change::archive`). Refused before anything is written when the id is
//! bad, the change does not exist, its phase is not `complete`, a task is open, or another
//! run of the same change is unfinished.

use clap::Args;
use gavel_core::Store;
use gavel_workflows::change::ChangeDir;
use gavel_workflows::change::archive::{ArchiveState, ArchiveWorkflow, check_archivable, node};

use crate::context::Context;
use crate::driver::{self, GateMode};
use crate::error::CliError;
use crate::exit::Exit;
use crate::kinds::ChangeSettings;
use crate::ui::sanitize;

#[derive(Debug, Args)]
pub struct ArchiveArgs {
    /// The change's id (`[a-z0-9-]`, at most 64 characters).
    pub id: String,
}

pub fn cmd_archive(args: &ArchiveArgs, ctx: Context) -> Result<Exit, CliError> {
    let dir = change_dir(&ctx, &args.id)?;
    check_archivable(&dir)
        .map_err(|why| CliError::usage(sanitize(&why)).hint("nothing was written"))?;
    let store = ctx.open_store()?;
    refuse_unfinished(&*store, &args.id)?;
    let wf = ArchiveWorkflow {
        repo_root: ctx.settings.repo_root.clone(),
    };
    let mut state = ArchiveState::new(
        gavel_core::random_key(),
        &args.id,
        &ctx.settings
            .section::<ChangeSettings>()
            .root
            .to_string_lossy(),
        ctx.clock.now(),
    );
    state.file_counter = gavel_workflows::lineage::highest_number(&dir.dir().join("lineage"));
    let run = crate::commands::start::start(
        &ctx,
        &*store,
        &wf,
        &state,
        &args.id,
        node::LOAD,
        "another `gavel change archive` of this change started a moment ago; see `gavel runs`",
    )?;
    ctx.ui.info(&format!(
        "run {run} started: archive change `{}` (its specs merged after you approve the diff)",
        args.id
    ));
    driver::drive(&ctx, &*store, &wf, run, None, GateMode::for_ui(&ctx))
}

/// The change `id` under `[changes] root`, or a usage error (bad id, no such change).
pub(super) fn change_dir(ctx: &Context, id: &str) -> Result<ChangeDir, CliError> {
    let root = ctx
        .settings
        .repo_root
        .join(&ctx.settings.section::<ChangeSettings>().root);
    let dir = ChangeDir::new(root, id).map_err(|e| CliError::usage(e.to_string()))?;
    if !dir.dir().is_dir() {
        return Err(CliError::usage(format!(
            "there is no change `{id}` in {}",
            ctx.settings
                .section::<ChangeSettings>()
                .root
                .join("changes")
                .display()
        ))
        .hint("`gavel change list` lists them"));
    }
    Ok(dir)
}

/// Refuses while any change run (plan, impl, archive) of `id` is unfinished: two runs must
/// never move one change's phase at once.
pub(super) fn refuse_unfinished(store: &dyn Store, id: &str) -> Result<(), CliError> {
    if let Some(run) = store
        .runs_with_slug(id, None)?
        .into_iter()
        .rev()
        .find(|r| r.workflow.starts_with("change-") && !r.status.is_terminal())
    {
        return Err(CliError::usage(format!(
            "change `{id}` already has an unfinished {} run ({})",
            run.workflow, run.id
        ))
        .hint(format!(
            "`gavel resume {}` continues it; `gavel abort {}` stops it",
            run.id, run.id
        )));
    }
    Ok(())
}
