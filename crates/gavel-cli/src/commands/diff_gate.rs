//! `gavel diff-gate`: the review of staged changes that every gavel workflow runs before it
//! commits code (seed 004, in gavel's terms).
//!
//! It analyses the staged changes in one pass (see `gavel-diffgate`), prints the report once
//! (the `--stat` summary, every NEW file with its line count, the counts, and a WARNING banner
//! per flagged file with before/after line counts and the file's diff, capped at 500 lines),
//! and then waits for a person to type `approve`. Anything else but `reject` is asked again;
//! end of input rejects; no answer within the timeout (30 minutes by default) rejects. Nothing
//! skips or pre-answers it, and without a terminal it never approves: it exits at once with its
//! own exit code, leaving the changes staged. Attempts are noticed, warned about and recorded,
//! never obeyed: the hidden flags `--yes`/`-y`, `--auto`, `--force`, `--no-verify`, `--skip`
//! and `--approve`, and `GAVEL_*` variables that look like answers (their names only). Every
//! decision is appended to the team's audit log (`[diff_gate] audit_log`, default
//! `docs/audit/diff-gate.jsonl`: a file to commit, not one `.gitignore` hides).
//!
//! Exempt: gavel's own lineage-only commits (files under the lineage, issues and ideas folders
//! only), which the issue workflow makes without code changes.

use std::io::{BufRead, IsTerminal};
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use clap::Args;
use gavel_diffgate::{AuditEvent, Decision};
use gavel_workflows::git::Git;

use crate::context::{self, Context};
use crate::error::CliError;
use crate::exit::Exit;
use crate::ui::{IN_PROMPT, sanitize};

#[derive(Debug, Args)]
pub struct DiffGateArgs {
    /// Review the staged changes of this worktree instead of the current repository.
    #[arg(long, value_name = "PATH")]
    pub worktree: Option<PathBuf>,

    #[command(flatten)]
    pub bypass: BypassFlags,
}

/// Flags people (and agents) reach for to skip a prompt. Accepted so the attempt can be
/// recorded, hidden from `--help`, and they change nothing: the gate still asks.
#[derive(Debug, Args)]
pub struct BypassFlags {
    #[arg(long, short = 'y', hide = true)]
    yes: bool,
    #[arg(long, hide = true)]
    auto: bool,
    #[arg(long, hide = true)]
    force: bool,
    #[arg(long, hide = true)]
    no_verify: bool,
    #[arg(long, hide = true)]
    skip: bool,
    #[arg(long, hide = true)]
    approve: bool,
}

impl BypassFlags {
    /// The flags given, by their long names (`-y` is `--yes`).
    fn given(&self) -> Vec<String> {
        [
            (self.yes, "--yes"),
            (self.auto, "--auto"),
            (self.force, "--force"),
            (self.no_verify, "--no-verify"),
            (self.skip, "--skip"),
            (self.approve, "--approve"),
        ]
        .into_iter()
        .filter(|(given, _)| *given)
        .map(|(_, name)| name.to_owned())
        .collect()
    }
}

/// Every attempt to skip or pre-answer the gate: the hidden flags, then the `GAVEL_*`
/// variables that look like answers (names only; values are never read).
fn bypass_attempts(flags: &BypassFlags) -> Vec<String> {
    let names: Vec<String> = std::env::vars_os()
        .map(|(name, _)| name.to_string_lossy().into_owned())
        .collect();
    let mut attempts = flags.given();
    attempts.extend(gavel_diffgate::bypass_variables(
        names.iter().map(String::as_str),
    ));
    attempts
}

