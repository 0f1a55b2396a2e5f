//! The Markdown half of the verdict grammar: one walk over pulldown-cmark's events that finds
//! JSON verdict blocks, verdict boxes, prose verdict lines and verdict mentions, and says where
//! each one is (the top level, or quoted). Code blocks are read again as documents, so a verdict
//! quoted inside a ````` ````markdown ````` fence is seen as quoted, not missed.

use super::json::{JsonVerdict, Read, read_json};
use super::{Decision, MAX_DEPTH};
use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

/// Something the scanner found.
#[derive(Debug)]
pub(super) enum What {
    Json(JsonVerdict),
    Box(Decision),
    Prose(Decision),
    Malformed(String),
    Mention,
}

impl What {
    pub(super) fn describe(&self) -> String {
        match self {
            Self::Json(j) => format!("a JSON verdict block ({}) is", j.decision.as_str()),
            Self::Box(d) => format!("a checked {} box is", d.as_str()),
            Self::Prose(d) => format!("a \"Verdict: {}\" line is", d.as_str()),
            Self::Malformed(_) => "a malformed verdict is".into(),
            Self::Mention => "a verdict is mentioned".into(),
        }
    }
}

/// A find and where it is: `None` at the top level, else a phrase such as "inside a block quote".
#[derive(Debug)]
pub(super) struct Hit {
    pub(super) what: What,
    pub(super) place: Option<String>,
}

#[derive(Debug, PartialEq)]
enum Container {
    Quote,
    List,
    Item,
}

/// A code block being read.
struct Code {
    /// The info string of a fenced block; `None` for an indented one.
    info: Option<String>,
    start: usize,
    text: String,
}

/// Walks one document's events. `outer` is set when the document is the content of a code
/// block: then everything found is quoted, at that place.
struct Scanner<'a> {
    src: &'a str,
    depth: usize,
    outer: Option<String>,
    stack: Vec<Container>,
    /// The current line of inline text, and the task marker it started with.
    line: String,
    task: Option<bool>,
    code: Option<Code>,
    html: Option<String>,
    hits: Vec<Hit>,
}

pub(super) fn scan(src: &str, depth: usize, outer: Option<String>) -> Vec<Hit> {
    let mut s = Scanner {
        src,
        depth,
        outer,
        stack: Vec::new(),
        line: String::new(),
        task: None,
        code: None,
        html: None,
        hits: Vec::new(),
    };
    for (event, range) in Parser::new_ext(src, Options::ENABLE_TASKLISTS).into_offset_iter() {
        s.event(event, range.start);
    }
    s.flush();
    s.hits
}

impl Scanner<'_> {
    fn event(&mut self, event: Event<'_>, start: usize) {
        if let Some(code) = &mut self.code {
            match event {
                Event::Text(t) => code.text.push_str(&t),
                Event::End(TagEnd::CodeBlock) => {
                    if let Some(code) = self.code.take() {
                        self.code_block(code);
                    }
                }
                _ => {}
            }
            return;
        }
        if let Some(html) = &mut self.html {
            match event {
                Event::Html(t) | Event::Text(t) => html.push_str(&t),
                Event::End(TagEnd::HtmlBlock) => {
                    if let Some(html) = self.html.take() {
                        self.html_block(&html);
                    }
                }
                _ => {}
            }
            return;
        }
        match event {
            Event::Start(tag) => self.start(tag, start),
            Event::End(TagEnd::BlockQuote(_) | TagEnd::List(_) | TagEnd::Item) => {
                self.flush();
                self.stack.pop();
            }
            Event::End(TagEnd::Paragraph | TagEnd::Heading(_)) => self.flush(),
            Event::End(TagEnd::Link) => self.line.push(']'),
            Event::Text(t)
            | Event::Code(t)
            | Event::InlineHtml(t)
            | Event::Html(t)
            | Event::InlineMath(t)
            | Event::DisplayMath(t) => self.line.push_str(&t),
            Event::SoftBreak | Event::HardBreak | Event::Rule => self.flush(),
            Event::TaskListMarker(checked) => {
                self.flush();
                self.task = Some(checked);
            }
            Event::End(_) | Event::FootnoteReference(_) => {}
        }
    }

    fn start(&mut self, tag: Tag<'_>, start: usize) {
        let container = match tag {
            Tag::BlockQuote(_) => Container::Quote,
            Tag::List(_) => Container::List,
            Tag::Item => Container::Item,
            Tag::CodeBlock(kind) => {
                self.flush();
                let info = match kind {
                    CodeBlockKind::Fenced(info) => Some(info.into_string()),
                    CodeBlockKind::Indented => None,
                };
                let text = String::new();
                self.code = Some(Code { info, start, text });
                return;
            }
            Tag::HtmlBlock => {
                self.flush();
                self.html = Some(String::new());
                return;
            }
            Tag::Paragraph | Tag::Heading { .. } => return self.flush(),
            // A link keeps its brackets, so `[x]: url` cannot turn a bare `[x]` box into a link.
            Tag::Link { .. } => return self.line.push('['),
            _ => return, // other inline markup: its text joins the line
        };
        self.flush();
        self.stack.push(container);
    }

    /// Where a find at the current position is, `None` at the top level. Boxes may sit in a
    /// top-level list's items; JSON blocks may not.
    fn place(&self, is_box: bool) -> Option<String> {
        if let Some(outer) = &self.outer {
            return Some(outer.clone());
        }
        if self.stack.contains(&Container::Quote) {
            return Some("inside a block quote".into());
        }
        match self.stack.iter().filter(|c| **c == Container::Item).count() {
            0 => None,
            1 if is_box => None,
            1 => Some("inside a list item".into()),
            _ => Some("inside a nested list".into()),
        }
    }

    fn push(&mut self, what: What, place: Option<String>) {
        self.hits.push(Hit { what, place });
    }

    /// Ends the current line of inline text and reads it as a box or a prose verdict line.
    fn flush(&mut self) {
        let task = self.task.take();
        let line = std::mem::take(&mut self.line);
        let text = line.trim();
        let boxed = match task {
            Some(checked) => checked.then_some(text),
            None => bare_box(text),
        };
        if let Some(d) = boxed.and_then(box_verdict) {
            let place = self.place(true);
            self.push(What::Box(d), place);
        } else if self.outer.is_none()
            && !self.stack.contains(&Container::Quote)
            && let Some(d) = prose_verdict(text)
        {
            self.push(What::Prose(d), None);
        }
    }

    fn code_block(&mut self, code: Code) {
        let here = self.place(false);
        let text = code.text.trim();
        let (lang, block) = match &code.info {
            Some(info) => (
                Some(
                    info.split_whitespace()
                        .next()
                        .unwrap_or("")
                        .to_ascii_lowercase(),
                ),
                format!("inside a {} block", fence_opener(self.src, code.start)),
            ),
            None => (None, "inside an indented code block".into()),
        };
        if matches!(lang.as_deref(), Some("json" | "")) {
            match read_json(text) {
                Read::Verdict(decision, findings) => {
                    let body = text.to_owned();
                    let json = JsonVerdict {
                        decision,
                        findings,
                        body,
                    };
                    return self.push(What::Json(json), here);
                }
                Read::Malformed(reason) => return self.push(What::Malformed(reason), here),
                Read::NotVerdict => {}
            }
        }
        let inner = here.unwrap_or(block);
        if self.depth < MAX_DEPTH {
            let quoted = scan(text, self.depth + 1, Some(inner.clone()));
            self.hits.extend(quoted);
        }
        if mentions_verdict(text) {
            self.push(What::Mention, Some(inner));
        }
    }

    fn html_block(&mut self, html: &str) {
        if mentions_verdict(html) {
            let place = self.place(false);
            let place = place.unwrap_or_else(|| "inside an HTML block".into());
            self.push(What::Mention, Some(place));
        }
    }
}

