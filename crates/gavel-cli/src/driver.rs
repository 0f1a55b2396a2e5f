//! Driving a run from the terminal: the engine runs nodes, and at each gate this module either
//! asks the person (interactive) or stops with the exact `gavel resume` command to continue.

use crate::store::AnyStore;
use gavel_core::{
    Engine, EventKind, GateAnswer, GateRequest, Outcome, Progress, RunId, RunRecord, Store,
    Workflow,
};

use crate::context::{self, Context};
use crate::editor;
use crate::error::CliError;
use crate::exit::Exit;
use crate::ui::sanitize;

/// How gates are handled in this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateMode {
    /// Ask at the terminal.
    Ask,
    /// Stop at the gate with the resume command.
    Pause,
}

impl GateMode {
    pub fn for_ui(ctx: &Context) -> Self {
        if ctx.ui.interactive() {
            Self::Ask
        } else {
            Self::Pause
        }
    }
}

/// Drives `run` of any workflow to its next stopping point and turns the outcome into an exit
/// code.
pub fn drive<W: Workflow>(
    ctx: &Context,
    store: &dyn Store,
    wf: &W,
    run: RunId,
    mut answer: Option<GateAnswer>,
    mode: GateMode,
) -> Result<Exit, CliError> {
    crate::logging::to_run_log(&ctx.settings.state_dir, run);
    let ui = ctx.ui;
    let observer = move |p: Progress<'_>| match p {
        Progress::NodeStarted { node } => ui.info(&format!(">>> {node}")),
        Progress::Event(e) => {
            if let Some(line) = describe_event(&e.kind) {
                ui.info(&format!("    {line}"));
            }
        }
        _ => {}
    };
    let crash = context::crash_hook();
    let mut engine = Engine::new(store, wf, ctx.clock.as_ref(), ctx.holder())
        .with_cancel(context::cancel_token())
        .with_observer(&observer);
    if let Some(hook) = crash.as_deref() {
        engine = engine.with_crash_hook(hook);
    }
    if let Some(start) = ctx.take_start() {
        engine = engine.counting_from(start);
    }
    // One lock for the whole session: nobody else answers while a person is at a prompt.
    let session = engine.session(run)?;
    // This clone drives the run now: a later resume here never writes its old lineage back.
    let mark = gavel_workflows::lineage::clone_mark(&ctx.settings.repo_root);
    session.mark_once(&mark)?;
    loop {
        let outcome = session.drive(answer.take())?;
        match outcome {
            Outcome::Done { summary } => {
                ctx.ui
                    .out(&format!("run {run} done: {}", sanitize(&summary)));
                return Ok(Exit::Success);
            }
            Outcome::Waiting(gate) => {
                if mode == GateMode::Ask {
                    match ask_gate(ctx, run, &gate)? {
                        Some(a) => {
                            answer = Some(a);
                            continue;
                        }
                        None => {
                            ctx.ui.info(&format!(
                                "Paused at gate {}. Resume with: gavel resume {run}",
                                gate.id
                            ));
                            return Ok(Exit::Paused);
                        }
                    }
                }
                print_gate(ctx, run, &gate);
                return Ok(Exit::Paused);
            }
            Outcome::Halted { reason } => {
                ctx.ui
                    .info(&format!("run {run} halted: {}", sanitize(&reason)));
                ctx.ui
                    .info(&format!("hint: fix the cause, then `gavel resume {run}`"));
                return Ok(Exit::Halted);
            }
            Outcome::Failed { error } => {
                return Err(
                    CliError::error(format!("run {run} failed: {}", sanitize(&error)))
                        .hint(format!("fix the cause, then `gavel resume {run}`")),
                );
            }
            Outcome::Aborted { reason } => {
                ctx.ui
                    .info(&format!("run {run} aborted: {}", sanitize(&reason)));
                return Ok(Exit::Rejected);
            }
            Outcome::Interrupted => {
                ctx.ui.info(&format!(
                    "interrupted; run {run} is saved. Resume with: gavel resume {run}"
                ));
                return Ok(Exit::Interrupted);
            }
            // An outcome a newer engine added: never taken for success.
            other => {
                return Err(CliError::error(format!(
                    "run {run} stopped with an outcome this gavel does not know: {other:?}"
                ))
                .hint(format!("`gavel show {run}` shows where it is")));
            }
        }
    }
}

