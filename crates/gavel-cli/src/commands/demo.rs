//! `gavel demo`: brief → issue, then issue → LLD, end to end, offline, in seconds.
//!
//! It makes a temporary git repository, runs `gavel init` there, writes a sample brief and
//! scripts for the offline `scripted` provider, and runs two acts. Act one turns the brief into
//! an issue (the first verdict asks for a revision, the second approves) and files it with the
//! local tracker; act two turns that issue into a low-level design (`gavel lld`'s workflow,
//! with its own roles from `[workflows.lld.roles]`) and commits `docs/lld/active/LLD-1.md`.
//! Act three implements that design test first in a tiny shell project (`gavel implement`'s
//! workflow in a worktree: the scripted implementer writes a failing test, the real test
//! command fails (red), then the code, and it passes (green)); at the diff gate the demo
//! answers `approve` itself and says so, since a real run waits for a person to type it.
//! Each act prints its lineage folder and result. `--interactive` stops at the person's gates
//! instead, so a newcomer sees each draft in their editor and answers at every gate.

use std::fs;
use std::path::{Path, PathBuf};

use clap::Args;
use gavel_core::Engine;
use gavel_workflows::document::DocState;
use gavel_workflows::git::{Git, GitError};
use gavel_workflows::issue::{IssueState, node};
use gavel_workflows::lld;

use super::init::init_repo;
use crate::context::Context;
use crate::driver::{self, GateMode};
use crate::error::CliError;
use crate::exit::Exit;
use crate::settings::Overrides;

mod scripts;
use scripts::{BRIEF, IMPLEMENT_SCRIPT, LLD_SCRIPT, SCRIPT};

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Build the demo repository here and keep it (default: a temporary folder, removed after).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Stop at the person's gates (the draft in your editor, then send / revise, the verdict,
    /// then approve / revise) instead of running in auto mode. Needs a terminal.
    #[arg(long)]
    pub interactive: bool,
}

pub fn cmd_demo(args: &DemoArgs) -> Result<Exit, CliError> {
    if args.interactive && !crate::ui::Ui::detect().interactive() {
        return Err(CliError::usage("gavel demo --interactive needs a terminal")
            .hint("run it in a terminal, or drop --interactive for the auto-mode demo"));
    }
    let temp;
    let dir = match &args.dir {
        Some(d) => {
            fs::create_dir_all(d)
                .map_err(|e| CliError::error(format!("cannot create {}: {e}", d.display())))?;
            if fs::read_dir(d)
                .map(|mut e| e.next().is_some())
                .unwrap_or(true)
            {
                return Err(CliError::usage(format!(
                    "{} is not empty; the demo needs an empty folder",
                    d.display()
                )));
            }
            d.canonicalize()
                .map_err(|e| CliError::error(format!("cannot resolve {}: {e}", d.display())))?
        }
        None => {
            temp = tempfile::Builder::new()
                .prefix("gavel-demo-")
                .tempdir()
                .map_err(|e| CliError::error(format!("cannot make a temporary folder: {e}")))?;
            temp.path().to_path_buf()
        }
    };
    let exit = run_demo(&dir, args.interactive)?;
    if args.dir.is_none() {
        ui_info("(removing the temporary demo repository; keep one with `gavel demo --dir DIR`)");
    }
    Ok(exit)
}

