//! `gavel report RUN --html DIR` (or `--all`): the pages `gavel ui` serves, written as static
//! files a CI job can publish as an artifact. Relative links, no script.

use std::path::PathBuf;

use clap::Args;
use gavel_core::RunId;
use gavel_report::{Site, SiteMode};

use crate::context::Context;
use crate::driver::{open_run, resolve_run};
use crate::error::CliError;
use crate::exit::Exit;
use crate::kinds::ChangeSettings;

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The run to report (id or slug); several may be given.
    #[arg(
        value_name = "RUN",
        required_unless_present = "all",
        conflicts_with = "all"
    )]
    pub runs: Vec<String>,
    /// Report every run of the store.
    #[arg(long)]
    pub all: bool,
    /// Write the pages into this folder (created if missing; pages already there are replaced).
    #[arg(long, value_name = "DIR")]
    pub html: PathBuf,
}

pub fn cmd_report(args: &ReportArgs, ctx: Context) -> Result<Exit, CliError> {
    if args.html.exists() && !args.html.is_dir() {
        return Err(CliError::usage(format!(
            "--html {} exists and is not a folder",
            args.html.display()
        )));
    }
    let (store, ids): (_, Option<Vec<RunId>>) = if args.all {
        (ctx.open_reader("gavel report --all")?, None)
    } else {
        // Every named run is checked before anything is written, on one open store.
        let (first, rest) = args
            .runs
            .split_first()
            .ok_or_else(|| CliError::usage("name a run, or pass --all"))?;
        let (store, record) = open_run(&ctx, first)?;
        let mut ids = vec![record.id];
        for run in rest {
            let id = resolve_run(&*store, run)?;
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        (store.read_only()?, Some(ids))
    };
    let root = ctx
        .settings
        .repo_root
        .join(&ctx.settings.section::<ChangeSettings>().root);
    let read = move || crate::commands::change::status::cards(&root);
    let site = Site::new(&*store, SiteMode::Static).with_changes(&read);
    let written = site
        .export(&args.html, ids.as_deref())
        .map_err(|e| CliError::error(e.to_string()))?;
    let index = args.html.join("index.html");
    ctx.ui.info(&format!(
        "wrote {} files into {}",
        written.len(),
        args.html.display()
    ));
    ctx.ui.out(&index.display().to_string());
    Ok(Exit::Success)
}
