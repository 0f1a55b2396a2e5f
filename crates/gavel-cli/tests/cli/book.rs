//! The book (docs/, built by mdBook in CI) holds together: SUMMARY.md lists every chapter and
//! only chapters that exist, and every relative link in the book, the README, ARCHITECTURE.md
//! and BENCHMARKS.md reaches a file (and a heading, when it names one). mdBook itself does not
//! check links, so a renamed chapter or heading would otherwise leave dead links behind.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every Markdown file under `dir`, as paths relative to it.
fn markdown_under(dir: &Path, prefix: &Path, out: &mut BTreeSet<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read docs/") {
        let path = entry.expect("entry").path();
        let name = prefix.join(path.file_name().expect("a name"));
        if path.is_dir() {
            markdown_under(&path, &name, out);
        } else if path.extension().is_some_and(|e| e == "md") {
            out.insert(name);
        }
    }
}

/// The link targets of `text`, in order.
fn links(text: &str) -> Vec<String> {
    Parser::new_ext(text, Options::ENABLE_TABLES)
        .filter_map(|event| match event {
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                Some(dest_url.to_string())
            }
            _ => None,
        })
        .collect()
}

/// The anchors mdBook (and GitHub) give `text`'s headings: lower case, spaces to dashes,
/// anything but letters, digits, `-` and `_` dropped.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut heading: Option<String> = None;
    for event in Parser::new_ext(text, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some(h) = heading.take() {
                    out.insert(
                        h.to_lowercase()
                            .chars()
                            .filter_map(|c| match c {
                                c if c.is_whitespace() => Some('-'),
                                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                                _ => None,
                            })
                            .collect(),
                    );
                }
            }
            _ => {}
        }
    }
    out
}

/// What is wrong with link `target` in the file at `from` (None: it resolves). `inside`: the
/// folder the link must stay in (the book's source folder), if any.
fn broken(from: &Path, target: &str, inside: Option<&Path>) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
    let file = if file.is_empty() {
        from.to_path_buf()
    } else {
        let dir = from.parent().expect("a folder");
        let joined = dir.join(file);
        let Ok(resolved) = joined.canonicalize() else {
            return Some(format!("`{target}`: no such file"));
        };
        if let Some(inside) = inside
            && !resolved.starts_with(inside)
        {
            return Some(format!(
                "`{target}` leaves {} (the book has no page for it)",
                inside.display()
            ));
        }
        resolved
    };
    if anchor.is_empty() || file.extension().is_none_or(|e| e != "md") {
        return None;
    }
    (!anchors(&read(&file)).contains(anchor))
        .then(|| format!("`{target}`: no heading with that anchor"))
}

#[test]
fn the_summary_lists_every_chapter_and_only_chapters_that_exist() {
    let docs = root().join("docs");
    let mut files = BTreeSet::new();
    markdown_under(&docs, Path::new(""), &mut files);
    files.remove(Path::new("SUMMARY.md"));
    let listed: BTreeSet<PathBuf> = links(&read(&docs.join("SUMMARY.md")))
        .into_iter()
        .map(PathBuf::from)
        .collect();
    let missing: Vec<_> = listed.difference(&files).collect();
    let unlisted: Vec<_> = files.difference(&listed).collect();
    assert!(
        missing.is_empty() && unlisted.is_empty(),
        "docs/SUMMARY.md lists chapters that do not exist: {missing:?}; chapters in docs/ it does \
         not list: {unlisted:?}"
    );
}

#[test]
fn every_relative_link_reaches_a_file_and_heading() {
    let root = root();
    let docs = root.join("docs");
    let mut problems = Vec::new();
    let mut chapters = BTreeSet::new();
    markdown_under(&docs, Path::new(""), &mut chapters);
    for chapter in chapters {
        let path = docs.join(&chapter);
        for target in links(&read(&path)) {
            if let Some(why) = broken(&path, &target, Some(&docs)) {
                problems.push(format!("docs/{}: {why}", chapter.display()));
            }
        }
    }
    for page in ["README.md", "ARCHITECTURE.md", "BENCHMARKS.md"] {
        let path = root.join(page);
        for target in links(&read(&path)) {
            if let Some(why) = broken(&path, &target, None) {
                problems.push(format!("{page}: {why}"));
            }
        }
    }
    // ARCHITECTURE.md and BENCHMARKS.md are also chapters (included from docs/), where a
    // relative link would point somewhere else: they link by URL or name files in text.
    for page in ["ARCHITECTURE.md", "BENCHMARKS.md"] {
        for target in links(&read(&root.join(page))) {
            if !target.contains("://") && !target.starts_with('#') {
                problems.push(format!(
                    "{page}: `{target}` is relative, but the book includes this page from docs/"
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "broken links:\n{}",
        problems.join("\n")
    );
}
