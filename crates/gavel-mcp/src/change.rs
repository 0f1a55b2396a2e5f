//! `get_change`: what the reviewer needs to know about the change before it judges it: the
//! phase (`STATE.yaml`), the change folder's files, and the tasks still open in `tasks.md`.

use std::fs;
use std::path::Path;

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use serde::{Deserialize, Serialize};

use crate::McpError;
use crate::fsafe::ChangeDir;

/// The most files listed, so a huge folder cannot flood the agent's context.
const MAX_FILES: usize = 2000;

/// What `get_change` returns (as JSON text).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeInfo {
    pub change_id: String,
    pub phase: Option<String>,
    /// Paths relative to the change folder, `/`-separated, sorted.
    pub files: Vec<String>,
    /// The text of each unchecked `- [ ]` item of tasks.md.
    pub open_tasks: Vec<String>,
}

#[derive(Deserialize)]
struct State {
    phase: Option<String>,
}

impl ChangeInfo {
    pub fn read(dir: &ChangeDir, change_id: &str) -> Result<Self, McpError> {
        // A STATE.yaml that does not parse has no phase we can report; say so by leaving it out.
        let phase = dir
            .read("STATE.yaml")?
            .and_then(|yaml| serde_saphyr::from_str::<State>(&yaml).ok())
            .and_then(|s| s.phase);
        let mut files = Vec::new();
        walk(dir.path(), dir.path(), &mut files)?;
        files.sort();
        files.truncate(MAX_FILES);
        let open_tasks = dir
            .read("tasks.md")?
            .map(|md| open_tasks(&md))
            .unwrap_or_default();
        Ok(Self {
            change_id: change_id.to_owned(),
            phase,
            files,
            open_tasks,
        })
    }
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) -> Result<(), McpError> {
    let entries = fs::read_dir(dir).map_err(|source| McpError::Io {
        action: "list",
        path: dir.to_owned(),
        source,
    })?;
    for entry in entries.flatten() {
        if out.len() >= MAX_FILES {
            return Ok(());
        }
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let name = entry.file_name();
        if name.to_string_lossy().starts_with(".gavel-mcp-") {
            continue;
        }
        if kind.is_dir() {
            walk(root, &path, out)?;
        } else if let Ok(rel) = path.strip_prefix(root) {
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
    Ok(())
}

/// The unchecked task-list items of a Markdown document, as one line of text each.
pub(crate) fn open_tasks(markdown: &str) -> Vec<String> {
    let mut tasks = Vec::new();
    let mut current: Option<String> = None;
    for event in Parser::new_ext(markdown, Options::ENABLE_TASKLISTS) {
        match event {
            Event::TaskListMarker(false) => current = Some(String::new()),
            Event::Start(Tag::Item) | Event::End(TagEnd::Item) => {
                if let Some(task) = current.take() {
                    tasks.push(task.trim().to_owned());
                }
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some(task) = current.as_mut() {
                    task.push_str(&t);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some(task) = current.as_mut() {
                    task.push(' ');
                }
            }
            _ => {}
        }
    }
    tasks
}
