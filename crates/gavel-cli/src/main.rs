//! The `gavel` binary: parse arguments, run the command, exit with its code.

fn main() -> std::process::ExitCode {
    gavel_cli::main_entry()
}