fn run_demo(dir: &Path, interactive: bool) -> Result<Exit, CliError> {
    git(dir, &["init", "-q", "-b", "main"])?;
    git(dir, &["config", "user.name", "gavel demo"])?;
    git(dir, &["config", "user.email", "demo@gavel.invalid"])?;
    git(dir, &["config", "commit.gpgsign", "false"])?;
    init_repo(dir)?;
    let write = |rel: &str, text: &str| {
        gavel_workflows::fsutil::write_atomic(&dir.join(rel), text.as_bytes())
            .map_err(|e| CliError::error(format!("cannot write {rel}: {e}")))
    };
    write("demo/script.yaml", SCRIPT)?;
    write("demo/lld-script.yaml", LLD_SCRIPT)?;
    write("demo/implement-script.yaml", IMPLEMENT_SCRIPT)?;
    write("ideas/active/dark-mode.md", BRIEF)?;
    let config =
        fs::read_to_string(dir.join("gavel.toml")).map_err(|e| CliError::error(e.to_string()))?;
    let config = config
        .replace(
            "drafter = \"claude:sonnet\"",
            "drafter = \"scripted:demo/script.yaml\"",
        )
        .replace(
            "reviewer = \"gemini:2.5-pro\"",
            "reviewer = \"scripted:demo/script.yaml\"",
        );
    let config = format!(
        "{config}\n# The demo's second act: the LLD run's own offline models.\n[workflows.lld.roles]\ndrafter = \"scripted:demo/lld-script.yaml\"\nreviewer = \"scripted:demo/lld-script.yaml\"\n\n# The third act: the implementer, and the shell project's test command.\n[workflows.implement.roles]\nimplementer = \"scripted:demo/implement-script.yaml\"\n\n[implement]\ntest = \"sh tests/test_theme.sh\"\nrunner = \"generic\"\n"
    );
    write("gavel.toml", &config)?;
    write(".gitignore", "/.gavel/\n/demo/*.calls.jsonl\n")?;
    git(dir, &["add", "-A"])?;
    git(dir, &["commit", "-q", "-m", "demo: gavel init and a brief"])?;

    let ctx = Context::load_in(
        dir,
        &Overrides {
            state_dir: Some(dir.join(".gavel")),
            ..Overrides::default()
        },
    )?;
    ctx.ui.info(&format!("demo repository: {}", dir.display()));
    let store = ctx.open_store()?;
    let editor = if interactive {
        crate::editor::resolve()?.into_iter().next()
    } else {
        None
    };
    let wf = crate::kinds::issue_workflow(&ctx, editor, None)?;
    let brief = "ideas/active/dark-mode.md";
    let state = IssueState::new(
        "demo".into(),
        brief.into(),
        BRIEF.into(),
        "dark-mode".into(),
        Some(brief.into()),
        !interactive,
        ctx.clock.now_rfc3339(),
    );
    let run = Engine::new(&*store, &wf, ctx.clock.as_ref(), ctx.holder()).start(
        "dark-mode",
        &state,
        node::LOAD_BRIEF,
    )?;
    let (mode, gates) = if interactive {
        (GateMode::Ask, "you decide at each gate")
    } else {
        (GateMode::Pause, "auto mode")
    };
    ctx.ui.info(&format!(
        "run {run}: {brief} -> issue, {gates}, scripted drafter and reviewer"
    ));
    let exit = driver::drive(&ctx, &*store, &wf, run, None, mode)?;
    if exit != Exit::Success {
        return Ok(exit);
    }
    let record = store.run(run)?;
    let head = store
        .head(run)?
        .ok_or_else(|| CliError::error("the demo run has no checkpoint"))?;
    let state: IssueState =
        serde_json::from_slice(&head.state).map_err(|e| CliError::error(e.to_string()))?;
    let filed = state.filed.ok_or_else(|| {
        CliError::error(format!("the demo run ended without filing ({record:?})"))
    })?;
    let ui = &ctx.ui;
    print_lineage(ui, dir, &filed.lineage)?;
    ui.out("");
    ui.out(&format!("filed issue #{}: {}", filed.number, filed.url));
    let issue =
        fs::read_to_string(dir.join(&filed.url)).map_err(|e| CliError::error(e.to_string()))?;
    for line in issue.lines() {
        ui.out(&format!("  | {line}"));
    }
    let log = git(dir, &["log", "--oneline", "-n", "1"])?;
    ui.out("");
    ui.out(&format!("commit: {}", log.trim()));
    act_two(dir, &ctx, &*store, filed.number, interactive)
}

/// Act two: the filed issue becomes an approved low-level design.
fn act_two(
    dir: &Path,
    ctx: &Context,
    store: &dyn gavel_core::Store,
    issue: u64,
    interactive: bool,
) -> Result<Exit, CliError> {
    let editor = if interactive {
        crate::editor::resolve()?.into_iter().next()
    } else {
        None
    };
    let wf = crate::kinds::doc_workflow(ctx, &lld::LLD, editor, None)?;
    let slug = lld::slug_for(issue);
    let mut state = DocState::new(
        "demo-lld".into(),
        issue.to_string(),
        String::new(),
        slug.clone(),
        None,
        !interactive,
        ctx.clock.now_rfc3339(),
    );
    state.roles = Some(wf.settings.roles.clone());
    let run = Engine::new(store, &wf, ctx.clock.as_ref(), ctx.holder()).start(
        &slug,
        &state,
        lld::node::LOAD_ISSUE,
    )?;
    let ui = &ctx.ui;
    ui.out("");
    ui.info(&format!(
        "run {run}: issue #{issue} -> LLD, {}, scripted drafter and reviewer",
        if interactive {
            "you decide at each gate"
        } else {
            "auto mode"
        }
    ));
    let mode = if interactive {
        GateMode::Ask
    } else {
        GateMode::Pause
    };
    let exit = driver::drive(ctx, store, &wf, run, None, mode)?;
    if exit != Exit::Success {
        return Ok(exit);
    }
    let head = store
        .head(run)?
        .ok_or_else(|| CliError::error("the demo's LLD run has no checkpoint"))?;
    let state: DocState =
        serde_json::from_slice(&head.state).map_err(|e| CliError::error(e.to_string()))?;
    let approved = state
        .approved
        .ok_or_else(|| CliError::error("the demo's LLD run ended without an approved LLD"))?;
    print_lineage(ui, dir, &approved.lineage)?;
    ui.out("");
    ui.out(&format!("approved LLD: {}", approved.path));
    let text =
        fs::read_to_string(dir.join(&approved.path)).map_err(|e| CliError::error(e.to_string()))?;
    for line in text.lines().take(12) {
        ui.out(&format!("  | {line}"));
    }
    ui.out("  | ...");
    let log = git(dir, &["log", "--oneline", "-n", "1"])?;
    ui.out("");
    ui.out(&format!("commit: {}", log.trim()));
    act_three(dir, ctx, store, issue, &approved.path, interactive)
}

