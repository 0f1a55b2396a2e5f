//! `gavel init`: the config, what each workflow kind in the registry asks for (the document
//! kinds' templates, fixed-path review rubrics and folders), and `.gavel/` in `.gitignore`.
//! Existing files are kept, never overwritten.

use std::fs;
use std::path::Path;

use clap::Args;
use gavel_workflows::fsutil::write_atomic;
use gavel_workflows::git::Git;

use crate::error::CliError;
use crate::exit::Exit;
use crate::settings::{CONFIG_FILE, default_config_text};
use crate::ui::Ui;

#[derive(Debug, Args)]
pub struct InitArgs {}

/// What `gavel init` did to one path.
#[derive(Debug, PartialEq, Eq)]
pub enum Action {
    Wrote,
    Kept,
}

pub fn cmd_init(_args: &InitArgs) -> Result<Exit, CliError> {
    let cwd = crate::context::work_dir()?;
    let git = Git::discover(&cwd)
        .map_err(|e| CliError::error(e.to_string()).hint("run `git init` first"))?;
    let ui = Ui::detect();
    for (path, action) in init_repo(git.root())? {
        let verb = match action {
            Action::Wrote => "wrote",
            Action::Kept => "kept ",
        };
        ui.out(&format!("{verb} {path}"));
    }
    ui.out("gavel is ready: write a brief and run `gavel issue BRIEF.md`, then `gavel lld ISSUE`");
    Ok(Exit::Success)
}

/// Sets up `root`; returns what happened to each path.
pub fn init_repo(root: &Path) -> Result<Vec<(String, Action)>, CliError> {
    let mut done = Vec::new();
    // The config, then what each workflow kind in the registry needs.
    let kinds = crate::kinds::all();
    let files = std::iter::once((CONFIG_FILE, default_config_text()))
        .chain(kinds.iter().flat_map(|k| k.init_files()));
    for (rel, text) in files {
        let path = root.join(rel);
        if path.exists() {
            done.push((rel.to_owned(), Action::Kept));
        } else {
            write_atomic(&path, text.as_bytes())
                .map_err(|e| CliError::error(format!("cannot write {rel}: {e}")))?;
            done.push((rel.to_owned(), Action::Wrote));
        }
    }
    for dir in kinds.iter().flat_map(|k| k.init_dirs()) {
        let keep = root.join(dir).join(".gitkeep");
        if keep.parent().is_some_and(Path::is_dir) {
            continue;
        }
        write_atomic(&keep, b"")
            .map_err(|e| CliError::error(format!("cannot create {dir}: {e}")))?;
        done.push((format!("{dir}/"), Action::Wrote));
    }
    let gitignore = root.join(".gitignore");
    let current = match fs::read_to_string(&gitignore) {
        Ok(s) => s,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(CliError::error(format!("cannot read .gitignore: {e}"))),
    };
    if current
        .lines()
        .any(|l| matches!(l.trim(), ".gavel/" | ".gavel" | "/.gavel/" | "/.gavel"))
    {
        done.push((".gitignore".into(), Action::Kept));
    } else {
        let mut text = current;
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str("# gavel's run state (checkpoints, locks)\n.gavel/\n");
        write_atomic(&gitignore, text.as_bytes())
            .map_err(|e| CliError::error(format!("cannot write .gitignore: {e}")))?;
        done.push((".gitignore".into(), Action::Wrote));
    }
    Ok(done)
}
