//! The templates (in `templates/`, checked at compile time, HTML-escaped by default) and the
//! values each one shows. Only [`crate::markdown`]'s output is inserted unescaped.

use askama::Template;

use crate::ledger::CallRow;
use crate::listing::RunRow;
use crate::view::{FileView, RunView};

/// A run on the runs page.
pub struct ListedRun {
    pub row: RunRow,
    pub href: String,
    pub cost: String,
}

#[derive(Template)]
#[template(path = "runs.html")]
pub struct RunsTemplate<'a> {
    pub root: &'a str,
    pub served: bool,
    pub rows: Vec<ListedRun>,
    pub matched: usize,
    pub page: usize,
    pub pages: usize,
    pub prev: Option<String>,
    pub next: Option<String>,
    pub workflows: Vec<String>,
    pub statuses: &'a [&'a str],
    pub workflow: String,
    pub status: String,
    pub since: String,
    pub until: String,
}

/// A model call as the run page shows it.
pub struct CallLine {
    pub n: u32,
    pub role: String,
    pub provider: String,
    pub requested: String,
    pub model: String,
    pub input: String,
    pub output: String,
    pub cost: String,
    pub warning: Option<String>,
    pub lost: bool,
    pub attempts: u32,
    /// How a verdict was asked for (structured output or plain text); `None` for a call that
    /// wanted plain text.
    pub form: Option<String>,
}

impl CallLine {
    pub fn of(c: &CallRow) -> Self {
        let l = &c.ledger;
        Self {
            n: l.n,
            role: c.role.clone(),
            provider: c.provider.clone(),
            requested: l.requested_model.clone(),
            model: c.model.clone(),
            input: l.input_tokens.map_or_else(|| "-".into(), |t| t.to_string()),
            output: l
                .output_tokens
                .map_or_else(|| "-".into(), |t| t.to_string()),
            cost: l.cost_micros.map_or_else(
                || "unpriced".into(),
                |c| format!("{} ({})", gavel_llm::price::usd(c), l.cost_source),
            ),
            warning: l.warning.clone(),
            lost: l.lost,
            attempts: l.attempts,
            form: l.form.as_deref().map(|name| {
                serde_json::from_value::<gavel_llm::AnswerForm>(serde_json::Value::from(name))
                    .map_or_else(|_| name.to_owned(), |f| f.as_str().to_owned())
            }),
        }
    }
}

#[derive(Template)]
#[template(path = "run.html")]
pub struct RunTemplate<'a> {
    pub root: &'a str,
    pub v: &'a RunView,
    pub calls: Vec<CallLine>,
    pub graph: crate::graph::Graph,
}

#[derive(Template)]
#[template(path = "file.html")]
pub struct FileTemplate<'a> {
    pub root: &'a str,
    pub f: &'a FileView,
}

/// One bar of a chart.
pub struct Bar {
    pub label: String,
    pub value: String,
    pub y: u32,
    pub width: u32,
}

/// A horizontal bar chart, drawn as SVG (no script, no inline style).
pub struct Chart {
    pub title: &'static str,
    pub height: u32,
    pub bars: Vec<Bar>,
}

impl Chart {
    /// Bars for `values` (micro-USD), scaled to the largest.
    pub fn of(title: &'static str, values: &[(String, u64)]) -> Self {
        let max = values.iter().map(|(_, v)| *v).max().unwrap_or(0).max(1);
        let bars: Vec<Bar> = values
            .iter()
            .zip(0u32..)
            .map(|((label, v), i)| Bar {
                label: label.clone(),
                value: gavel_llm::price::usd(*v),
                y: i * 22,
                width: u32::try_from(u128::from(*v) * 360 / u128::from(max)).unwrap_or(360),
            })
            .collect();
        let height = u32::try_from(bars.len()).unwrap_or(u32::MAX / 32) * 22 + 4;
        Self {
            title,
            height,
            bars,
        }
    }
}

#[derive(Template)]
#[template(path = "spend.html")]
pub struct SpendTemplate<'a> {
    pub root: &'a str,
    pub total: String,
    pub calls: u64,
    pub unpriced: u64,
    pub runs: usize,
    pub charts: Vec<Chart>,
}

#[derive(Template)]
#[template(path = "error.html")]
pub struct ErrorTemplate<'a> {
    pub root: &'a str,
    pub title: &'a str,
    pub message: &'a str,
}

#[derive(Template)]
#[template(path = "changes.html")]
pub struct ChangesTemplate<'a> {
    pub root: &'a str,
    pub columns: Vec<(&'static str, Vec<crate::changes::ChangeCard>)>,
    pub cards_total: usize,
}

#[derive(Template)]
#[template(path = "change.html")]
pub struct ChangeTemplate<'a> {
    pub root: &'a str,
    pub c: &'a crate::changes::ChangeCard,
    /// Each document's name and its safely rendered Markdown.
    pub docs: Vec<(String, String)>,
}
