//! The book's two references, generated from the code so they cannot drift: the command line
//! (docs/reference/cli.md) from clap's definition of every command, and `gavel.toml`
//! (docs/reference/configuration.md) from the settings' descriptions
//! ([`crate::settings::reference`]). tests/cli/reference.rs compares them with the committed
//! pages and rewrites them when asked (`GAVEL_UPDATE_REFERENCE=1`).

use std::fmt::Write as _;

/// How to bring the committed pages up to date.
pub const UPDATE_COMMAND: &str =
    "GAVEL_UPDATE_REFERENCE=1 cargo test -p gavel-cli --test cli reference";

/// The `gavel.toml` reference page.
pub fn configuration() -> String {
    crate::settings::reference::markdown()
}

/// The command-line reference page: every command and subcommand gavel shows in `--help`,
/// with its arguments, flags, choices, defaults and variables. Hidden ones (the agent
/// launcher `__confine`, flags kept only to be refused) are left out.
pub fn cli() -> String {
    let mut cmd = crate::commands::command();
    cmd.build();
    let mut out = String::from(
        "# Command-line reference\n\n\
         <!-- Generated from the clap definitions in crates/gavel-cli/src/commands; do not edit.\n\
         Update with GAVEL_UPDATE_REFERENCE=1 cargo test -p gavel-cli --test cli reference -->\n\n\
         Every command, its arguments and flags, as `gavel help` knows them. `gavel COMMAND\n\
         --help` prints the same for one command; the exit codes are at the end of `gavel`'s\n\
         own entry.\n",
    );
    command(&mut out, &cmd, "gavel");
    while out.contains("\n\n\n") {
        out = out.replace("\n\n\n", "\n\n");
    }
    out
}

fn command(out: &mut String, cmd: &clap::Command, path: &str) {
    let level = path.matches(' ').count().min(2) + 1;
    let _ = write!(out, "\n{} `{path}`\n\n", "#".repeat(level + 1));
    if let Some(about) = cmd.get_long_about().or(cmd.get_about()) {
        let _ = write!(out, "{}\n\n", text(&about.to_string()));
    }
    let usage = cmd.clone().render_usage().to_string();
    let usage = usage.trim_start_matches("Usage: ").trim();
    let _ = write!(out, "```text\n{usage}\n```\n\n");

    let subcommands: Vec<&clap::Command> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        .collect();
    if !subcommands.is_empty() {
        out.push_str("| command | what it does |\n|---|---|\n");
        for sub in &subcommands {
            let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
            let _ = writeln!(
                out,
                "| [`{}`](#{}) | {} |",
                sub.get_name(),
                anchor(&format!("{path} {}", sub.get_name())),
                cell(&about)
            );
        }
        out.push('\n');
    }

    let args: Vec<&clap::Arg> = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set())
        .filter(|a| !(a.is_global_set() && path != "gavel"))
        .filter(|a| !matches!(a.get_id().as_str(), "help" | "version"))
        .collect();
    if !args.is_empty() {
        out.push_str("| argument | meaning | default | values |\n|---|---|---|---|\n");
        for arg in args {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                arg_name(arg),
                cell(&arg_help(arg)),
                default(arg),
                values(arg)
            );
        }
        out.push('\n');
    }
    if path == "gavel" {
        out.push_str(
            "`--help` (`-h`) and `--version` (`-V`) work everywhere; `--state-dir` and `--repo` \
             are accepted after any command too.\n\n",
        );
    }
    if let Some(after) = cmd.get_after_long_help().or(cmd.get_after_help()) {
        let _ = write!(out, "```text\n{}\n```\n", after.to_string().trim_end());
    }
    for sub in subcommands {
        command(out, sub, &format!("{path} {}", sub.get_name()));
    }
}

/// `--flag <VALUE>`, `-f`, `<ARG>` or `[ARG]...`, in code.
fn arg_name(arg: &clap::Arg) -> String {
    let value_names: Vec<String> = arg
        .get_value_names()
        .map(|v| v.iter().map(|n| format!("<{n}>")).collect())
        .unwrap_or_else(|| vec![format!("<{}>", arg.get_id().as_str().to_uppercase())]);
    let takes_value = arg.get_action().takes_values();
    if arg.is_positional() {
        let mut name = value_names.join(" ");
        if !arg.is_required_set() {
            name = format!("[{}]", name.trim_start_matches('<').trim_end_matches('>'));
        }
        if matches!(arg.get_num_args(), Some(r) if r.max_values() > 1) {
            name.push_str("...");
        }
        return format!("`{name}`");
    }
    let mut names = Vec::new();
    if let Some(long) = arg.get_long() {
        names.push(format!("--{long}"));
    }
    if let Some(short) = arg.get_short() {
        names.push(format!("-{short}"));
    }
    let mut shown = names.join(", ");
    if takes_value {
        shown.push(' ');
        shown.push_str(&value_names.join(" "));
    }
    let mut shown = format!("`{}`", shown.replace('|', "\\|"));
    if arg.is_required_set() {
        shown.push_str(" (required)");
    }
    shown
}

fn arg_help(arg: &clap::Arg) -> String {
    let mut help = arg
        .get_long_help()
        .or(arg.get_help())
        .map(|h| h.to_string())
        .unwrap_or_default();
    if let Some(env) = arg.get_env() {
        let _ = write!(help, " (variable `{}`)", env.to_string_lossy());
    }
    if matches!(arg.get_action(), clap::ArgAction::Append) && !help.contains("repeatable") {
        help.push_str(" (repeatable)");
    }
    help
}

fn default(arg: &clap::Arg) -> String {
    if !arg.get_action().takes_values() {
        return String::new();
    }
    let defaults: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|v| format!("`{}`", v.to_string_lossy()))
        .collect();
    if defaults.is_empty() {
        String::new()
    } else {
        defaults.join(", ")
    }
}

fn values(arg: &clap::Arg) -> String {
    if !arg.get_action().takes_values() {
        return String::new();
    }
    arg.get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| match v.get_help() {
            Some(help) => format!("`{}` ({})", v.get_name(), cell(&help.to_string())),
            None => format!("`{}`", v.get_name()),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The anchor mdBook gives a heading of `title` in code: lower case, spaces to dashes.
fn anchor(title: &str) -> String {
    title
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// Help text as a paragraph: `<` outside code spans escaped, so `<ID>` is not read as HTML.
fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_code = false;
    for c in s.trim().chars() {
        match c {
            '`' => {
                in_code = !in_code;
                out.push(c);
            }
            '<' if !in_code => out.push_str("&lt;"),
            '>' if !in_code => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// Help text for a table cell: one line, `|` escaped.
fn cell(s: &str) -> String {
    text(s)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}
