//! The pages as one site, addressed by relative paths that are the same whether `gavel ui`
//! serves them (under its token) or `gavel report --html` writes them as files:
//!
//! - `index.html` — the runs (filters and pages when served; `runs-page-N.html` as files)
//! - `runs/{id}/index.html` — a run
//! - `runs/{id}/files/{k}.html` — a lineage file of the run, a draft with its diff
//! - `spend.html` — spend by day, workflow and role
//! - `changes.html`, `changes/{id}.html` — the board of spec-driven changes, and each change
//! - `style.css`
//!
//! Every link is relative, so a written report can be moved or published as it is.

use std::fs;
use std::path::{Path, PathBuf};

use askama::Template;
use gavel_core::{RunId, Store};

use crate::changes::{ChangeCard, ChangeSource, PHASES, is_change_id};
use crate::error::ReportError;
use crate::pages::{
    CallLine, ChangeTemplate, ChangesTemplate, Chart, ErrorTemplate, FileTemplate, ListedRun,
    RunTemplate, RunsTemplate, SpendTemplate,
};
use crate::query::{RunsQuery, STATUSES};
use crate::{listing, view};

/// The stylesheet every page links.
pub const STYLE: &str = include_str!("../templates/style.css");

/// The policy's one text: no script at all, only the site's own stylesheet (`file:` too, so a
/// report opened from disk is styled).
macro_rules! page_csp {
    () => {
        "default-src 'none'; style-src 'self' file:; img-src 'self'; base-uri 'none'; \
         form-action 'self'"
    };
}

/// The Content-Security-Policy every page carries in its `<meta>` tag (`templates/base.html`).
pub const PAGE_CSP: &str = page_csp!();

/// The policy `gavel ui` sends as a header: the pages' own, plus what a `<meta>` tag cannot
/// say (browsers ignore `frame-ancestors` there): no page may frame these.
pub const SERVED_CSP: &str = concat!(page_csp!(), "; frame-ancestors 'none'");

/// Whether the pages are served (filters work) or written as files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SiteMode {
    Served,
    Static,
}

/// A page's body and type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Page {
    Html(String),
    Css(&'static str),
}

/// The pages of one store.
pub struct Site<'a> {
    store: &'a dyn Store,
    mode: SiteMode,
    changes: Option<ChangeSource<'a>>,
}

fn render(t: &impl Template, page: &str) -> Result<String, ReportError> {
    t.render().map_err(|e| ReportError::Render {
        page: page.to_owned(),
        message: e.to_string(),
    })
}

impl<'a> Site<'a> {
    pub fn new(store: &'a dyn Store, mode: SiteMode) -> Self {
        Self {
            store,
            mode,
            changes: None,
        }
    }

    /// The site with a board of the repository's changes, read by `source` when shown.
    pub fn with_changes(mut self, source: ChangeSource<'a>) -> Self {
        self.changes = Some(source);
        self
    }

    fn change_cards(&self) -> Vec<ChangeCard> {
        self.changes.map(|read| read()).unwrap_or_default()
    }

