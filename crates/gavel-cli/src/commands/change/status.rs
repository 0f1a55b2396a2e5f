//! `gavel change list` and `gavel change status [ID]`: the spec-driven changes of this
//! repository (OpenSpec's layout under `[changes] root`), their phase from `STATE.yaml`, the
//! command that fits it, and their tasks. Read only: nothing is written. (The `plan`, `impl`
//! and `archive` workflows are built on the same library.)

use std::path::Path;

use gavel_workflows::change::plan::files::read_specs;
use gavel_workflows::change::read::{is_present, read_text_optional};
use gavel_workflows::change::state::{ChangeState, load_state};
use gavel_workflows::change::tasks::parse_tasks;
use gavel_workflows::change::{ChangeDir, check_id};
use serde::Serialize;

use super::ChangeCommand;
use crate::context::Context;
use crate::error::CliError;
use crate::exit::Exit;
use crate::kinds::ChangeSettings;
use crate::ui::sanitize;

/// What `list` and `status` report about one change.
#[derive(Debug, Serialize)]
struct ChangeRow {
    id: String,
    /// The phase, or `None` when the change has no STATE.yaml (made by another tool).
    phase: Option<String>,
    /// Whether the change has a STATE.yaml (a phase of `None` with one means it is unreadable).
    has_state: bool,
    /// The command that fits the phase (`plan`, `impl`, `archive`), if any.
    next: Option<String>,
    /// Why STATE.yaml or tasks.md could not be read (file and line).
    problem: Option<String>,
    tasks_done: usize,
    tasks_total: usize,
    open_tasks: Vec<String>,
    /// Tasks whose layer (Data, Logic, Integration, Testing) could not be told.
    unclassified: Vec<String>,
}

pub fn cmd_status(command: &ChangeCommand, ctx: Context) -> Result<Exit, CliError> {
    let root = ctx
        .settings
        .repo_root
        .join(&ctx.settings.section::<ChangeSettings>().root);
    let (ids, json, detail) = match command {
        ChangeCommand::List { json } => (all_ids(&root)?, *json, false),
        ChangeCommand::Status { id: Some(id), json } => {
            check_id(id).map_err(|e| CliError::usage(e.to_string()))?;
            if !root.join("changes").join(id).is_dir() {
                return Err(CliError::usage(format!(
                    "there is no change `{id}` in {}",
                    ctx.settings
                        .section::<ChangeSettings>()
                        .root
                        .join("changes")
                        .display()
                ))
                .hint("`gavel change list` lists them"));
            }
            (vec![id.clone()], *json, true)
        }
        ChangeCommand::Status { id: None, json } => (all_ids(&root)?, *json, true),
        _ => return Err(CliError::error("not a read-only change command")),
    };
    let rows: Vec<ChangeRow> = ids.iter().map(|id| row(&root, id)).collect();
    if json {
        ctx.ui
            .out(&serde_json::to_string_pretty(&rows).map_err(|e| CliError::error(e.to_string()))?);
        return Ok(Exit::Success);
    }
    if rows.is_empty() {
        ctx.ui.out(&format!(
            "no changes in {}",
            ctx.settings
                .section::<ChangeSettings>()
                .root
                .join("changes")
                .display()
        ));
    }
    for r in &rows {
        print_row(&ctx, r, detail);
    }
    Ok(Exit::Success)
}

/// The change ids under `{root}/changes/`, sorted (the archive folder is not one).
fn all_ids(root: &Path) -> Result<Vec<String>, CliError> {
    let dir = root.join("changes");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(Vec::new());
    };
    let mut ids: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name != "archive" && check_id(name).is_ok())
        .collect();
    ids.sort();
    Ok(ids)
}

