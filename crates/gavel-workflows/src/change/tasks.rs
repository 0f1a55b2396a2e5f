//! `tasks.md`: the change's checklist, read from pulldown-cmark's task-list events.
//!
//! Items are `- [ ] 1.1 text` / `- [x] 1.1 text` under section headings such as
//! `## 1. Data Layer`. The change id comes from YAML front matter (`change_id:`) or, when the
//! front matter is missing or has none, from the change's folder (seed WF-R5); front matter
//! that names a different change is an error. Each task gets an implementation layer from the
//! nearest heading that names one (see [`classify_heading`]); a task no heading classifies is
//! listed in [`TaskList::unclassified`], never dropped. [`check_off`] ticks exactly one box and
//! leaves every other byte alone ([`check_off_many`] ticks several in one pass);
//! [`render_tasks`] writes the format with front matter.
//!
//! Parsing is linear in the file's size: an item's line number comes from an index of the
//! line starts ([`LineIndex`]), not from counting the newlines before it (which made 16,000
//! tasks take 1.4 s and 200,000 never finish).

use std::collections::HashMap;
use std::ops::Range;

use pulldown_cmark::{Event, MetadataBlockKind, Options, Parser, Tag, TagEnd};
use serde::Deserialize;

use super::check_id;

/// The implementation layers of seed WF-R5.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    /// Schemas, models, storage, migrations.
    Data,
    /// Domain and business rules.
    Logic,
    /// APIs, CLIs, UIs and the wiring between parts.
    Integration,
    /// Tests and verification.
    Testing,
}

/// One checklist item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    /// The leading number (`1.1`), if the item has one.
    pub id: Option<String>,
    /// The item's text after the id.
    pub text: String,
    /// Whether the box is ticked.
    pub done: bool,
    /// The nearest heading above the item.
    pub section: Option<String>,
    /// The layer, when a heading above names one.
    pub layer: Option<Layer>,
    /// The 1-based line of the item.
    pub line: usize,
}

/// Where [`TaskList::change_id`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeIdSource {
    /// `change_id:` in the front matter.
    FrontMatter,
    /// The change's folder (no front matter, or none naming the change).
    Folder,
}

/// A parsed `tasks.md`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskList {
    /// The change the tasks belong to.
    pub change_id: String,
    /// Where the id came from.
    pub change_id_source: ChangeIdSource,
    /// Every item, in document order.
    pub tasks: Vec<Task>,
    /// Indexes into `tasks` of the items with no layer.
    pub unclassified: Vec<usize>,
}

impl TaskList {
    /// The tasks not ticked yet, in order.
    pub fn open_tasks(&self) -> Vec<&Task> {
        self.tasks.iter().filter(|t| !t.done).collect()
    }

    /// What the first green run does with the open tasks (gavel's policy, see
    /// [`AtGreen`]).
    pub fn at_green(&self) -> AtGreen<'_> {
        let mut at = AtGreen::default();
        for task in self.open_tasks() {
            match (&task.id, task.layer) {
                (Some(_), Some(_)) => at.tick.push(task),
                (None, _) => at.no_number.push(task),
                (Some(_), None) => at.no_layer.push(task),
            }
        }
        at
    }
}

/// The open tasks sorted by what the first green run does with them.
///
/// gavel ticks tasks **all at the first green run**, with a note for each: the green gate
/// passes only when the whole test suite passes (every test the red run listed, the
/// scaffold's among them), and nothing maps a task's prose to the tests that cover it, so
/// ticking task by task would be a guess. A task is ticked only when gavel can say what it
/// is: it has a number (to tick exactly its box) and a layer (Data, Logic, Integration or
/// Testing, from a heading above it). The others are reported and left open for a person,
/// and `gavel change archive` refuses a change with open tasks, so none is lost.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct AtGreen<'a> {
    /// Ticked: numbered, with a layer.
    pub tick: Vec<&'a Task>,
    /// Reported, not ticked: no number to tick it by.
    pub no_number: Vec<&'a Task>,
    /// Reported, not ticked: no heading above names its layer.
    pub no_layer: Vec<&'a Task>,
}

