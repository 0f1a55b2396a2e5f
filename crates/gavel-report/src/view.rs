//! What the pages show, read from a store (a [`RunStore`]; the spend page, [`crate::spend`],
//! also asks for its `SpendStore`): a run's path through its graph, its timeline, gates, model
//! calls and spend, its lineage files (drafts with their diffs, verdicts: by the
//! [`ArtifactKind`] each file's workflow declared, never by its name), and the diff-gate
//! decisions it journaled. Only reads; every text here is still untrusted and is escaped (or
//! rendered by [`crate::markdown`]) by the templates.

use gavel_core::{ArtifactKind, ContentHash, Event, EventKind, RunId, RunStore};
use gavel_diffgate::AuditEvent;

use crate::diff::{self, DiffLine};
use crate::error::ReportError;
use crate::ledger::{self, CallRow};
use crate::listing::{self, RunRow};
pub use crate::spend::{SpendView, spend_view};

/// An edge of the graph the run took, with how often.
#[derive(Debug, Clone)]
pub struct Edge {
    pub from: String,
    pub to: String,
    pub count: usize,
}

/// One line of the timeline.
#[derive(Debug, Clone)]
pub struct TimelineItem {
    pub at: String,
    /// `node`, `gate`, `answer`, `file`, `call`, `note`, `halt`, `fail`, `done`, `abort`, `other`.
    pub kind: &'static str,
    pub text: String,
    /// The file page of an artifact line.
    pub file: Option<usize>,
}

/// A gate and its answer.
#[derive(Debug, Clone)]
pub struct GateItem {
    pub gate: String,
    pub kind: String,
    pub asked_at: String,
    pub choice: Option<String>,
    pub by: Option<String>,
    pub answered_at: Option<String>,
}

/// A file the run wrote into its lineage, as stored (its bytes are a blob).
#[derive(Debug, Clone)]
pub struct FileItem {
    /// Its number on the run's pages (`files/{k}.html`).
    pub k: usize,
    pub path: String,
    pub name: String,
    pub at: String,
    /// The blob holding its bytes.
    pub content: ContentHash,
    /// What the file is, as its workflow declared it (`None`: a file older gavels wrote
    /// under a name that says nothing).
    pub kind: Option<ArtifactKind>,
}

/// A verdict of the review history.
#[derive(Debug, Clone)]
pub struct VerdictItem {
    pub name: String,
    pub at: String,
    pub html: String,
    pub file: usize,
}

/// A diff-gate decision the run journaled.
#[derive(Debug, Clone)]
pub struct AuditItem {
    pub at: String,
    pub decision: String,
    pub by: String,
    pub tree: String,
    pub files_changed: usize,
    pub flagged: Vec<String>,
    pub reason: String,
}

/// Everything the run page shows.
#[derive(Debug, Clone)]
pub struct RunView {
    pub row: RunRow,
    /// The nodes in the order they ran.
    pub path: Vec<String>,
    pub edges: Vec<Edge>,
    pub timeline: Vec<TimelineItem>,
    pub gates: Vec<GateItem>,
    pub calls: Vec<CallRow>,
    pub spend: String,
    /// The run's budget against what it spent (from its newest checkpoint), when it has one.
    pub budget: Option<String>,
    pub spend_by_role: Vec<(String, String)>,
    pub files: Vec<FileItem>,
    pub verdicts: Vec<VerdictItem>,
    pub audits: Vec<AuditItem>,
}

/// One lineage file: rendered when it is Markdown, and a draft's diff against the one before.
#[derive(Debug, Clone)]
pub struct FileView {
    pub run: RunRow,
    pub file: FileItem,
    /// Markdown rendered safely, or `None` for other text (shown as is).
    pub html: Option<String>,
    pub text: String,
    /// The draft before this one, and the changes since it.
    pub previous: Option<FileItem>,
    pub diff: Vec<DiffLine>,
}

/// Reads run `id` for its page; `None` when the store has no such run.
pub fn run_view(store: &dyn RunStore, id: RunId) -> Result<Option<RunView>, ReportError> {
    let Some(record) = store.run(id)? else {
        return Ok(None);
    };
    let events = store.events(id)?;
    let row = listing::row_from(store, &record, &events)?;
    let path: Vec<String> = store
        .checkpoints(id)?
        .into_iter()
        .filter_map(|c| c.node)
        .collect();
    let files = files(&events);
    let mut verdicts = Vec::new();
    for f in files
        .iter()
        .filter(|f| f.kind == Some(ArtifactKind::Verdict))
    {
        let text = file_text(store, f)?;
        verdicts.push(VerdictItem {
            name: f.name.clone(),
            at: f.at.clone(),
            html: crate::markdown::to_html(&text),
            file: f.k,
        });
    }
    let calls = ledger::calls(&events);
    let (total, by_role) = ledger::totals(&calls);
    Ok(Some(RunView {
        edges: edges(&events),
        timeline: timeline(&events),
        gates: gates(&events),
        spend: total.summary(),
        budget: budget_line(store, id)?,
        spend_by_role: by_role
            .into_iter()
            .map(|(role, t)| (role, t.summary()))
            .collect(),
        calls,
        audits: audits(store, id)?,
        row,
        path,
        files,
        verdicts,
    }))
}