/// Prints a gate for a non-interactive caller, with the exact commands that continue.
pub fn print_gate(ctx: &Context, run: RunId, gate: &GateRequest) {
    let ui = &ctx.ui;
    ui.info(&format!(
        "run {run} is waiting at gate {}: {}",
        gate.id,
        sanitize(&gate.title)
    ));
    if let Some(detail) = &gate.detail {
        ui.info(&sanitize(detail));
    }
    for a in gate.artifacts.iter().filter(|a| !a.is_empty()) {
        ui.info(&format!("  {a}"));
    }
    if let Some(r) = &gate.recommended {
        ui.info(&format!("recommended: {r}"));
    }
    for line in continue_lines(run, gate) {
        ui.info(&line);
    }
}

/// The commands that answer `gate`, as `gavel resume` accepts them: a gate confirmed by a
/// typed word only in a terminal (it refuses `--choice`), any other with `--choice`, and
/// `--feedback-file` where the choice takes feedback. Used wherever gavel says how to go on.
pub fn continue_lines(run: RunId, gate: &GateRequest) -> Vec<String> {
    if gate.present.confirm == gavel_core::Confirm::Word {
        return vec![format!(
            "continue in a terminal: `gavel resume {run}`, then type one of: {}",
            gate.choice_names().join(", ")
        )];
    }
    let mut lines = vec!["continue with one of:".to_owned()];
    for c in &gate.choices {
        let extra = if c.takes_feedback {
            " [--feedback-file FILE]"
        } else {
            ""
        };
        lines.push(format!(
            "  gavel resume {run} --choice {}{extra}    # {}",
            c.name,
            sanitize(&c.help)
        ));
    }
    lines
}

/// Asks a gate at the terminal, as its [`gavel_core::Presentation`] describes it (what to open,
/// preview and call feedback, and whether a key or the whole word confirms). `None`: the person
/// paused (or input ended).
fn ask_gate(ctx: &Context, run: RunId, gate: &GateRequest) -> Result<Option<GateAnswer>, CliError> {
    let ui = &ctx.ui;
    let present = &gate.present;
    let listed: Vec<&str> = gate
        .artifacts
        .iter()
        .map(String::as_str)
        .filter(|a| !a.is_empty())
        .collect();
    let editable: Vec<&str> = present
        .editable
        .iter()
        .map(String::as_str)
        .filter(|a| !a.is_empty())
        .collect();
    let editor_cmd = editor::resolve()?;
    let open: Vec<&str> = present.open.iter().map(String::as_str).collect();
    if !open.is_empty()
        && let Err(e) = editor::open(&editor_cmd, &ctx.settings.repo_root, &open)
    {
        ui.info(&format!("warning: {}", e.message));
    }
    let can_edit = !editable.is_empty();
    let word = present.confirm == gavel_core::Confirm::Word;
    loop {
        ui.info("");
        if let Some(preview) = &present.preview {
            print_preview(ctx, preview, present.preview_whole);
        }
        ui.info(&format!("== {} ==", sanitize(&gate.title)));
        if let Some(detail) = &gate.detail {
            ui.info(&sanitize(detail));
        }
        for f in &listed {
            ui.info(&format!("  {f}"));
        }
        for c in &gate.choices {
            let rec = if gate.recommended.as_deref() == Some(c.name.as_str()) {
                " (recommended)"
            } else {
                ""
            };
            let label = if word { c.name.clone() } else { c.label() };
            ui.info(&format!("{label} - {}{rec}", sanitize(&c.help)));
        }
        if can_edit {
            ui.info(&format!(
                "[E]dit - open {} in your editor, then decide",
                editable.join(" and ")
            ));
        }
        ui.info(&format!(
            "[P]ause - save and exit; `gavel resume {run}` asks again"
        ));
        let mut keys: Vec<String> = gate
            .choices
            .iter()
            .map(|c| {
                if word {
                    c.name.clone()
                } else {
                    c.key.to_string()
                }
            })
            .collect();
        if can_edit {
            keys.push("E".into());
        }
        keys.push("P".into());
        let Some(input) = ui.ask(&format!("Your choice [{}]: ", keys.join("/"))) else {
            return Ok(None);
        };
        let input = input.trim();
        if input.eq_ignore_ascii_case("p") || input.eq_ignore_ascii_case("pause") {
            return Ok(None);
        }
        if can_edit && (input.eq_ignore_ascii_case("e") || input.eq_ignore_ascii_case("edit")) {
            if let Err(e) = editor::open(&editor_cmd, &ctx.settings.repo_root, &editable) {
                ui.info(&format!("warning: {}", e.message));
            }
            continue;
        }
        let Some(choice) = gate.typed_choice(input) else {
            ui.info(&format!(
                "`{}` is not one of {}; try again.",
                sanitize(input),
                keys.join(", ")
            ));
            continue;
        };
        let feedback = if choice.takes_feedback {
            let label = present.feedback_label.as_deref().unwrap_or("Feedback");
            let text = ui.ask_multiline(&format!(
                "{} (optional; finish with an empty line):",
                sanitize(label)
            ));
            Some(text).filter(|t| !t.trim().is_empty())
        } else {
            None
        };
        return Ok(Some(GateAnswer {
            gate_id: gate.id.clone(),
            choice: choice.name.clone(),
            feedback,
        }));
    }
}

