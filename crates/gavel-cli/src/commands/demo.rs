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

const BRIEF: &str = "# Dark mode\n\nPeople using the dashboard at night find it too bright. Add a dark theme that follows the\nsystem setting, with a toggle in the header. Keep contrast accessible.\n";

const SCRIPT: &str = r#"# The demo's offline "models": one response per call, in order.
model: scripted-demo
drafter:
  - text: |
      Here is the issue you asked for.

      # Add a dark theme that follows the system setting

      **Labels:** enhancement, ui

      ## Why
      The dashboard is too bright at night.

      ## What
      A dark theme, chosen from the system setting.

      ## Acceptance criteria
      - [ ] The dashboard looks dark.

      ## Out of scope
      Nothing yet.

      ## Notes
      None.
  - text: |
      # Add a dark theme that follows the system setting

      **Labels:** enhancement, ui, accessibility

      ## Why
      People who use the dashboard at night find it too bright; some stop using it after dark.

      ## What
      A dark theme that follows the operating system's setting, with a toggle in the header
      that overrides it and is remembered per browser.

      ## Acceptance criteria
      - [ ] With the system in dark mode, the dashboard opens in the dark theme.
      - [ ] The header toggle switches themes and the choice survives a reload.
      - [ ] Text in both themes meets WCAG AA contrast (4.5:1).

      ## Out of scope
      Custom colour schemes.

      ## Notes
      The toggle is the brief's own request; contrast follows WCAG 2.1.
reviewer:
  - text: |
      The draft names the problem but cannot be tested as written.

      ```json
      {"verdict": "REVISE", "findings": ["The acceptance criteria cannot be tested as written.", "The toggle from the brief is missing.", "Accessibility (contrast) is not addressed."]}
      ```
  - text: |
      Every rubric point holds: testable criteria, bounded scope, labels present.

      ```json
      {"verdict": "APPROVED", "findings": []}
      ```
"#;

/// Act two's offline "models": the design, and an approving review.
const LLD_SCRIPT: &str = r#"model: scripted-demo
drafter:
  - text: |
      # 1 - Feature: Dark theme that follows the system setting

      ## 1. Context & Goal
      * **Issue:** #1
      * **Objective:** Offer a dark theme, chosen from the system setting, with a header toggle.
      * **Status:** Draft

      ## 2. Proposed Changes
      ### 2.1 Files Changed
      | File | Change | Description |
      |------|--------|-------------|
      | `web/theme.css` | Modify | Colour variables for light and dark |
      | `web/header.js` | Modify | The toggle, remembered in localStorage |

      ### 2.2 Dependencies
      None.

      ### 2.3 Data Structures
      `localStorage["theme"]`: `"dark"`, `"light"` or absent (follow the system).

      ### 2.4 Function Signatures
      `applyTheme(choice)`: sets the colour variables for `"dark"` or `"light"`.

      ### 2.5 Logic Flow
      On load: the stored choice, else `prefers-color-scheme`; the toggle stores and applies.

      ### 2.6 Technical Approach
      CSS custom properties, so one class on `<html>` switches every colour.

      ## 3. Requirements
      1. With the system in dark mode, the dashboard opens dark.
      2. The toggle overrides the system setting and survives a reload.
      3. Both themes meet WCAG AA contrast (4.5:1).

      ## 4. Alternatives Considered
      A second stylesheet per theme: rejected, every colour would be kept twice.

      ## 5. Data & Fixtures
      The current palette; no user data.

      ## 6. Diagram
      system setting or stored choice -> applyTheme -> colour variables

      ## 7. Security Considerations
      The stored value is read as one of two words; anything else is ignored.

      ## 8. Performance Considerations
      One class change; no extra request.

      ## 9. Risks & Mitigations
      Low contrast in a corner of the UI: the contrast check covers every pair.

      ## 10. Verification & Testing
      ### 10.1 Test Scenarios
      | ID | Scenario | Expected |
      |----|----------|----------|
      | TS-01 | prefers-color-scheme: dark | dark theme |
      | TS-02 | toggle, reload | choice kept |
      | TS-03 | contrast check | every pair >= 4.5:1 |

      ### 10.2 Test Commands
      `sh tests/test_theme.sh`

      ## 11. Definition of Done
      - [ ] Every scenario of 10.1 passes
reviewer:
  - text: |
      Traceable to the issue, files listed, every requirement has a test scenario.

      ```json
      {"verdict": "APPROVED", "findings": []}
      ```
"#;

/// Act three's offline implementer: a failing test first, then the code.
const IMPLEMENT_SCRIPT: &str = r#"model: scripted-demo
roles:
  implementer:
    - text: |
        === gavel:write tests/test_theme.sh
        . ./theme.sh
        [ "$(theme dark)" = "background: #111" ] || { echo "dark theme is wrong: $(theme dark)"; exit 1; }
        [ "$(theme light)" = "background: #fff" ] || { echo "light theme is wrong"; exit 1; }
        echo "2 checks passed"
        === gavel:end
    - text: |
        === gavel:write theme.sh
        theme() {
          case "$1" in
            dark) echo "background: #111" ;;
            *) echo "background: #fff" ;;
          esac
        }
        === gavel:end
"#;

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
