//! `cargo test`'s per-test results, read from libtest's own lines.
//!
//! Stable libtest writes no machine-readable report (`--format json` and `junit` need
//! `-Z unstable-options`, which only nightly accepts; `RUSTC_BOOTSTRAP` would also unlock
//! unstable features for the code under test). Its `pretty` format is stable and names each
//! test: cargo prints `Running tests/add.rs (target/debug/deps/add-1f2e)` before each binary,
//! the binary prints `running N tests`, one `test NAME ... ok|FAILED|ignored` line per test
//! and a `test result: ... P passed; F failed; I ignored; M measured; ...` summary. A binary
//! is read only when those agree: one that announced tests and stopped before its summary
//! (`std::process::exit(0)` in a test), or that printed more results than it announced, is a
//! load error. So the run drops cargo's `--quiet` (which hides the `Running` lines) and asks
//! the binaries for `--format=pretty` (which `-q` after `--` would turn terse).

use std::sync::LazyLock;

use regex::Regex;

use super::{ReportFormat, TestCase, TestList, TestStatus, clean, dedup};

/// The run step's arguments: cargo's own `-q`/`--quiet` dropped, `--format=pretty` for the
/// test binaries.
pub(super) fn run_args(args: &[String]) -> Result<Vec<String>, String> {
    let split = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let (cargo, binaries) = args.split_at(split);
    let mut out: Vec<String> = cargo
        .iter()
        .filter(|a| *a != "-q" && *a != "--quiet")
        .cloned()
        .collect();
    let binaries = binaries.get(1..).unwrap_or_default();
    let mut binary_args = Vec::with_capacity(binaries.len() + 1);
    let mut pretty = false;
    let mut words = binaries.iter();
    while let Some(word) = words.next() {
        let format = if word == "--format" {
            words.next().map(String::as_str)
        } else {
            word.strip_prefix("--format=")
        };
        match format {
            Some("pretty") => pretty = true,
            Some(other) => {
                return Err(format!(
                    "the command asks the test binaries for `--format {other}`; gavel reads the `pretty` format"
                ));
            }
            None if word == "-q" || word == "--quiet" => continue,
            None => {}
        }
        binary_args.push(word.clone());
        if word == "--format" && pretty {
            binary_args.push("pretty".to_owned());
        }
    }
    if !pretty {
        binary_args.push("--format=pretty".to_owned());
    }
    out.push("--".to_owned());
    out.extend(binary_args);
    Ok(out)
}

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|e| panic!("a valid built-in pattern {pattern}: {e}"))
}

/// One test binary's part of the output.
#[derive(Default)]
struct Binary {
    /// As cargo names it: `tests/add.rs`, `src/lib.rs`, `doc-tests sample`.
    root: Option<String>,
    /// The file name of the binary without its hash (`add`), or the crate of doc tests.
    name: String,
    doc: bool,
    announced: Option<usize>,
    reported: usize,
    summary: Option<usize>,
}

impl Binary {
    fn label(&self) -> String {
        match &self.root {
            Some(root) => format!("{root} ({})", self.name),
            None => "a test binary".to_owned(),
        }
    }

    /// Whether what it announced, reported and summed up agree; a load error otherwise.
    fn check(&self) -> Option<String> {
        let announced = self.announced?;
        match self.summary {
            None => Some(format!(
                "{} stopped before its summary ({} of {announced} tests reported)",
                self.label(),
                self.reported
            )),
            Some(sum) if sum != self.reported || self.reported != announced => Some(format!(
                "{} announced {announced} tests, reported {} and summed up {sum}",
                self.label(),
                self.reported
            )),
            Some(_) => None,
        }
    }

    fn case(&self, name: &str, status: TestStatus) -> TestCase {
        let name = clean(name.strip_suffix(" - should panic").unwrap_or(name));
        let (id, files) = match &self.root {
            Some(root) if self.doc => (
                format!("{root}::{name}"),
                name.split(" - ")
                    .next()
                    .map(str::to_owned)
                    .into_iter()
                    .collect(),
            ),
            Some(root) => (
                format!("{root}::{name} [{}]", self.name),
                module_files(root, &name),
            ),
            None => (name.clone(), Vec::new()),
        };
        TestCase { id, files, status }
    }
}

