//! `gavel store migrate --to URL|PATH`: copies every run of this repository's store to another
//! store (the SQLite file to a team's PostgreSQL database, or back), verifies each by its
//! checkpoints, journal, events and blobs, and copies nothing twice when run again.

use clap::{Args, Subcommand};

use crate::context::Context;
use crate::error::CliError;
use crate::exit::Exit;
use crate::store::AnyStore;

#[derive(Debug, Args)]
pub struct StoreArgs {
    #[command(subcommand)]
    pub command: StoreCommand,
}

#[derive(Debug, Subcommand)]
pub enum StoreCommand {
    /// Copy every run of this repository's store to another store, verified; running it again
    /// copies nothing twice.
    Migrate(MigrateArgs),
}

#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// Where to: a PostgreSQL URL (`postgres://user@host/db`; the runs go under this clone's
    /// project) or a SQLite file's path.
    #[arg(long, value_name = "URL|PATH")]
    pub to: String,
}

pub fn cmd_store(args: &StoreArgs, ctx: Context) -> Result<Exit, CliError> {
    match &args.command {
        StoreCommand::Migrate(m) => migrate(m, &ctx),
    }
}

fn migrate(args: &MigrateArgs, ctx: &Context) -> Result<Exit, CliError> {
    let Some(from) = ctx.open_existing_store()? else {
        ctx.ui.out("no runs yet: there is nothing to copy");
        return Ok(Exit::Success);
    };
    let to = AnyStore::open_target(&ctx.settings, &args.to)?;
    if from.describe() == to.describe() {
        return Err(CliError::usage(format!(
            "--to names the store gavel already uses ({}); name another",
            to.describe()
        )));
    }
    let report = gavel_store::copy::copy_runs(&*from, &*to).map_err(|e| match e {
        gavel_store::copy::CopyError::Store(e) => CliError::from(e),
        other => CliError::error(other.to_string())
            .hint("what was copied so far stays; running it again goes on from there"),
    })?;
    let pairs = |list: &[(gavel_core::RunId, gavel_core::RunId)]| {
        list.iter()
            .map(|(a, b)| format!("{a} -> {b}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    ctx.ui.out(&format!(
        "copied {} runs from {} to {}",
        report.copied.len(),
        from.describe(),
        to.describe()
    ));
    if !report.copied.is_empty() {
        ctx.ui.out(&format!(
            "  runs (old id -> new id): {}\n  {} checkpoints, {} events, {} journal entries, {} blobs",
            pairs(&report.copied),
            report.checkpoints,
            report.events,
            report.journal,
            report.blobs
        ));
    }
    if !report.present.is_empty() {
        ctx.ui.out(&format!(
            "  already there (copied before): {}",
            pairs(&report.present)
        ));
    }
    ctx.ui.out(&format!(
        "verified {} runs: the same checkpoints, journals, events, statuses and blobs on both sides",
        report.copied.len() + report.present.len()
    ));
    Ok(Exit::Success)
}
