//! `go test -json`'s per-test results, and the text the events carry.
//!
//! With `-json`, go prints one event per line (`{"Action":"pass","Package":"p","Test":"T"}`);
//! what the tests and go itself print is in `output` events, and a package that does not
//! build is a plain `FAIL p [build failed]` line (go 1.19 and later). A test that started and
//! never ended (its binary exited), a package that failed with no failed test (`TestMain`, an
//! `init`, a crash) and a package that did not build are load errors.
//!
//! Events do not name files. A test is attributed to the `_test.go` file of its package's
//! folder that declares its top-level function (`func TestAdd(`), the folder found from the
//! module path in `go.mod`; those files are read as the person's files are, regular files
//! only and capped.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;
use serde::Deserialize;

use super::{ReportFormat, TestCase, TestList, TestStatus, clean, dedup};

/// The most of one `_test.go` file (or `go.mod`) read to find what it declares.
const SOURCE_CAP: u64 = 4 << 20;

#[derive(Deserialize)]
struct Event {
    #[serde(rename = "Action")]
    action: String,
    #[serde(rename = "Package", default)]
    package: Option<String>,
    #[serde(rename = "Test", default)]
    test: Option<String>,
    #[serde(rename = "Output", default)]
    output: Option<String>,
}

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|e| panic!("a valid built-in pattern {pattern}: {e}"))
}

/// The tests `output` (go's JSON events, with plain lines mixed in) lists, and the text go
/// would have printed (with `-v`), rebuilt from the events.
pub(super) fn parse(output: &str, cwd: &Path) -> (TestList, String) {
    static NOT_BUILT: LazyLock<Regex> =
        LazyLock::new(|| re(r"^FAIL\s+(\S+) \[(build|setup) failed\]"));
    let mut text = String::with_capacity(output.len() / 2);
    // (package, test) → how it ended, None while running; in order of first event.
    let mut tests: BTreeMap<(String, String), (usize, Option<TestStatus>)> = BTreeMap::new();
    let mut packages: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut load_errors = Vec::new();
    for line in output.lines() {
        let event = line
            .starts_with('{')
            .then(|| serde_json::from_str::<Event>(line).ok())
            .flatten();
        let Some(e) = event else {
            text.push_str(line);
            text.push('\n');
            if let Some(c) = NOT_BUILT.captures(line) {
                load_errors.push(format!("package {} did not build", clean(&c[1])));
            }
            continue;
        };
        let package = e.package.unwrap_or_default();
        let status = match e.action.as_str() {
            "output" | "build-output" => {
                text.push_str(e.output.as_deref().unwrap_or_default());
                continue;
            }
            "run" => None,
            "pass" => Some(TestStatus::Passed),
            "fail" => Some(TestStatus::Failed),
            "skip" => Some(TestStatus::Skipped),
            _ => continue,
        };
        match e.test {
            Some(test) => {
                let order = tests.len();
                let entry = tests.entry((package, test)).or_insert((order, None));
                if status.is_some() {
                    entry.1 = entry.1.max(status);
                }
            }
            None if status.is_some() => {
                packages.insert(package, Some(e.action));
            }
            None => {}
        }
    }
    let mut declared = Declared::new(cwd);
    let mut ordered: Vec<_> = tests.into_iter().collect();
    ordered.sort_by_key(|(_, (order, _))| *order);
    let mut cases = Vec::with_capacity(ordered.len());
    for ((package, test), (_, status)) in ordered {
        let Some(status) = status else {
            load_errors.push(format!(
                "{}::{} started and never ended (the test binary exited)",
                clean(&package),
                clean(&test)
            ));
            continue;
        };
        let top = test.split('/').next().unwrap_or(&test);
        cases.push(TestCase {
            id: format!("{}::{}", clean(&package), clean(&test)),
            files: declared.file(&package, top).into_iter().collect(),
            status,
        });
    }
    for (package, action) in &packages {
        let failed_test = cases
            .iter()
            .any(|c| c.status == TestStatus::Failed && c.id.starts_with(&format!("{package}::")));
        if action.as_deref() == Some("fail") && !failed_test {
            load_errors.push(format!(
                "package {} failed outside its tests (TestMain, an init, or the binary exited)",
                clean(package)
            ));
        }
    }
    let list = TestList {
        format: ReportFormat::GoJson,
        cases: dedup(cases),
        load_errors,
    };
    (list, text)
}

/// Which `_test.go` file of a package declares a top-level test, read once per package.
struct Declared<'a> {
    cwd: &'a Path,
    module: Option<String>,
    /// package → (test function → file relative to `cwd`)
    by_package: HashMap<String, HashMap<String, String>>,
}

impl<'a> Declared<'a> {
    fn new(cwd: &'a Path) -> Self {
        static MODULE: LazyLock<Regex> = LazyLock::new(|| re(r#"(?m)^module\s+"?([^\s"]+)"?"#));
        let module = read_capped(&cwd.join("go.mod"))
            .and_then(|text| MODULE.captures(&text).map(|c| c[1].to_owned()));
        Self {
            cwd,
            module,
            by_package: HashMap::new(),
        }
    }

    fn file(&mut self, package: &str, test: &str) -> Option<String> {
        if !self.by_package.contains_key(package) {
            let found = self.scan(package).unwrap_or_default();
            self.by_package.insert(package.to_owned(), found);
        }
        self.by_package.get(package)?.get(test).cloned()
    }

    /// The test functions each `_test.go` file of `package`'s folder declares.
    fn scan(&self, package: &str) -> Option<HashMap<String, String>> {
        static FUNC: LazyLock<Regex> =
            LazyLock::new(|| re(r"(?m)^func\s+((?:Test|Fuzz|Example)\w*)\s*\("));
        let module = self.module.as_deref()?;
        let folder = if package == module {
            ""
        } else {
            package.strip_prefix(module)?.strip_prefix('/')?
        };
        if folder.split('/').any(|part| part == ".." || part == ".") {
            return None;
        }
        let dir = self.cwd.join(folder);
        let mut found = HashMap::new();
        let mut entries: Vec<_> = std::fs::read_dir(&dir)
            .ok()?
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with("_test.go"))
            .collect();
        entries.sort();
        for name in entries.into_iter().take(10_000) {
            let Some(source) = read_capped(&dir.join(&name)) else {
                continue;
            };
            let rel = if folder.is_empty() {
                name.clone()
            } else {
                format!("{folder}/{name}")
            };
            for c in FUNC.captures_iter(&source) {
                found.entry(c[1].to_owned()).or_insert_with(|| rel.clone());
            }
        }
        Some(found)
    }
}

/// A regular file's text (never through a symlink), when it is at most [`SOURCE_CAP`].
fn read_capped(path: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.file_type().is_file() {
        return None;
    }
    let file = std::fs::File::open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(SOURCE_CAP + 1).read_to_end(&mut bytes).ok()?;
    if bytes.len() as u64 > SOURCE_CAP {
        return None;
    }
    String::from_utf8(bytes).ok()
}