/// The notes the first green run records for `at`: one per ticked task, one per task left
/// open and why.
pub fn green_notes(at: &AtGreen<'_>) -> Vec<String> {
    let mut notes = Vec::new();
    for task in &at.tick {
        let layer = task.layer.map_or_else(String::new, |l| format!("{l:?}"));
        notes.push(format!(
            "task {} ({layer} layer) done, the tests pass: {} (every task is ticked at the first green run, when the whole test suite passes)",
            task.id.as_deref().unwrap_or_default(),
            task.text
        ));
    }
    for task in &at.no_number {
        notes.push(format!(
            "task `{}` (tasks.md line {}) has no number, so gavel cannot tick it",
            task.text, task.line
        ));
    }
    for task in &at.no_layer {
        notes.push(format!(
            "task {} `{}` (tasks.md line {}) is not ticked: no heading above it names its layer (Data, Logic, Integration, Testing), so gavel cannot tell what it is; tick it yourself once it is done",
            task.id.as_deref().unwrap_or_default(),
            task.text,
            task.line
        ));
    }
    notes
}

/// Errors reading or editing `tasks.md`.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TasksError {
    /// The front matter is not valid YAML (line within the file, when known).
    #[error("tasks.md front matter, line {}: {message}", line.map_or_else(|| "?".to_owned(), |l| l.to_string()))]
    FrontMatter {
        /// The 1-based line in tasks.md.
        line: Option<u64>,
        /// What is wrong.
        message: String,
    },
    /// The front matter names another change than the folder.
    #[error("tasks.md says change_id `{front_matter}` but it is in the folder of `{folder}`")]
    WrongChange {
        /// The id in the front matter.
        front_matter: String,
        /// The folder's id.
        folder: String,
    },
    /// No item has this id.
    #[error("tasks.md has no task `{id}`")]
    UnknownTask {
        /// The id asked for.
        id: String,
    },
    /// Several items have this id, so ticking one would be a guess.
    #[error("tasks.md has {count} tasks numbered `{id}`")]
    AmbiguousTask {
        /// The id.
        id: String,
        /// How many items carry it.
        count: usize,
    },
}

#[derive(Deserialize, Default)]
struct FrontMatter {
    #[serde(default)]
    change_id: Option<String>,
}

struct Item {
    start: usize,
    marker: Option<(bool, Range<usize>)>,
    text: String,
    section: Option<String>,
    layer: Option<Layer>,
}

/// The byte offsets of a text's newlines, to turn an offset into a 1-based line number in
/// `O(log lines)`.
#[derive(Debug)]
pub(crate) struct LineIndex {
    newlines: Vec<usize>,
}

impl LineIndex {
    pub(crate) fn new(text: &str) -> Self {
        Self {
            newlines: text
                .bytes()
                .enumerate()
                .filter_map(|(i, b)| (b == b'\n').then_some(i))
                .collect(),
        }
    }

    /// The 1-based line of the byte at `offset`.
    pub(crate) fn line_of(&self, offset: usize) -> usize {
        self.newlines.partition_point(|&nl| nl < offset) + 1
    }
}

struct Scan {
    front_matter: Option<String>,
    items: Vec<(Task, Range<usize>)>,
}

