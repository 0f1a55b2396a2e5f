//! The crate's one layering rule, checked on its sources: **a workflow never imports another
//! workflow**. Each workflow family has its folder (its top-level modules below); what two
//! families need lives in a shared module, which every family may import and which imports no
//! family. A path that crosses (`crate::implement::…` in `change/`, `use crate::{document, …}`,
//! `super::super::change` climbing to the crate root) fails this test, naming the file and line.
//! Comments are not read: a doc link is not a dependency.

use std::path::{Path, PathBuf};

/// The families and the shared modules are declared beside the modules, in `src/lib.rs`, so a
/// new workflow is its folder and a line there.
const FAMILIES: &[(&str, &[&str])] = gavel_workflows::WORKFLOW_FAMILIES;
const SHARED: &[&str] = gavel_workflows::SHARED_MODULES;

/// The family a top-level module belongs to (`None`: a shared module).
fn family_of(top: &str) -> Option<&'static str> {
    FAMILIES
        .iter()
        .find(|(_, modules)| modules.contains(&top))
        .map(|(family, _)| *family)
}

/// The top-level modules a file's code names, with the line of each: `crate::X` (and each `X`
/// of `crate::{X, …}`), and `super::…::X` when the `super`s climb to the crate root. `depth`
/// is the file's module depth (`src/kit/mod.rs` and `src/kit.rs` are 1, `src/kit/step.rs` 2).
fn top_level_paths(text: &str, depth: usize) -> Vec<(usize, String)> {
    let code: String = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let line_at = |at: usize| code[..at].matches('\n').count() + 1;
    let mut found = Vec::new();
    let mut at = 0;
    while at < code.len() {
        let rest = &code[at..];
        let preceded = code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':');
        let (climbs, after) = if preceded {
            (false, 0)
        } else if rest.starts_with("crate::") {
            (true, "crate::".len())
        } else if rest.starts_with("super::") {
            let mut n = 0;
            let mut len = 0;
            while rest[len..].starts_with("super::") {
                n += 1;
                len += "super::".len();
            }
            (n >= depth, len)
        } else {
            (false, 0)
        };
        if !climbs {
            at += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        }
        let target = &rest[after..];
        if let Some(group) = target.strip_prefix('{') {
            // The names at the top of the group: each first segment after `{` or a `,`.
            let mut nesting = 0;
            let mut expect_name = true;
            let mut name_start = None;
            for (i, c) in group.char_indices() {
                let is_ident = c.is_alphanumeric() || c == '_';
                if expect_name && nesting == 0 && is_ident && name_start.is_none() {
                    name_start = Some(i);
                }
                if !is_ident && let Some(s) = name_start.take() {
                    found.push((line_at(at + after + 1 + s), group[s..i].to_owned()));
                    expect_name = false;
                }
                match c {
                    '{' => nesting += 1,
                    '}' if nesting == 0 => break,
                    '}' => nesting -= 1,
                    ',' if nesting == 0 => expect_name = true,
                    _ => {}
                }
            }
        } else {
            let name: String = target
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                found.push((line_at(at), name));
            }
        }
        at += after;
    }
    found
}

/// Where `text` (the file `rel`, whose top-level module is `top`) crosses the rule.
fn crossings(rel: &str, top: &str, depth: usize, text: &str) -> Vec<String> {
    let own = family_of(top);
    top_level_paths(text, depth)
        .into_iter()
        .filter_map(|(line, target)| {
            let theirs = family_of(&target)?;
            match own {
                Some(own) if own == theirs => None,
                Some(own) => Some(format!(
                    "{rel}:{line}: the {own} workflow imports `{target}` (the {theirs} workflow); move what they share to a shared module such as `kit`"
                )),
                None => Some(format!(
                    "{rel}:{line}: the shared module `{top}` imports `{target}` (the {theirs} workflow); shared modules import no workflow"
                )),
            }
        })
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_workflow_imports_another_workflow() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut problems = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(&src).expect("under src");
        let mut parts: Vec<String> = rel
            .with_extension("")
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        if parts == ["lib"] {
            continue;
        }
        if parts.last().is_some_and(|p| p == "mod") {
            parts.pop();
        }
        let top = parts[0].clone();
        if family_of(&top).is_none() && !SHARED.contains(&top.as_str()) {
            problems.push(format!(
                "src/{}: module `{top}` is neither a workflow family nor a shared module; add it to WORKFLOW_FAMILIES or SHARED_MODULES in src/lib.rs",
                rel.display()
            ));
            continue;
        }
        let text = std::fs::read_to_string(file).expect("read source");
        let rel = format!("src/{}", rel.display());
        problems.extend(crossings(&rel, &top, parts.len(), &text));
    }
    assert!(files.len() > 50, "found only {} source files", files.len());
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn the_check_finds_each_way_of_naming_another_workflow() {
    let text = "use crate::kit::commit;\n\
                use crate::implement::Issue;\n\
                use crate::{caller, document::nodes};\n\
                // crate::lld::LLD in a comment is no import\n\
                fn f() { super::super::issue::x(); super::state::y(); }\n\
                use crate::change::state;\n";
    let found = crossings("src/change/x/y.rs", "change", 3, text);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(found[0].starts_with("src/change/x/y.rs:2: the change workflow imports `implement`"));
    assert!(found[1].starts_with("src/change/x/y.rs:3: the change workflow imports `document`"));
    // From one level down, two `super`s reach the crate root.
    let found = crossings("src/implement/a.rs", "implement", 2, text);
    let named: Vec<String> = found
        .iter()
        .map(|p| p.split('`').nth(1).unwrap_or("").to_owned())
        .collect();
    assert_eq!(named, ["document", "issue", "change"], "{found:#?}");
    // A shared module may import no workflow at all.
    let found = crossings("src/kit/a.rs", "kit", 2, "use crate::lld::LLD;\n");
    assert_eq!(found.len(), 1);
    assert!(found[0].contains("shared module `kit` imports `lld`"));
}