    /// The page at `path` (relative, without a leading `/`), `None` when there is none.
    pub fn route(&self, path: &str, query: &RunsQuery) -> Result<Option<Page>, ReportError> {
        let parts: Vec<&str> = path.split('/').collect();
        Ok(match parts.as_slice() {
            [""] | ["index.html"] => Some(Page::Html(self.runs_page(query)?)),
            ["spend.html"] => Some(Page::Html(self.spend_page(None)?)),
            ["style.css"] => Some(Page::Css(STYLE)),
            ["changes.html"] => Some(Page::Html(self.changes_page()?)),
            ["changes", file] => match file.strip_suffix(".html").filter(|id| is_change_id(id)) {
                Some(id) => self.change_page(id)?.map(Page::Html),
                None => None,
            },
            ["runs", id, ""] | ["runs", id, "index.html"] => match parse_id(id) {
                Some(id) => self.run_page(id)?.map(Page::Html),
                None => None,
            },
            ["runs", id, "files", file] => {
                let k = file
                    .strip_suffix(".html")
                    .filter(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
                    .and_then(|k| k.parse::<usize>().ok());
                match (parse_id(id), k) {
                    (Some(id), Some(k)) => self.file_page(id, k)?.map(Page::Html),
                    _ => None,
                }
            }
            _ => None,
        })
    }

    /// The runs page for `query`.
    pub fn runs_page(&self, query: &RunsQuery) -> Result<String, ReportError> {
        let selected = query.select(self.store)?;
        let rows = selected
            .runs
            .iter()
            .map(|r| {
                let row = listing::row(self.store, r)?;
                Ok(ListedRun {
                    href: format!("runs/{}/index.html", r.id),
                    cost: gavel_llm::price::usd(row.spend.cost_micros),
                    row,
                })
            })
            .collect::<Result<Vec<_>, ReportError>>()?;
        let link = |page: usize| match self.mode {
            SiteMode::Served => format!(
                "index.html{}",
                RunsQuery {
                    page: Some(page),
                    ..query.filters()
                }
                .to_query_string()
            ),
            SiteMode::Static if page == 1 => "index.html".to_owned(),
            SiteMode::Static => format!("runs-page-{page}.html"),
        };
        let text = |v: &Option<String>| v.clone().unwrap_or_default();
        render(
            &RunsTemplate {
                root: "",
                served: self.mode == SiteMode::Served,
                rows,
                matched: selected.matched,
                page: selected.page,
                pages: selected.pages,
                prev: (selected.page > 1).then(|| link(selected.page - 1)),
                next: (selected.page < selected.pages).then(|| link(selected.page + 1)),
                workflows: selected.workflows,
                statuses: STATUSES,
                workflow: text(&query.workflow),
                status: text(&query.status),
                since: text(&query.since),
                until: text(&query.until),
            },
            "the runs page",
        )
    }

    /// The page of run `id`, `None` when the store has no such run.
    pub fn run_page(&self, id: RunId) -> Result<Option<String>, ReportError> {
        view::run_view(self.store, id)?
            .map(|v| render_run(&v))
            .transpose()
    }

    /// The page of file `k` of run `id`.
    pub fn file_page(&self, id: RunId, k: usize) -> Result<Option<String>, ReportError> {
        view::file_view(self.store, id, k)?
            .map(|f| render_file(&f))
            .transpose()
    }

    /// The spend page: every run's, or only those of `only` (a report of chosen runs).
    pub fn spend_page(&self, only: Option<&[RunId]>) -> Result<String, ReportError> {
        let s = view::spend_view(self.store, only)?;
        render(
            &SpendTemplate {
                root: "",
                total: gavel_llm::price::usd(s.total_micros),
                calls: s.calls,
                unpriced: s.unpriced,
                runs: s.runs,
                charts: vec![
                    Chart::of("day", &s.by_day),
                    Chart::of("workflow", &s.by_workflow),
                    Chart::of("role", &s.by_role),
                ],
            },
            "the spend page",
        )
    }

    /// The board of changes by phase.
    pub fn changes_page(&self) -> Result<String, ReportError> {
        render_board(&self.change_cards())
    }

    /// The page of change `id`, `None` when the repository has no such change.
    pub fn change_page(&self, id: &str) -> Result<Option<String>, ReportError> {
        self.change_cards()
            .iter()
            .find(|c| c.id == id)
            .map(render_change)
            .transpose()
    }

    /// A page saying what went wrong (`root`: the way back to the site's top).
    pub fn error_page(root: &str, title: &str, message: &str) -> String {
        ErrorTemplate {
            root,
            title,
            message,
        }
        .render()
        .unwrap_or_else(|_| format!("{title}: {message}"))
    }

    /// Writes the pages of `runs` (every run when `None`) under `dir`: the runs list, each run
    /// with its files, the spend page and the stylesheet. Returns the files written.
    pub fn export(&self, dir: &Path, runs: Option<&[RunId]>) -> Result<Vec<PathBuf>, ReportError> {
        let mut written = Vec::new();
        let mut put = |rel: &str, body: &str| -> Result<(), ReportError> {
            let path = dir.join(rel);
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent).map_err(|source| ReportError::Write {
                    path: parent.display().to_string(),
                    source,
                })?;
            }
            fs::write(&path, body).map_err(|source| ReportError::Write {
                path: path.display().to_string(),
                source,
            })?;
            written.push(path);
            Ok(())
        };
        put("style.css", STYLE)?;
        let ids: Vec<RunId> = match runs {
            Some(ids) => ids.to_vec(),
            None => self.store.runs()?.into_iter().map(|r| r.id).collect(),
        };
        // The list pages: every run, or only the chosen ones.
        if runs.is_none() {
            let first = RunsQuery::default().select(self.store)?;
            for page in 1..=first.pages {
                let q = RunsQuery {
                    page: Some(page),
                    ..RunsQuery::default()
                };
                let name = if page == 1 {
                    "index.html".to_owned()
                } else {
                    format!("runs-page-{page}.html")
                };
                put(&name, &self.runs_page(&q)?)?;
            }
        } else {
            put("index.html", &self.listed_only(&ids)?)?;
        }
        put("spend.html", &self.spend_page(runs)?)?;
        let cards = self.change_cards();
        put("changes.html", &render_board(&cards)?)?;
        for card in cards.iter().filter(|c| c.linkable()) {
            put(&format!("changes/{}.html", card.id), &render_change(card)?)?;
        }
        for id in ids {
            let Some(v) = view::run_view(self.store, id)? else {
                continue;
            };
            put(&format!("runs/{id}/index.html"), &render_run(&v)?)?;
            for f in view::file_views(self.store, &v)? {
                put(
                    &format!("runs/{id}/files/{}.html", f.file.k),
                    &render_file(&f)?,
                )?;
            }
        }
        Ok(written)
    }

    /// A runs page listing only `ids` (a report of chosen runs).
    fn listed_only(&self, ids: &[RunId]) -> Result<String, ReportError> {
        // Newest first, as on every runs page, whatever order they were named in.
        let mut ids = ids.to_vec();
        ids.sort_by(|a, b| b.cmp(a));
        let mut rows = Vec::new();
        for id in ids {
            if let Some(r) = self.store.run(id)? {
                let row = listing::row(self.store, &r)?;
                rows.push(ListedRun {
                    href: format!("runs/{id}/index.html"),
                    cost: gavel_llm::price::usd(row.spend.cost_micros),
                    row,
                });
            }
        }
        render(
            &RunsTemplate {
                root: "",
                served: false,
                matched: rows.len(),
                rows,
                page: 1,
                pages: 1,
                prev: None,
                next: None,
                workflows: Vec::new(),
                statuses: STATUSES,
                workflow: String::new(),
                status: String::new(),
                since: String::new(),
                until: String::new(),
            },
            "the runs page",
        )
    }
}

