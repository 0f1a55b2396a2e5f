//! Opening files in the person's editor and waiting for it to close.
//!
//! The editor is `$VISUAL`, else `$EDITOR`, else `code --wait` when VS Code's CLI is installed,
//! else `vi`. Commands with arguments (`code --wait`, `emacsclient -t`) are split with shell
//! rules, and the files are appended.

use std::path::Path;
use std::process::Command;

use gavel_workflows::which::find_program;

use crate::error::CliError;

/// The editor command line (program and arguments).
pub fn resolve() -> Result<Vec<String>, CliError> {
    for var in ["VISUAL", "EDITOR"] {
        let Ok(value) = std::env::var(var) else {
            continue;
        };
        if value.trim().is_empty() {
            continue;
        }
        let words = shell_words::split(&value)
            .map_err(|e| CliError::usage(format!("${var} ({value:?}) cannot be parsed: {e}")))?;
        if !words.is_empty() {
            return Ok(words);
        }
    }
    if find_program("code").is_some() {
        return Ok(vec!["code".into(), "--wait".into()]);
    }
    Ok(vec!["vi".into()])
}

/// Opens `files` (relative to `dir`) and waits for the editor to exit.
pub fn open(editor: &[String], dir: &Path, files: &[&str]) -> Result<(), CliError> {
    let Some((program, args)) = editor.split_first() else {
        return Err(CliError::usage("no editor configured"));
    };
    let status = Command::new(program)
        .args(args)
        .args(files)
        .current_dir(dir)
        .status()
        .map_err(|e| {
            CliError::error(format!("cannot start editor `{program}`: {e}"))
                .hint("set $VISUAL or $EDITOR")
        })?;
    if !status.success() {
        return Err(CliError::error(format!(
            "editor `{}` exited with {status}",
            editor.join(" ")
        )));
    }
    Ok(())
}