/// The first lines of an artifact (its front matter skipped), or all of them when `whole`,
/// sanitized.
fn print_preview(ctx: &Context, rel: &str, whole: bool) {
    const FIRST_LINES: usize = 30;
    let lines_shown = if whole { usize::MAX } else { FIRST_LINES };
    let Ok(text) = std::fs::read_to_string(ctx.settings.repo_root.join(rel)) else {
        return;
    };
    let body = match text
        .strip_prefix("---\n")
        .and_then(|rest| rest.find("\n---\n").map(|end| &rest[end + 5..]))
    {
        Some(body) => body,
        None => text.as_str(),
    };
    ctx.ui.info(&format!("---- {rel} ----"));
    let lines: Vec<&str> = body.trim_start_matches('\n').lines().collect();
    for line in lines.iter().take(lines_shown) {
        ctx.ui.info(&format!("  {}", sanitize(line)));
    }
    if lines.len() > lines_shown {
        ctx.ui.info(&format!(
            "  ... ({} more lines in {rel})",
            lines.len() - lines_shown
        ));
    }
}

fn describe_event(kind: &EventKind) -> Option<String> {
    Some(match kind {
        EventKind::Artifact { path, .. } => format!("wrote {path}"),
        EventKind::ModelCall {
            role,
            provider,
            model,
            ..
        } => format!("{role} answered ({provider}, model {})", sanitize(model)),
        EventKind::GateAnswered { gate, choice, by } => format!("gate {gate}: {choice} ({by})"),
        EventKind::Note { text } => sanitize(text),
        // Nodes, gates waiting and endings are told by the driver itself; unknown kinds are
        // shown by `gavel show`.
        _ => return None,
    })
}

/// Opens the existing store and finds the run named by a RUN argument (id or slug).
pub fn open_run(ctx: &Context, arg: &str) -> Result<(AnyStore, RunRecord), CliError> {
    let store = ctx.open_existing_store()?.ok_or_else(|| {
        CliError::error(format!(
            "run {} does not exist (no runs yet)",
            sanitize(arg)
        ))
        .hint("`gavel runs` lists the runs in this store")
    })?;
    if let Ok(id) = arg.parse::<RunId>()
        && store.run(id)?.is_none()
        && let Some(foreign) = store.foreign_run(id)?
    {
        return Err(foreign);
    }
    let id = resolve_run(&*store, arg)?;
    let record = store
        .run(id)?
        .ok_or_else(|| CliError::error(format!("run {id} does not exist")))?;
    Ok((store, record))
}

/// Resolves a RUN argument: a run id, or the slug of a run (the newest with that slug).
pub fn resolve_run(store: &dyn Store, arg: &str) -> Result<RunId, CliError> {
    if let Ok(id) = arg.parse::<RunId>() {
        return match store.run(id)? {
            Some(_) => Ok(id),
            None => Err(CliError::error(format!("run {arg} does not exist"))
                .hint("`gavel runs` lists the runs in this store")),
        };
    }
    store
        .runs_with_slug(arg, None)?
        .last()
        .map(|r| r.id)
        .ok_or_else(|| {
            CliError::error(format!("no run with id or slug `{}`", sanitize(arg)))
                .hint("`gavel runs` lists the runs in this store")
        })
}