fn render_file(f: &view::FileView) -> Result<String, ReportError> {
    render(
        &FileTemplate {
            root: "../../../",
            f,
        },
        &format!("file {} of run {}", f.file.k, f.run.id),
    )
}

fn render_change(card: &ChangeCard) -> Result<String, ReportError> {
    let docs = card
        .documents
        .iter()
        .map(|(name, text)| (name.clone(), crate::markdown::to_html(text)))
        .collect();
    render(
        &ChangeTemplate {
            root: "../",
            c: card,
            docs,
        },
        &format!("change {}", card.id),
    )
}

/// A run id from a path segment: digits only.
fn parse_id(s: &str) -> Option<RunId> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse::<i64>().ok().map(RunId)
}

/// The board: `cards` in the columns of their phases, empty columns left out.
fn render_board(cards: &[ChangeCard]) -> Result<String, ReportError> {
    let cards_total = cards.len();
    let mut columns: Vec<(&'static str, Vec<ChangeCard>)> =
        PHASES.iter().map(|p| (*p, Vec::new())).collect();
    for card in cards {
        let at = columns
            .iter()
            .position(|(p, _)| *p == card.phase)
            .unwrap_or(columns.len() - 1);
        columns[at].1.push(card.clone());
    }
    columns.retain(|(_, cards)| !cards.is_empty());
    render(
        &ChangesTemplate {
            root: "",
            columns,
            cards_total,
        },
        "the changes page",
    )
}

/// A run's page from its view.
fn render_run(v: &view::RunView) -> Result<String, ReportError> {
    let calls = v.calls.iter().map(CallLine::of).collect();
    let graph = crate::graph::layout(&v.path, &v.edges);
    render(
        &RunTemplate {
            root: "../../",
            v,
            calls,
            graph,
        },
        &format!("run {}", v.row.id),
    )
}