fn scan(text: &str) -> Scan {
    let opts = Options::ENABLE_TASKLISTS | Options::ENABLE_YAML_STYLE_METADATA_BLOCKS;
    let mut front_matter = None;
    let mut in_meta = false;
    let mut headings: Vec<(usize, String)> = Vec::new();
    let mut heading: Option<(usize, String)> = None;
    let mut stack: Vec<Item> = Vec::new();
    let mut items = Vec::new();
    let lines = LineIndex::new(text);
    for (event, range) in Parser::new_ext(text, opts).into_offset_iter() {
        match event {
            Event::Start(Tag::MetadataBlock(MetadataBlockKind::YamlStyle)) => in_meta = true,
            Event::End(TagEnd::MetadataBlock(_)) => in_meta = false,
            Event::Text(t) if in_meta => front_matter.get_or_insert_with(String::new).push_str(&t),
            Event::Start(Tag::Heading { level, .. }) => {
                heading = Some((level as usize, String::new()));
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, title)) = heading.take() {
                    headings.retain(|(l, _)| *l < level);
                    headings.push((level, title.trim().to_owned()));
                }
            }
            Event::Start(Tag::Item) => stack.push(Item {
                start: range.start,
                marker: None,
                text: String::new(),
                section: headings.last().map(|(_, t)| t.clone()),
                layer: headings.iter().rev().find_map(|(_, t)| classify_heading(t)),
            }),
            Event::TaskListMarker(done) => {
                if let Some(item) = stack.last_mut() {
                    item.marker = Some((done, range));
                }
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some((_, title)) = heading.as_mut() {
                    title.push_str(&t);
                } else if let Some(item) = stack.last_mut() {
                    item.text.push_str(&t);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some(item) = stack.last_mut() {
                    item.text.push(' ');
                }
            }
            Event::End(TagEnd::Item) => {
                let Some(item) = stack.pop() else { continue };
                let Some((done, marker)) = item.marker else {
                    continue;
                };
                let (id, rest) = split_id(item.text.trim());
                let line = lines.line_of(item.start);
                items.push((
                    Task {
                        id,
                        text: rest.to_owned(),
                        done,
                        section: item.section,
                        layer: item.layer,
                        line,
                    },
                    marker,
                ));
            }
            _ => {}
        }
    }
    items.sort_by_key(|(t, m)| (t.line, m.start));
    Scan {
        front_matter,
        items,
    }
}

/// Splits `1.1 text` (or `1.1. text`) into its id and the rest.
fn split_id(text: &str) -> (Option<String>, &str) {
    let (first, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
    let id = first.trim_end_matches('.');
    let numeric = !id.is_empty()
        && id
            .split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    if numeric {
        (Some(id.to_owned()), rest.trim())
    } else {
        (None, text)
    }
}

/// The layer a heading names, if any. Words are compared case-insensitively after dropping
/// the section number. In order: the word before `layer` (`## 1. Data Layer`); then any
/// testing word, since "Integration tests" are tests; then the first word that names a
/// layer (`## 2. Core logic`, `## 3. CLI wiring`). `None` when no word does.
pub fn classify_heading(title: &str) -> Option<Layer> {
    let lower = title.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && !w.bytes().all(|b| b.is_ascii_digit()))
        .collect();
    if let Some(pos) = words.iter().position(|w| *w == "layer")
        && pos > 0
        && let Some(layer) = word_layer(words[pos - 1])
    {
        return Some(layer);
    }
    if words.iter().any(|w| word_layer(w) == Some(Layer::Testing)) {
        return Some(Layer::Testing);
    }
    words.iter().find_map(|w| word_layer(w))
}

fn word_layer(word: &str) -> Option<Layer> {
    Some(match word {
        "data" | "database" | "db" | "schema" | "schemas" | "model" | "models" | "storage"
        | "persistence" | "migration" | "migrations" | "entity" | "entities" => Layer::Data,
        "logic" | "core" | "domain" | "business" | "service" | "services" | "engine" | "rules" => {
            Layer::Logic
        }
        "integration" | "integrations" | "api" | "apis" | "cli" | "ui" | "wiring" | "interface"
        | "endpoint" | "endpoints" | "command" | "commands" | "frontend" => Layer::Integration,
        "test" | "tests" | "testing" | "verification" | "verify" | "qa" | "e2e" => Layer::Testing,
        _ => return None,
    })
}