/// The fence that opens the code block at `start`, with its language, e.g. ```` ````markdown ````.
fn fence_opener(src: &str, start: usize) -> String {
    let line = src
        .get(start..)
        .and_then(|s| s.lines().next())
        .unwrap_or("");
    let line = line.trim_start_matches([' ', '\t', '>']);
    let fence: String = line
        .chars()
        .take_while(|c| *c == '`' || *c == '~')
        .take(12)
        .collect();
    let lang: String = line
        .trim_start_matches(['`', '~'])
        .split_whitespace()
        .next()
        .unwrap_or("")
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || "+-._".contains(*c))
        .take(20)
        .collect();
    let fence = if fence.is_empty() { "```" } else { &fence };
    format!("{fence}{lang}")
}

/// Whether code or HTML mentions a verdict (see the module doc).
pub(super) fn mentions_verdict(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.contains("\"verdict\"")
        || lower.contains("'verdict'")
        || lower.lines().any(|line| {
            let line =
                line.trim_start_matches(|c: char| c.is_whitespace() || "#>-+*_`".contains(c));
            let Some(rest) = line.strip_prefix("verdict") else {
                return false;
            };
            let rest = rest.trim_start_matches(|c: char| c.is_whitespace() || "*_`".contains(c));
            (rest.starts_with(':') && !rest.starts_with("::"))
                || (rest.starts_with('=') && !rest.starts_with("=="))
        })
}

/// The text after a bare `[x]` that starts a line.
fn bare_box(text: &str) -> Option<&str> {
    let text = text.trim_start_matches(|c: char| c.is_whitespace() || c == '*' || c == '_');
    text.strip_prefix("[x]")
        .or_else(|| text.strip_prefix("[X]"))
}

/// A verdict word that starts `text` as a whole word, and the text after it.
fn leading_word(text: &str) -> Option<(Decision, &str)> {
    let end = text
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(text.len());
    let (word, rest) = text.split_at(end);
    let mut next = rest.chars();
    let joined = match next.next() {
        Some('-') => next.next().is_some_and(char::is_alphanumeric),
        Some(c) => c.is_alphanumeric() || c == '_',
        None => false,
    };
    if joined {
        return None;
    }
    Decision::parse(word).map(|d| (d, rest))
}

/// The decision of a box's text: one verdict word, then nothing or a separated reason.
fn box_verdict(text: &str) -> Option<Decision> {
    let text = text.trim_start_matches(|c: char| c.is_whitespace() || c == '*' || c == '_');
    let (decision, rest) = leading_word(text)?;
    let rest = rest.trim_start_matches(['*', '_']);
    let after = rest.trim_start();
    let separated = after.is_empty()
        || after.starts_with([':', '–', '—'])
        || (after.starts_with('-') && rest.starts_with(char::is_whitespace));
    separated.then_some(decision)
}

/// The decision named by a prose line `Verdict: WORD ...`.
fn prose_verdict(text: &str) -> Option<Decision> {
    let text = text.trim_start_matches(|c: char| c.is_whitespace() || c == '*' || c == '_');
    let head = text.get(..7)?;
    if !head.eq_ignore_ascii_case("verdict") {
        return None;
    }
    let rest = text.get(7..)?;
    if rest.starts_with(|c: char| c.is_alphanumeric() || c == '_') {
        return None;
    }
    let rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '*' || c == '_');
    let rest = rest.strip_prefix([':', '-', '–', '—']).unwrap_or(rest);
    let rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '*' || c == '_');
    leading_word(rest).map(|(d, _)| d)
}