/// `$0.0448 spent of a $0.5000 budget (9%)`: the budget and spend the run's newest checkpoint
/// keeps ([`gavel_core::Spend`], which every workflow's state embeds); `None` when the run has
/// no budget.
fn budget_line(store: &dyn RunStore, id: RunId) -> Result<Option<String>, ReportError> {
    let Some(head) = store.head(id)? else {
        return Ok(None);
    };
    let Some(spend) = gavel_core::Spend::of_state(&head.state) else {
        return Ok(None);
    };
    let Some(budget) = spend.budget_micros else {
        return Ok(None);
    };
    let spent = spend.spent_micros;
    let share = if budget == 0 {
        String::new()
    } else {
        format!(" ({}%)", u128::from(spent) * 100 / u128::from(budget))
    };
    Ok(Some(format!(
        "{} spent of a {} budget{share}",
        gavel_llm::price::usd(spent),
        gavel_llm::price::usd(budget)
    )))
}

/// Reads file `k` of run `id` for its page; `None` when there is no such run or file.
pub fn file_view(
    store: &dyn RunStore,
    id: RunId,
    k: usize,
) -> Result<Option<FileView>, ReportError> {
    let Some(record) = store.run(id)? else {
        return Ok(None);
    };
    let events = store.events(id)?;
    let run = listing::row_from(store, &record, &events)?;
    let all = files(&events);
    if k >= all.len() {
        return Ok(None);
    }
    file_view_of(store, &run, &all, k).map(Some)
}

/// Every file page of the run `view` shows (a report writes them all), from what its page
/// already read: each file's text is read once, also when it is the next draft's "before".
pub fn file_views(store: &dyn RunStore, view: &RunView) -> Result<Vec<FileView>, ReportError> {
    let mut texts: Vec<String> = Vec::with_capacity(view.files.len());
    for f in &view.files {
        texts.push(file_text(store, f)?);
    }
    Ok((0..view.files.len())
        .map(|k| file_view_from(&view.row, &view.files, k, |i| texts[i].clone()))
        .collect())
}

/// File `k` of `all`: its text, rendered when Markdown, and its diff against the version
/// before it.
fn file_view_of(
    store: &dyn RunStore,
    run: &RunRow,
    all: &[FileItem],
    k: usize,
) -> Result<FileView, ReportError> {
    let mut texts: Vec<Option<String>> = vec![None; all.len()];
    for i in [Some(k), previous_version(all, k)].into_iter().flatten() {
        texts[i] = Some(file_text(store, &all[i])?);
    }
    Ok(file_view_from(run, all, k, |i| {
        texts[i].clone().unwrap_or_default()
    }))
}

/// The index of the version of file `k` written before it (drafts and verdicts), if any.
fn previous_version(all: &[FileItem], k: usize) -> Option<usize> {
    let kind = all[k].kind.as_ref().filter(|kind| has_versions(kind))?;
    (0..k).rev().find(|&i| all[i].kind.as_ref() == Some(kind))
}

/// File `k`'s page from the texts of `all` (`text(i)`: file `i`'s text).
fn file_view_from(
    run: &RunRow,
    all: &[FileItem],
    k: usize,
    text: impl Fn(usize) -> String,
) -> FileView {
    let file = all[k].clone();
    let body = text(k);
    let before = previous_version(all, k);
    let diff = match before {
        Some(i) => diff::lines(&text(i), &body),
        None => Vec::new(),
    };
    let html = file
        .name
        .ends_with(".md")
        .then(|| crate::markdown::to_html(&body));
    FileView {
        run: run.clone(),
        file,
        html,
        text: body,
        previous: before.map(|i| all[i].clone()),
        diff,
    }
}

/// Whether files of `kind` are versions of one document, each compared with the one before:
/// drafts, verdicts, designs and proposals. (A change's specs are one document per capability,
/// and the other kinds are not revised.)
fn has_versions(kind: &ArtifactKind) -> bool {
    matches!(
        kind,
        ArtifactKind::Draft | ArtifactKind::Verdict | ArtifactKind::Design | ArtifactKind::Proposal
    )
}

/// The lineage files of a timeline (artifacts with content), numbered in the order they were
/// written.
fn files(events: &[Event]) -> Vec<FileItem> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Artifact {
                path,
                content: Some(hash),
                kind,
            } => Some((e, path, hash, kind)),
            _ => None,
        })
        .enumerate()
        .map(|(k, (e, path, hash, kind))| FileItem {
            k,
            name: path.rsplit('/').next().unwrap_or(path).to_owned(),
            path: path.clone(),
            at: e.at.clone(),
            content: hash.clone(),
            kind: kind.clone(),
        })
        .collect()
}

/// A file's bytes, as text (empty when its blob is gone).
fn file_text(store: &dyn RunStore, file: &FileItem) -> Result<String, ReportError> {
    Ok(store
        .get_blob(&file.content)?
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default())
}

