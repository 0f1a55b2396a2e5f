//! pytest's JUnit XML report (`--junitxml`, `junit_family=xunit1`), read with quick-xml.
//!
//! Each `<testcase classname=".." name=".." file="..">` is a test; a `<failure>`, `<error>` or
//! `<skipped>` child says how it ended (none: passed). pytest's xfail is a `<skipped>`. A
//! collection error is a test case without a class name (`classname=""`, the module as its
//! name) holding an `<error>`: the file did not load, and it is listed as a load error, not
//! as a test. The reader expands no DTD and no entity but the predefined five, and a document
//! that is cut short or whose tags do not match is not a report.

use quick_xml::XmlVersion;
use quick_xml::events::{BytesStart, Event};

use super::{ReportFormat, TestCase, TestList, TestStatus, clean, dedup};

/// The report's file name in the report folder.
pub(super) const FILE: &str = "junit.xml";

/// A `<testcase>` being read.
struct Pending {
    classname: String,
    name: String,
    file: Option<String>,
    status: TestStatus,
}

/// The tests of pytest's JUnit report `xml`.
pub(super) fn parse(xml: &str) -> Result<TestList, String> {
    let bad = |e: &dyn std::fmt::Display| format!("the JUnit report does not parse: {e}");
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut depth = 0usize;
    let mut root = false;
    let mut pending: Option<Pending> = None;
    let mut cases = Vec::new();
    let mut load_errors = Vec::new();
    loop {
        let event = reader.read_event().map_err(|e| bad(&e))?;
        match event {
            Event::Start(e) => {
                if depth == 0 {
                    root = is_root(&e)?;
                } else {
                    element(&e, &mut pending, &mut cases, &mut load_errors, false)?;
                }
                depth += 1;
            }
            Event::Empty(e) => {
                if depth == 0 {
                    root = is_root(&e)?;
                } else {
                    element(&e, &mut pending, &mut cases, &mut load_errors, true)?;
                }
            }
            Event::End(e) => {
                depth = depth.saturating_sub(1);
                if e.local_name().as_ref() == "testcase"
                    && let Some(p) = pending.take()
                {
                    finish(p, &mut cases, &mut load_errors);
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if !root {
        return Err(bad(&"there is no <testsuites> element"));
    }
    if depth != 0 {
        return Err(bad(&"the document ends inside an element (cut short?)"));
    }
    Ok(TestList {
        format: ReportFormat::PytestJunit,
        cases: dedup(cases),
        load_errors,
    })
}

/// Whether `e`, the document's first element, is a JUnit root.
fn is_root(e: &BytesStart<'_>) -> Result<bool, String> {
    if matches!(e.local_name().as_ref(), "testsuites" | "testsuite") {
        Ok(true)
    } else {
        Err(
            "the JUnit report does not parse: the root is neither <testsuites> nor <testsuite>"
                .to_owned(),
        )
    }
}

/// A start or empty element inside the root.
fn element(
    e: &BytesStart<'_>,
    pending: &mut Option<Pending>,
    cases: &mut Vec<TestCase>,
    load_errors: &mut Vec<String>,
    empty: bool,
) -> Result<(), String> {
    match e.local_name().as_ref() {
        "testcase" => {
            if let Some(p) = pending.take() {
                finish(p, cases, load_errors);
            }
            let p = Pending {
                classname: attribute(e, "classname")?.unwrap_or_default(),
                name: attribute(e, "name")?.unwrap_or_default(),
                file: attribute(e, "file")?,
                status: TestStatus::Passed,
            };
            if empty {
                finish(p, cases, load_errors);
            } else {
                *pending = Some(p);
            }
        }
        child @ ("failure" | "error" | "skipped") => {
            if let Some(p) = pending.as_mut() {
                let status = match child {
                    "failure" => TestStatus::Failed,
                    "error" => TestStatus::Error,
                    _ => TestStatus::Skipped,
                };
                p.status = p.status.max(status);
            }
        }
        _ => {}
    }
    Ok(())
}

fn attribute(e: &BytesStart<'_>, name: &str) -> Result<Option<String>, String> {
    for attr in e.attributes() {
        let attr = attr.map_err(|err| format!("the JUnit report does not parse: {err}"))?;
        if attr.key.as_ref() == name {
            let value = attr
                .normalized_value(XmlVersion::Implicit1_0)
                .map_err(|err| format!("the JUnit report does not parse: {err}"))?;
            return Ok(Some(clean(&value)));
        }
    }
    Ok(None)
}

/// A finished `<testcase>`: a test, or (no class name) a file that did not load.
fn finish(p: Pending, cases: &mut Vec<TestCase>, load_errors: &mut Vec<String>) {
    if p.classname.is_empty() {
        if p.status >= TestStatus::Failed {
            let what = p.file.as_deref().unwrap_or(&p.name);
            load_errors.push(format!("{what} did not load (pytest collection error)"));
        }
        return;
    }
    let id = match &p.file {
        Some(file) => {
            let module = file.strip_suffix(".py").unwrap_or(file).replace('/', ".");
            match p.classname.strip_prefix(&module) {
                Some("") => format!("{file}::{}", p.name),
                Some(rest) if rest.starts_with('.') => {
                    format!("{file}{}::{}", rest.replace('.', "::"), p.name)
                }
                _ => format!("{}::{}", p.classname, p.name),
            }
        }
        None => format!("{}::{}", p.classname, p.name),
    };
    cases.push(TestCase {
        id,
        files: p.file.into_iter().collect(),
        status: p.status,
    });
}
