//! `gavel-bench context PATH... [--repo DIR]`: times the context validator (`--context` of
//! `gavel lld` and `gavel implement`) on its own, in process, so `bench/real-size.sh` can put
//! it next to `rg --files` on the same tree without counting gavel's start-up or anything the
//! commands do after the validation.
//!
//! Prints `files=N passed=P refused=R ms=X files_per_s=Y`: N is every file the validator looked
//! at (those that passed and those refused, each once), R the refused ones. The default
//! `[context]` settings apply, as in a repository without a `[context]` table.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Instant;

use gavel_context::ContextSettings;

/// Parses the arguments, validates, and says how long it took.
pub fn run(args: &[String]) -> Result<String, String> {
    let usage = "context PATH... [--repo DIR]";
    let mut repo = None;
    let mut paths = Vec::new();
    let mut rest = args.iter().skip(1);
    while let Some(arg) = rest.next() {
        if arg == "--repo" {
            repo = Some(PathBuf::from(rest.next().ok_or(usage)?));
        } else {
            paths.push(PathBuf::from(arg));
        }
    }
    if paths.is_empty() {
        return Err(usage.into());
    }
    let cwd = std::env::current_dir().map_err(|e| format!("the current folder: {e}"))?;
    let repo = repo.unwrap_or_else(|| cwd.clone());
    let started = Instant::now();
    let result = gavel_context::validate(&repo, &cwd, &paths, &ContextSettings::default());
    let elapsed = started.elapsed();
    let (passed, refused) = match &result {
        Ok(context) => (context.files.len(), BTreeSet::new()),
        Err(e) => (
            0,
            // A file refused by several rules (secrets on two lines) counts once; the token
            // budget's refusal names no file.
            e.refusals
                .iter()
                .filter(|r| !r.path.is_empty())
                .map(|r| r.path.as_str())
                .collect(),
        ),
    };
    let files = match &result {
        Ok(_) => passed,
        Err(e) => e.files,
    };
    let secs = elapsed.as_secs_f64();
    Ok(format!(
        "files={files} passed={} refused={} ms={:.1} files_per_s={:.0}",
        files.saturating_sub(refused.len()),
        refused.len(),
        secs * 1000.0,
        files as f64 / secs.max(1e-9)
    ))
}