fn edges(events: &[Event]) -> Vec<Edge> {
    let mut counts: Vec<Edge> = Vec::new();
    for e in events {
        if let EventKind::Node { node, next, .. } = &e.kind {
            let to = next.clone().unwrap_or_else(|| "end".to_owned());
            match counts.iter_mut().find(|x| x.from == *node && x.to == to) {
                Some(edge) => edge.count += 1,
                None => counts.push(Edge {
                    from: node.clone(),
                    to,
                    count: 1,
                }),
            }
        }
    }
    counts
}

fn gates(events: &[Event]) -> Vec<GateItem> {
    let mut out: Vec<GateItem> = Vec::new();
    for e in events {
        match &e.kind {
            EventKind::GateWaiting { gate, kind } => out.push(GateItem {
                gate: gate.clone(),
                kind: kind.clone(),
                asked_at: e.at.clone(),
                choice: None,
                by: None,
                answered_at: None,
            }),
            EventKind::GateAnswered { gate, choice, by } => {
                match out
                    .iter_mut()
                    .rev()
                    .find(|g| g.gate == *gate && g.choice.is_none())
                {
                    Some(g) => {
                        g.choice = Some(choice.clone());
                        g.by = Some(by.clone());
                        g.answered_at = Some(e.at.clone());
                    }
                    // Answered without a pause (auto mode): asked and answered at once.
                    None => out.push(GateItem {
                        gate: gate.clone(),
                        kind: String::new(),
                        asked_at: e.at.clone(),
                        choice: Some(choice.clone()),
                        by: Some(by.clone()),
                        answered_at: Some(e.at.clone()),
                    }),
                }
            }
            _ => {}
        }
    }
    out
}

fn timeline(events: &[Event]) -> Vec<TimelineItem> {
    let mut file = 0usize;
    events
        .iter()
        .map(|e| {
            let (kind, text, link) = match &e.kind {
                EventKind::Node { node, next, seq } => (
                    "node",
                    format!(
                        "{node} → {} (checkpoint {seq})",
                        next.as_deref().unwrap_or("end")
                    ),
                    None,
                ),
                EventKind::GateWaiting { gate, kind } => {
                    ("gate", format!("waiting at gate {gate} ({kind})"), None)
                }
                EventKind::GateAnswered { gate, choice, by } => {
                    ("answer", format!("gate {gate}: {choice} (by {by})"), None)
                }
                EventKind::Artifact { path, content, .. } => {
                    let link = content.as_ref().map(|_| {
                        file += 1;
                        file - 1
                    });
                    ("file", path.clone(), link)
                }
                EventKind::ModelCall {
                    role,
                    provider,
                    model,
                    ledger,
                } => (
                    "call",
                    match ledger {
                        Some(l) => format!(
                            "call #{} {role} · {provider} · {} → {model}",
                            l.n, l.requested_model
                        ),
                        None => format!("call {role} · {provider} · {model}"),
                    },
                    None,
                ),
                EventKind::Note { text } => ("note", text.clone(), None),
                EventKind::Halted { reason } => ("halt", format!("halted: {reason}"), None),
                EventKind::Failed { error } => ("fail", format!("failed: {error}"), None),
                EventKind::Done { summary } => ("done", format!("done: {summary}"), None),
                EventKind::Aborted { reason } => ("abort", format!("aborted: {reason}"), None),
                EventKind::Time(t) => ("time", format!("this drive: {}", t.describe()), None),
                // As `gavel show` says it: the stored JSON is not for the page.
                EventKind::Unknown { event, .. } => (
                    "other",
                    format!("unknown `{event}` (from a newer gavel)"),
                    None,
                ),
                other => ("other", format!("{other:?}"), None),
            };
            TimelineItem {
                at: e.at.clone(),
                kind,
                text,
                file: link,
            }
        })
        .collect()
}

/// The diff-gate decisions journaled by the run (`…:diff-audit` steps hold the audit line).
fn audits(store: &dyn RunStore, id: RunId) -> Result<Vec<AuditItem>, ReportError> {
    let mut out = Vec::new();
    for (step, bytes) in store.journal(id)? {
        if !step.ends_with(":diff-audit") {
            continue;
        }
        let Ok(line) = serde_json::from_slice::<String>(&bytes) else {
            continue;
        };
        let Ok(event) = serde_json::from_str::<AuditEvent>(line.trim()) else {
            continue;
        };
        out.push(AuditItem {
            at: event.timestamp,
            decision: serde_json::to_value(event.decision)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_else(|| "unknown".to_owned()),
            by: event.by.unwrap_or_default(),
            tree: event.tree.unwrap_or_default(),
            files_changed: event.files_changed,
            flagged: event.flagged_files,
            reason: event.reason.unwrap_or_default(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_from_a_newer_gavel_is_named_not_dumped() {
        let event: Event = serde_json::from_str(
            r#"{"at":"2026-01-01T00:00:00Z","event":"teleported","secret":"raw json"}"#,
        )
        .expect("an unknown event still loads");
        let items = timeline(&[event]);
        assert_eq!(items[0].text, "unknown `teleported` (from a newer gavel)");
    }
}