/// Act three: the approved design is implemented test first in a worktree and merged.
fn act_three(
    dir: &Path,
    ctx: &Context,
    store: &dyn gavel_core::Store,
    issue: u64,
    lld: &str,
    interactive: bool,
) -> Result<Exit, CliError> {
    let wf = crate::kinds::implement_workflow(ctx, None, None)?;
    let lld_text = fs::read_to_string(dir.join(lld)).map_err(|e| CliError::error(e.to_string()))?;
    let head = Git::at(dir)
        .head()
        .map_err(|e| CliError::error(e.to_string()))?
        .unwrap_or_default();
    let mut state = gavel_workflows::implement::ImplementState::new(
        "demo-impl".into(),
        issue,
        "Add a dark theme that follows the system setting".into(),
        lld.into(),
        lld_text,
        head,
        "main".into(),
        true,
        ctx.clock.now_rfc3339(),
    );
    state.implementer = Some(wf.settings.implementer.clone());
    state.test_command = Some(wf.settings.test.command.clone());
    let slug = gavel_workflows::implement::worktree_name(issue);
    let run = Engine::new(store, &wf, ctx.clock.as_ref(), ctx.holder()).start(
        &slug,
        &state,
        gavel_workflows::implement::node::LOAD,
    )?;
    let ui = &ctx.ui;
    ui.out("");
    ui.info(&format!(
        "run {run}: {lld} -> code, test first, in the worktree .gavel/worktrees/{slug} (tests: `sh tests/test_theme.sh`)"
    ));
    let mode = if interactive {
        GateMode::Ask
    } else {
        GateMode::Pause
    };
    let exit = driver::drive(ctx, store, &wf, run, None, mode)?;
    if interactive || exit != Exit::Paused {
        if exit == Exit::Success {
            print_lineage(ui, dir, &format!("docs/lineage/done/{slug}"))?;
        }
        return Ok(exit);
    }
    let Some(gavel_core::RunStatus::Waiting { gate }) = store.run(run)?.map(|r| r.status) else {
        return Err(CliError::error(
            "the demo's implementation run did not reach the diff gate",
        ));
    };
    ui.out("");
    ui.out("(the demo types `approve` at the diff gate for you; a real run waits for a person to type it)");
    let answer = gavel_core::GateAnswer {
        gate_id: gate.id.clone(),
        choice: "approve".into(),
        feedback: None,
    };
    let exit = driver::drive(ctx, store, &wf, run, Some(answer), GateMode::Pause)?;
    if exit != Exit::Success {
        return Ok(exit);
    }
    print_lineage(ui, dir, &format!("docs/lineage/done/{slug}"))?;
    let log = git(dir, &["log", "--oneline", "-n", "3"])?;
    ui.out("");
    ui.out("commits:");
    for line in log.lines() {
        ui.out(&format!("  {line}"));
    }
    Ok(Exit::Success)
}

/// A lineage folder and its files, sorted.
fn print_lineage(ui: &crate::ui::Ui, dir: &Path, lineage: &str) -> Result<(), CliError> {
    ui.out("");
    ui.out(&format!("lineage: {lineage}/"));
    let mut files: Vec<String> = fs::read_dir(dir.join(lineage))
        .map_err(|e| CliError::error(e.to_string()))?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    for f in files {
        ui.out(&format!("  {f}"));
    }
    Ok(())
}

/// `git args...` in the demo repository, on gavel's one git runner (scrubbed environment).
fn git(dir: &Path, args: &[&str]) -> Result<String, CliError> {
    Git::at(dir).run(args).map_err(|e| {
        let err = CliError::from_error(&e);
        if matches!(e, GitError::Spawn(_)) {
            err.hint("install git")
        } else {
            err
        }
    })
}

fn ui_info(line: &str) {
    crate::ui::Ui::detect().info(line);
}
