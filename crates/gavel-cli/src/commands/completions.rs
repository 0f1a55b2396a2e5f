//! `gavel completions SHELL`: shell completion scripts, generated from the clap definitions.

use clap::Args;
use clap_complete::Shell;

use crate::error::CliError;
use crate::exit::Exit;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to generate completions for.
    #[arg(value_enum)]
    pub shell: Shell,
}

pub fn cmd_completions(args: &CompletionsArgs) -> Result<Exit, CliError> {
    let mut cmd = crate::commands::command();
    clap_complete::generate(args.shell, &mut cmd, "gavel", &mut std::io::stdout());
    Ok(Exit::Success)
}