pub fn cmd_diff_gate(args: &DiffGateArgs, ctx: Context) -> Result<Exit, CliError> {
    let attempts = bypass_attempts(&args.bypass);
    for attempt in &attempts {
        ctx.ui.info(&format!(
            "warning: ignored {}: the diff gate cannot be skipped",
            sanitize(attempt)
        ));
    }
    let git = match &args.worktree {
        Some(p) => Git::discover(&context::absolute(p)).map_err(|e| {
            CliError::error(e.to_string()).hint("--worktree must be a git worktree")
        })?,
        None => Git::at(&ctx.settings.repo_root),
    };
    let repo = git.root().to_path_buf();
    let analysis = gavel_diffgate::analyze_staged(&git).map_err(|e| {
        CliError::from_error(&e).hint("nothing was committed; the changes are still staged")
    })?;
    if analysis.is_empty() {
        ctx.ui
            .out("diff gate: nothing is staged; there is nothing to review");
        return Ok(Exit::Success);
    }
    let flagged: Vec<String> = analysis.flagged().iter().map(|f| f.path.clone()).collect();
    // In the repository gavel runs in (where gavel.toml is), also when --worktree reviews
    // another worktree: the team's log stays in one place.
    let audit_path = ctx.settings.repo_root.join(&ctx.settings.audit_log);
    let (tree, by) = gavel_diffgate::decided_by(&git);
    // A shared store keeps every decision too; one it cannot reach approves nothing.
    let shared = match ctx.settings.backend {
        crate::settings::storage::Backend::Postgres { .. } => ctx.open_existing_store()?,
        crate::settings::storage::Backend::Sqlite => None,
    };
    let audit = |decision: Decision, reason: Option<String>| -> Result<(), CliError> {
        let event = AuditEvent {
            tree: tree.clone(),
            by: by.clone(),
            timestamp: ctx.clock.now_rfc3339(),
            decision,
            flagged_files: flagged.clone(),
            files_changed: analysis.files.len(),
            repo: repo.display().to_string(),
            reason,
            bypass_attempted: !attempts.is_empty(),
            bypass_attempts: attempts.clone(),
        };
        let line = gavel_diffgate::append_audit(&audit_path, &event).map_err(|e| {
            CliError::from_error(&e).hint(
                "nothing was committed; fix the path or set [diff_gate] audit_log in gavel.toml",
            )
        })?;
        if let Some(store) = &shared {
            store.record_audit(&line).map_err(|e| {
                CliError::from(e)
                    .hint("nothing was committed; the team's store must have every decision")
            })?;
        }
        Ok(())
    };

    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    if !interactive {
        audit(
            Decision::AbortedNonInteractive,
            Some("no terminal to approve at".into()),
        )?;
        let what = if flagged.is_empty() {
            String::new()
        } else {
            format!(" ({} flagged: {})", flagged.len(), flagged.join(", "))
        };
        return Err(CliError::error(format!(
            "diff gate: approval needs a person at a terminal{what}; nothing was committed"
        ))
        .hint("the changes are still staged; run `gavel diff-gate` in a terminal to review them")
        .with_exit(Exit::GateNoTerminal));
    }

    let report = gavel_diffgate::report(&git, &analysis).map_err(|e| CliError::from_error(&e))?;
    // The report already says how many files are staged and which are flagged: printed once.
    ctx.ui.out(&report);
    let timeout = ctx.settings.approval_timeout;
    let answers = spawn_reader();
    loop {
        ctx.ui
            .prompt_inline("Type 'approve' to commit these changes, or 'reject' to abort: ");
        IN_PROMPT.store(true, std::sync::atomic::Ordering::SeqCst);
        let answer = answers.recv_timeout(timeout);
        IN_PROMPT.store(false, std::sync::atomic::Ordering::SeqCst);
        match answer {
            Ok(Some(line)) if line.trim() == "approve" => {
                audit(Decision::Approved, None)?;
                ctx.ui.info("approved");
                return Ok(Exit::Success);
            }
            Ok(Some(line)) if line.trim() == "reject" => {
                audit(Decision::Rejected, None)?;
                ctx.ui
                    .info("rejected; nothing was committed, the changes are still staged");
                return Ok(Exit::Rejected);
            }
            Ok(Some(line)) => ctx.ui.info(&format!(
                "`{}` is neither 'approve' nor 'reject'.",
                sanitize(line.trim())
            )),
            Ok(None) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                audit(Decision::Rejected, Some("end of input".into()))?;
                ctx.ui.info(
                    "end of input: rejected; nothing was committed, the changes are still staged",
                );
                return Ok(Exit::Rejected);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let reason = format!("no answer within {}", human(timeout));
                audit(Decision::Rejected, Some(reason.clone()))?;
                ctx.ui.info(&format!(
                    "\n{reason}: rejected; nothing was committed, the changes are still staged"
                ));
                return Ok(Exit::Rejected);
            }
        }
    }
}

/// Lines from stdin on a channel (`None` at end of input), so the wait can time out. Input
/// typed before the question is discarded first.
fn spawn_reader() -> mpsc::Receiver<Option<String>> {
    crate::ui::discard_typeahead();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut lock = stdin.lock();
        loop {
            let mut line = String::new();
            match lock.read_line(&mut line) {
                Ok(0) | Err(_) => {
                    let _ = tx.send(None);
                    return;
                }
                Ok(_) => {
                    if tx.send(Some(line)).is_err() {
                        return;
                    }
                }
            }
        }
    });
    rx
}

fn human(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 && s.is_multiple_of(60) {
        format!("{} minutes", s / 60)
    } else {
        format!("{s} seconds")
    }
}
