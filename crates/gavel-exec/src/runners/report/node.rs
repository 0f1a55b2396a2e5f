//! `node --test`'s per-test results, from a reporter module of gavel's.
//!
//! node's built-in `junit` reporter (node 20) does not say which file a test is in, and the
//! same test name in two files would be one. A custom reporter (node's reporter API, stable
//! since node 20) sees each event's `file`: gavel writes a small module to the report folder
//! that prints one JSON line per `test:enqueue`, `test:start`, `test:pass` and `test:fail`,
//! and adds it (with `tap` on stdout, the reporter node 20 uses when stdout is not a terminal,
//! so the console output reads as before) to the command. Reporters run in node's main
//! process, not in the test files' processes.
//!
//! node runs each file in its own process and reports it as a test named after the file; such
//! a test passing says only that the process exited 0 (`process.exit(0)` before any test
//! registered), so it is not listed, and one failing is a load error. A file whose tests were
//! queued but did not all finish (its process exited early) is a load error too.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::{ReportFormat, TestCase, TestList, TestStatus, clean, dedup, relative};

/// gavel's reporter module, in the report folder.
pub(super) const REPORTER: &str = "gavel-reporter.mjs";
/// Its output, in the report folder.
pub(super) const FILE: &str = "node-tests.jsonl";

/// The reporter: an async generator over node's test events (node's reporter API).
pub(super) const REPORTER_SOURCE: &str = r#"// Written by gavel: one JSON line per test event, with the file the test is in.
const KEEP = new Set(['test:enqueue', 'test:start', 'test:pass', 'test:fail']);
export default async function* gavelReporter(source) {
  for await (const { type, data } of source) {
    if (!KEEP.has(type) || data == null) continue;
    yield JSON.stringify({
      type,
      name: String(data.name ?? ''),
      nesting: Number(data.nesting ?? 0),
      file: data.file == null ? null : String(data.file),
      skip: data.skip !== undefined && data.skip !== false,
      todo: data.todo !== undefined && data.todo !== false,
      suite: data.details?.type === 'suite',
    }) + '\n';
  }
}
"#;

/// The run's arguments: gavel's reporter into `file`, right after `--test`, and stdout kept
/// (`tap` when the command names no reporter; node pairs reporters and destinations by
/// their order, so gavel's pair goes first).
pub(super) fn run_args(args: &[String], reporter: &str, file: &str) -> Result<Vec<String>, String> {
    let count = |flag: &str| {
        args.iter()
            .filter(|a| *a == flag || a.starts_with(&format!("{flag}=")))
            .count()
    };
    let (reporters, destinations) = (
        count("--test-reporter"),
        count("--test-reporter-destination"),
    );
    let mut ours = vec![
        format!("--test-reporter={reporter}"),
        format!("--test-reporter-destination={file}"),
    ];
    match (reporters, destinations) {
        (0, 0) => ours.extend([
            "--test-reporter=tap".to_owned(),
            "--test-reporter-destination=stdout".to_owned(),
        ]),
        // The command's one reporter wrote to stdout by default: keep it there.
        (1, 0) => ours.push("--test-reporter-destination=stdout".to_owned()),
        (r, d) if r == d => {}
        _ => {
            return Err(
                "the command's --test-reporter and --test-reporter-destination do not pair up"
                    .to_owned(),
            );
        }
    }
    let at = args.iter().position(|a| a == "--test").map_or(0, |i| i + 1);
    let mut out = args.to_vec();
    out.splice(at..at, ours);
    Ok(out)
}

/// One line of the reporter's output.
#[derive(Deserialize)]
struct Event {
    #[serde(rename = "type")]
    kind: String,
    name: String,
    nesting: usize,
    file: Option<String>,
    #[serde(default)]
    skip: bool,
    #[serde(default)]
    todo: bool,
    #[serde(default)]
    suite: bool,
}

/// Per file: the names of the tests started at each nesting level, and how many tests were
/// queued and finished.
#[derive(Default)]
struct File {
    stack: Vec<String>,
    queued: usize,
    finished: usize,
}

/// The tests gavel's reporter wrote to `text`; file names relative to `cwd`.
pub(super) fn parse(text: &str, cwd: &Path) -> TestList {
    let mut files: BTreeMap<String, File> = BTreeMap::new();
    let mut cases = Vec::new();
    let mut load_errors = Vec::new();
    for line in text.lines() {
        let Ok(e) = serde_json::from_str::<Event>(line) else {
            continue;
        };
        let Some(file) = e.file.as_deref() else {
            continue;
        };
        // The test node starts for each file, named after it.
        let wrapper = e.nesting == 0 && (e.name == file || cwd.join(&e.name) == Path::new(file));
        let rel = relative(file, cwd);
        let state = files.entry(rel.clone()).or_default();
        match e.kind.as_str() {
            "test:enqueue" if !wrapper => state.queued += 1,
            "test:start" if !wrapper => {
                state.stack.truncate(e.nesting);
                state.stack.push(clean(&e.name));
            }
            "test:fail" if wrapper => load_errors.push(format!(
                "{rel} failed outside its tests (it did not load, or its process failed)"
            )),
            "test:pass" | "test:fail" if !wrapper => {
                state.finished += 1;
                let failed = e.kind == "test:fail";
                if e.suite && !failed {
                    continue;
                }
                let mut path: Vec<String> = state.stack.iter().take(e.nesting).cloned().collect();
                path.push(clean(&e.name));
                let status = if e.skip || e.todo {
                    TestStatus::Skipped
                } else if failed {
                    TestStatus::Failed
                } else {
                    TestStatus::Passed
                };
                cases.push(TestCase {
                    id: format!("{rel}::{}", path.join(" > ")),
                    files: vec![rel.clone()],
                    status,
                });
            }
            _ => {}
        }
    }
    for (rel, state) in &files {
        if state.finished < state.queued {
            load_errors.push(format!(
                "{rel}: {} of {} tests never finished (its process ended early)",
                state.queued - state.finished,
                state.queued
            ));
        }
    }
    TestList {
        format: ReportFormat::NodeEvents,
        cases: dedup(cases),
        load_errors,
    }
}