/// The files test `name` (a module path) of the binary whose crate root is `root` may be
/// declared in: the root, and for each module on the path `dir/a.rs` or `dir/a/mod.rs`, then
/// `dir/a/b.rs` or `dir/a/b/mod.rs`, ... (a crate root resolves modules beside itself).
pub(super) fn module_files(root: &str, name: &str) -> Vec<String> {
    let dir = root.rsplit_once('/').map_or("", |(dir, _)| dir);
    let modules: Vec<&str> = name.split("::").collect();
    let mut files = vec![root.to_owned()];
    let mut path = dir.to_owned();
    for module in &modules[..modules.len().saturating_sub(1)] {
        if !path.is_empty() {
            path.push('/');
        }
        path.push_str(module);
        files.push(format!("{path}.rs"));
        files.push(format!("{path}/mod.rs"));
    }
    files
}

/// The tests libtest's `pretty` lines list, binary by binary.
pub(super) fn parse(output: &str) -> TestList {
    static RUNNING: LazyLock<Regex> =
        LazyLock::new(|| re(r"^\s+Running (?:unittests )?(.+?) \((.+)\)$"));
    static DOC: LazyLock<Regex> = LazyLock::new(|| re(r"^\s+Doc-tests (\S+)$"));
    static ANNOUNCE: LazyLock<Regex> = LazyLock::new(|| re(r"^running (\d+) tests?$"));
    static RESULT: LazyLock<Regex> =
        LazyLock::new(|| re(r"^test (.+) \.\.\. (ok|FAILED|ignored(?:, .*)?)$"));
    static SUMMARY: LazyLock<Regex> = LazyLock::new(|| {
        re(r"^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored; (\d+) measured;")
    });
    let mut cases = Vec::new();
    let mut load_errors = Vec::new();
    let mut binary = Binary::default();
    let mut next = |binary: &mut Binary, new: Binary| {
        if let Some(error) = binary.check() {
            load_errors.push(error);
        }
        *binary = new;
    };
    for line in output.lines() {
        if let Some(c) = RUNNING.captures(line) {
            let stem = c[2].rsplit('/').next().unwrap_or(&c[2]);
            let stem = stem.rsplit_once('-').map_or(stem, |(name, _hash)| name);
            let new = Binary {
                root: Some(clean(&c[1])),
                name: clean(stem),
                ..Binary::default()
            };
            next(&mut binary, new);
        } else if let Some(c) = DOC.captures(line) {
            let new = Binary {
                root: Some(format!("doc-tests {}", clean(&c[1]))),
                name: clean(&c[1]),
                doc: true,
                ..Binary::default()
            };
            next(&mut binary, new);
        } else if let Some(c) = ANNOUNCE.captures(line) {
            if binary.announced.is_some() {
                // A second binary without a `Running` line before it.
                next(&mut binary, Binary::default());
            }
            binary.announced = c[1].parse().ok();
        } else if let Some(c) = RESULT.captures(line) {
            if binary.announced.is_none() || binary.summary.is_some() {
                continue;
            }
            let status = match &c[2] {
                "ok" => TestStatus::Passed,
                "FAILED" => TestStatus::Failed,
                _ => TestStatus::Skipped,
            };
            binary.reported += 1;
            cases.push(binary.case(&c[1], status));
        } else if let Some(c) = SUMMARY.captures(line)
            && binary.announced.is_some()
            && binary.summary.is_none()
        {
            let n = |i: usize| c[i].parse::<usize>().unwrap_or(usize::MAX / 8);
            binary.summary = Some(n(1) + n(2) + n(3) + n(4));
        }
    }
    next(&mut binary, Binary::default());
    TestList {
        format: ReportFormat::LibtestLines,
        cases: dedup(cases),
        load_errors,
    }
}
