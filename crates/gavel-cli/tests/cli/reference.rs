//! The book's generated references (docs/reference/cli.md and configuration.md) are what the
//! code generates now: a flag, choice, default or `gavel.toml` key changed without the pages
//! fails here, with the difference and the command that rewrites them.

use std::path::{Path, PathBuf};

fn docs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/reference")
}

/// Compares `page` with its generated text, or rewrites it when `GAVEL_UPDATE_REFERENCE` is set.
fn check(page: &str, generated: &str) {
    let path = docs().join(page);
    if std::env::var_os("GAVEL_UPDATE_REFERENCE").is_some() {
        std::fs::create_dir_all(docs()).expect("create docs/reference");
        std::fs::write(&path, generated).expect("write the reference");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed == generated {
        return;
    }
    let diff = changed_lines(&committed, generated);
    panic!(
        "docs/reference/{page} is not what the code generates:\n{diff}\nupdate it with:\n  {}",
        gavel_cli::reference::UPDATE_COMMAND
    );
}

/// The lines only one side has, in order (`-` committed, `+` generated).
fn changed_lines(committed: &str, generated: &str) -> String {
    let old: Vec<&str> = committed.lines().collect();
    let new: Vec<&str> = generated.lines().collect();
    let mut out = String::new();
    for line in &old {
        if !new.contains(line) {
            out.push_str(&format!("- {line}\n"));
        }
    }
    for line in &new {
        if !old.contains(line) {
            out.push_str(&format!("+ {line}\n"));
        }
    }
    out
}

#[test]
fn the_command_line_reference_is_up_to_date() {
    check("cli.md", &gavel_cli::reference::cli());
}

#[test]
fn the_configuration_reference_is_up_to_date() {
    check("configuration.md", &gavel_cli::reference::configuration());
}