/// Parses `tasks.md` of the change in the folder `folder_id`.
pub fn parse_tasks(text: &str, folder_id: &str) -> Result<TaskList, TasksError> {
    let scan = scan(text);
    let front: FrontMatter = match scan.front_matter.as_deref() {
        Some(yaml) if !yaml.trim().is_empty() => {
            serde_saphyr::from_str(yaml).map_err(|e| TasksError::FrontMatter {
                // The YAML starts on line 2, after the opening `---`.
                line: e.location().map(|l| l.line() + 1).filter(|&l| l > 1),
                message: e.to_string(),
            })?
        }
        _ => FrontMatter::default(),
    };
    let (change_id, change_id_source) = match front.change_id.filter(|id| !id.trim().is_empty()) {
        Some(id) => {
            check_id(&id).map_err(|e| TasksError::FrontMatter {
                line: None,
                message: e.to_string(),
            })?;
            if id != folder_id {
                return Err(TasksError::WrongChange {
                    front_matter: id,
                    folder: folder_id.to_owned(),
                });
            }
            (id, ChangeIdSource::FrontMatter)
        }
        None => (folder_id.to_owned(), ChangeIdSource::Folder),
    };
    let tasks: Vec<Task> = scan.items.into_iter().map(|(t, _)| t).collect();
    let unclassified = (0..tasks.len())
        .filter(|&i| tasks[i].layer.is_none())
        .collect();
    Ok(TaskList {
        change_id,
        change_id_source,
        tasks,
        unclassified,
    })
}

/// Ticks the box of task `task_id` and returns the new text; every other byte is unchanged.
/// Ticking a ticked task returns the text as it is.
pub fn check_off(text: &str, task_id: &str) -> Result<String, TasksError> {
    check_off_many(text, &[task_id])
}

/// Ticks the boxes of every task in `task_ids` in one pass over the text (ticking them one by
/// one would read the whole file once per task); every other byte is unchanged. Each id must
/// name exactly one task, or nothing is ticked.
pub fn check_off_many(text: &str, task_ids: &[&str]) -> Result<String, TasksError> {
    let mut by_id: HashMap<String, Vec<Range<usize>>> = HashMap::new();
    for (task, marker) in scan(text).items {
        if let Some(id) = task.id {
            by_id.entry(id).or_default().push(marker);
        }
    }
    let mut boxes = Vec::with_capacity(task_ids.len());
    for id in task_ids {
        let marker = match by_id.get(*id).map(Vec::as_slice) {
            Some([one]) => one.clone(),
            None | Some([]) => {
                return Err(TasksError::UnknownTask {
                    id: (*id).to_owned(),
                });
            }
            Some(many) => {
                return Err(TasksError::AmbiguousTask {
                    id: (*id).to_owned(),
                    count: many.len(),
                });
            }
        };
        // The marker event spans `[ ]`; the box's inside is the byte after its `[`.
        if let Some(at) = text[marker.clone()].find('[').map(|i| marker.start + i + 1)
            && text.as_bytes().get(at) == Some(&b' ')
        {
            boxes.push(at);
        }
    }
    boxes.sort_unstable();
    boxes.dedup();
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for at in boxes {
        out.push_str(&text[from..at]);
        out.push('x');
        from = at + 1;
    }
    out.push_str(&text[from..]);
    Ok(out)
}

/// Writes a `tasks.md` with `change_id` front matter and numbered sections and items:
/// `sections` are `(heading, items)`, e.g. `("Data Layer", &["Add the table"])` becomes
/// `## 1. Data Layer` and `- [ ] 1.1 Add the table`.
pub fn render_tasks(change_id: &str, sections: &[(&str, &[&str])]) -> String {
    let mut out = format!("---\nchange_id: {change_id}\n---\n\n# Tasks\n");
    for (i, (heading, items)) in sections.iter().enumerate() {
        out.push_str(&format!("\n## {}. {heading}\n\n", i + 1));
        for (j, item) in items.iter().enumerate() {
            out.push_str(&format!("- [ ] {}.{} {item}\n", i + 1, j + 1));
        }
    }
    out
}

#[cfg(test)]
mod tests;