fn row(root: &Path, id: &str) -> ChangeRow {
    let mut r = ChangeRow {
        id: id.to_owned(),
        phase: None,
        has_state: false,
        next: None,
        problem: None,
        tasks_done: 0,
        tasks_total: 0,
        open_tasks: Vec::new(),
        unclassified: Vec::new(),
    };
    let Ok(dir) = ChangeDir::new(root, id) else {
        return r;
    };
    if is_present(&dir.state()) {
        r.has_state = true;
        match load_state(&dir) {
            Ok(ChangeState { phase, .. }) => {
                r.phase = Some(phase.as_str().to_owned());
                r.next = phase.next_command().map(|c| c.as_str().to_owned());
            }
            Err(e) => r.problem = Some(e.to_string()),
        }
    }
    let tasks = read_text_optional(&dir.tasks())
        .map_err(|e| e.to_string())
        .and_then(|t| match t {
            Some(text) => parse_tasks(&text, id)
                .map(Some)
                .map_err(|e| format!("{}: {e}", dir.tasks().display())),
            None => Ok(None),
        });
    match tasks {
        Ok(None) => {}
        Ok(Some(list)) => {
            r.tasks_total = list.tasks.len();
            r.tasks_done = list.tasks.iter().filter(|t| t.done).count();
            r.open_tasks = list.open_tasks().iter().map(|t| t.text.clone()).collect();
            r.unclassified = list
                .unclassified
                .iter()
                .filter_map(|i| list.tasks.get(*i).map(|t| t.text.clone()))
                .collect();
        }
        Err(tasks) => {
            r.problem = Some(match r.problem.take() {
                Some(p) => format!("{p}; {tasks}"),
                None => tasks,
            });
        }
    }
    r
}

fn print_row(ctx: &Context, r: &ChangeRow, detail: bool) {
    let phase = match (&r.phase, r.has_state) {
        (Some(p), _) => p.as_str(),
        (None, true) => "STATE.yaml unreadable",
        (None, false) => "no STATE.yaml",
    };
    let next = r
        .next
        .as_deref()
        .map(|n| format!(", next: gavel change {n} {}", r.id))
        .unwrap_or_default();
    ctx.ui.out(&format!(
        "{:<24} {phase:<13} tasks {}/{}{next}",
        r.id, r.tasks_done, r.tasks_total
    ));
    if let Some(p) = &r.problem {
        ctx.ui.out(&format!("  problem: {}", sanitize(p)));
    }
    if detail {
        for t in &r.open_tasks {
            ctx.ui.out(&format!("  [ ] {}", sanitize(t)));
        }
        for t in &r.unclassified {
            ctx.ui.out(&format!(
                "  no layer (Data, Logic, Integration, Testing): {}",
                sanitize(t)
            ));
        }
    }
}

/// The repository's changes as the report's board shows them (`gavel ui`, `gavel report`):
/// each change's phase and tasks as `list` reads them, and its documents' text.
pub(crate) fn cards(root: &Path) -> Vec<gavel_report::ChangeCard> {
    let Ok(ids) = all_ids(root) else {
        return Vec::new();
    };
    ids.iter()
        .map(|id| {
            let r = row(root, id);
            let mut documents = Vec::new();
            if let Ok(dir) = ChangeDir::new(root, id) {
                // What cannot be read safely is left out of the board (`list` names it).
                let read = |name: &str, path: &Path| {
                    read_text_optional(path)
                        .ok()
                        .flatten()
                        .map(|text| (name.to_owned(), text))
                };
                documents.extend(read("proposal.md", &dir.proposal()));
                for (capability, text) in read_specs(&dir).unwrap_or_default() {
                    documents.push((format!("specs/{capability}/spec.md"), text));
                }
                documents.extend(read("tasks.md", &dir.tasks()));
                documents.extend(read("REVIEW.md", &dir.review()));
            }
            gavel_report::ChangeCard {
                id: r.id,
                phase: r.phase.unwrap_or_else(|| "unknown".into()),
                next: r.next,
                problem: r.problem,
                tasks_done: r.tasks_done,
                tasks_total: r.tasks_total,
                documents,
            }
        })
        .collect()
}
