//! The `local` tracker: issues as committed Markdown files with front matter.
//!
//! Issues live in `docs/issues/` (configurable) as `{number:04}-{slug}.md` with a small front
//! matter block (number, title, labels, state, created_at, gavel_key); labels live in
//! `labels.txt` beside them. Numbers are allocated under an exclusive lock on the folder, so
//! parallel runs never get the same number, and a create with a known `gavel_key` returns the
//! issue already filed. The front matter is written and read with a YAML serializer and parser
//! (serde-saphyr); only the front matter is searched for a key, never the body.

use std::fs::{self, File};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{FiledIssue, NewIssue, Tracker, TrackerError};
use crate::fsutil;

/// The front matter gavel writes.
#[derive(Debug, Serialize)]
struct FrontMatterOut<'a> {
    number: u64,
    title: &'a str,
    labels: &'a [String],
    state: &'a str,
    created_at: &'a str,
    gavel_key: &'a str,
}

/// The front matter as read back: every field optional, unknown fields ignored, because the
/// folder may hold issues a person wrote or edited.
#[derive(Debug, Default, Deserialize)]
struct FrontMatterIn {
    #[serde(default)]
    created_at: Option<String>,
    #[serde(default)]
    gavel_key: Option<String>,
}

impl FrontMatterIn {
    /// The front matter of an issue file; a file without one, or with one that is not YAML
    /// gavel can read, has none (it was not filed by gavel).
    fn of(content: &str) -> Self {
        front_matter(content)
            .and_then(|yaml| serde_saphyr::from_str(yaml).ok())
            .unwrap_or_default()
    }
}

/// The YAML between an opening `---` on the first line and the next line that is exactly `---`.
fn front_matter(content: &str) -> Option<&str> {
    let rest = content
        .strip_prefix("---\n")
        .or_else(|| content.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end_matches(['\n', '\r']) == "---" {
            return Some(&rest[..offset]);
        }
        offset += line.len();
    }
    None
}

/// Issues as files in the repository.
#[derive(Debug, Clone)]
pub struct LocalTracker {
    root: PathBuf,
    dir: PathBuf,
}

const LABELS_FILE: &str = "labels.txt";

impl LocalTracker {
    /// A tracker writing to `dir` (repository-relative) inside `repo_root`.
    pub fn new(repo_root: &Path, dir: &Path) -> Self {
        Self {
            root: repo_root.to_path_buf(),
            dir: dir.to_path_buf(),
        }
    }

    fn abs(&self) -> PathBuf {
        self.root.join(&self.dir)
    }

    fn unreachable(&self, message: impl std::fmt::Display) -> TrackerError {
        TrackerError::Unreachable {
            tracker: self.describe(),
            message: message.to_string(),
        }
    }

    fn ensure_dir(&self) -> Result<PathBuf, TrackerError> {
        let dir = self.abs();
        if dir.exists() && !dir.is_dir() {
            return Err(
                self.unreachable(format!("{} exists but is not a folder", self.dir.display()))
            );
        }
        fs::create_dir_all(&dir)
            .map_err(|e| self.unreachable(format!("cannot create {}: {e}", self.dir.display())))?;
        Ok(dir)
    }

    fn lock(&self, dir: &Path) -> Result<File, TrackerError> {
        let handle = File::open(dir)
            .map_err(|e| self.unreachable(format!("cannot open {}: {e}", dir.display())))?;
        handle
            .lock()
            .map_err(|e| self.unreachable(format!("cannot lock {}: {e}", dir.display())))?;
        Ok(handle)
    }

    /// Every issue file: (number, file name, content).
    fn issues(&self, dir: &Path) -> Result<Vec<(u64, String, String)>, TrackerError> {
        let mut out = Vec::new();
        let entries = fs::read_dir(dir).map_err(|e| self.unreachable(e))?;
        for entry in entries {
            let entry = entry.map_err(|e| self.unreachable(e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(num) = name.split('-').next().and_then(|n| n.parse::<u64>().ok()) else {
                continue;
            };
            if !name.ends_with(".md") {
                continue;
            }
            let content = fs::read_to_string(entry.path()).map_err(|e| self.unreachable(e))?;
            out.push((num, name, content));
        }
        out.sort();
        Ok(out)
    }

    fn url(&self, file: &str) -> String {
        self.dir.join(file).to_string_lossy().into_owned()
    }
}

impl Tracker for LocalTracker {
    fn describe(&self) -> String {
        format!("local ({})", self.dir.display())
    }

    fn check(&self) -> Result<(), TrackerError> {
        let dir = self.ensure_dir()?;
        let probe = dir.join(format!(".gavel-probe-{}", std::process::id()));
        fs::write(&probe, b"").map_err(|e| {
            self.unreachable(format!("{} is not writable: {e}", self.dir.display()))
        })?;
        let _ = fs::remove_file(probe);
        Ok(())
    }

    fn ensure_labels(&self, labels: &[String]) -> Result<Vec<String>, TrackerError> {
        let dir = self.ensure_dir()?;
        let _lock = self.lock(&dir)?;
        let path = dir.join(LABELS_FILE);
        let existing = match fs::read_to_string(&path) {
            Ok(s) => s,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(self.unreachable(e)),
        };
        let mut known: Vec<String> = existing
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect();
        let mut created = Vec::new();
        for label in labels {
            if !known.iter().any(|k| k == label) {
                known.push(label.clone());
                created.push(label.clone());
            }
        }
        if !created.is_empty() {
            let mut text = known.join("\n");
            text.push('\n');
            fsutil::write_atomic(&path, text.as_bytes()).map_err(|e| self.unreachable(e))?;
        }
        Ok(created)
    }

    fn create_issue(&self, issue: &NewIssue, now: &str) -> Result<FiledIssue, TrackerError> {
        if issue.title.trim().is_empty() {
            return Err(TrackerError::Rejected {
                tracker: self.describe(),
                message: "the issue has no title".into(),
            });
        }
        let dir = self.ensure_dir()?;
        let _lock = self.lock(&dir)?;
        let issues = self.issues(&dir)?;
        let labels_path = self.dir.join(LABELS_FILE);
        let filed = issues.iter().find_map(|(number, name, content)| {
            let front = FrontMatterIn::of(content);
            (front.gavel_key.as_deref() == Some(issue.idempotency_key.as_str())).then_some((
                number,
                name,
                front.created_at,
            ))
        });
        if let Some((number, name, created_at)) = filed {
            return Ok(FiledIssue {
                number: *number,
                url: self.url(name),
                created_at: created_at.unwrap_or_else(|| now.to_owned()),
                paths: vec![self.dir.join(name), labels_path],
            });
        }
        let number = issues.last().map_or(1, |(n, _, _)| n + 1);
        let name = format!("{number:04}-{}.md", issue.slug);
        let front = serde_saphyr::to_string(&FrontMatterOut {
            number,
            title: &issue.title,
            labels: &issue.labels,
            state: "open",
            created_at: now,
            gavel_key: &issue.idempotency_key,
        })
        .map_err(|e| self.unreachable(format!("cannot write the front matter: {e}")))?;
        let newline = if front.ends_with('\n') { "" } else { "\n" };
        let text = format!("---\n{front}{newline}---\n\n{}", issue.body.trim_start());
        fsutil::write_atomic(&dir.join(&name), text.as_bytes()).map_err(|e| self.unreachable(e))?;
        Ok(FiledIssue {
            number,
            url: self.url(&name),
            created_at: now.to_owned(),
            paths: vec![self.dir.join(&name), labels_path],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn issue(key: &str) -> NewIssue {
        NewIssue {
            title: "Add \"dark\" mode".into(),
            body: "# Add dark mode\n\nbody".into(),
            labels: vec!["ui".into()],
            idempotency_key: key.into(),
            slug: "dark".into(),
        }
    }

    #[test]
    fn numbers_increase_and_keys_are_idempotent() {
        let dir = tempfile::tempdir().expect("tempdir");
        let t = LocalTracker::new(dir.path(), Path::new("docs/issues"));
        t.check().expect("check");
        let a = t
            .create_issue(&issue("run-1"), "2026-01-01T00:00:00Z")
            .expect("a");
        let b = t
            .create_issue(&issue("run-2"), "2026-01-01T00:00:00Z")
            .expect("b");
        let a2 = t
            .create_issue(&issue("run-1"), "2026-01-02T00:00:00Z")
            .expect("a again");
        assert_eq!((a.number, b.number), (1, 2));
        assert_eq!(a2, a);
        let text = fs::read_to_string(dir.path().join(&a.url)).expect("issue file");
        let front: serde_json::Value =
            serde_saphyr::from_str(front_matter(&text).expect("front matter")).expect("YAML");
        assert_eq!(front["title"], "Add \"dark\" mode", "{text}");
        assert_eq!(front["labels"], serde_json::json!(["ui"]));
        assert_eq!(front["gavel_key"], "run-1");
        assert!(text.ends_with("body"));
    }

    #[test]
    fn a_gavel_key_in_the_body_is_not_the_issues_key() {
        // Regression: the key lookup matched a `gavel_key:` line anywhere in the file.
        let dir = tempfile::tempdir().expect("tempdir");
        let t = LocalTracker::new(dir.path(), Path::new("docs/issues"));
        let quoting = NewIssue {
            body: "# Quote\n\nThe old file said:\n\ngavel_key: gavel-XYZ\n".into(),
            ..issue("gavel-ABC")
        };
        let first = t
            .create_issue(&quoting, "2026-01-01T00:00:00Z")
            .expect("first");
        let second = t
            .create_issue(&issue("gavel-XYZ"), "2026-01-02T00:00:00Z")
            .expect("second");
        assert_eq!((first.number, second.number), (1, 2));
        assert_eq!(second.created_at, "2026-01-02T00:00:00Z");
    }

    #[test]
    fn a_title_that_breaks_hand_written_yaml_round_trips_and_keeps_the_key() {
        let dir = tempfile::tempdir().expect("tempdir");
        let t = LocalTracker::new(dir.path(), Path::new("docs/issues"));
        let awkward = NewIssue {
            title: "Fix: \"---\" #1\n---\ngavel_key: other".into(),
            labels: vec!["a: b".into(), "yes".into()],
            ..issue("run-1")
        };
        let filed = t
            .create_issue(&awkward, "2026-01-01T00:00:00Z")
            .expect("filed");
        let text = fs::read_to_string(dir.path().join(&filed.url)).expect("issue file");
        let front: serde_json::Value =
            serde_saphyr::from_str(front_matter(&text).expect("front matter")).expect("YAML");
        assert_eq!(
            front["title"].as_str(),
            Some(awkward.title.as_str()),
            "{text}"
        );
        assert_eq!(front["labels"], serde_json::json!(["a: b", "yes"]));
        assert!(text.ends_with("body"));
        let again = t
            .create_issue(&awkward, "2026-01-02T00:00:00Z")
            .expect("again");
        assert_eq!(again, filed);
        assert!(
            t.create_issue(&issue("other"), "now")
                .expect("other")
                .number
                == 2
        );
    }

    #[test]
    fn an_issue_written_by_an_older_gavel_is_still_found_by_its_key() {
        let dir = tempfile::tempdir().expect("tempdir");
        let issues = dir.path().join("docs/issues");
        fs::create_dir_all(&issues).expect("mkdir");
        fs::write(
            issues.join("0007-dark.md"),
            "---\nnumber: 7\ntitle: \"Add \\\"dark\\\" mode\"\nlabels: [\"ui\"]\nstate: open\n\
             created_at: 2025-12-01T00:00:00Z\ngavel_key: run-1\n---\n\n# Add dark mode\n",
        )
        .expect("write");
        let t = LocalTracker::new(dir.path(), Path::new("docs/issues"));
        let filed = t.create_issue(&issue("run-1"), "now").expect("found");
        assert_eq!(
            (filed.number, filed.created_at.as_str()),
            (7, "2025-12-01T00:00:00Z")
        );
    }

    #[test]
    fn missing_labels_are_created_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let t = LocalTracker::new(dir.path(), Path::new("docs/issues"));
        assert_eq!(
            t.ensure_labels(&["a".into(), "b".into()]).expect("labels"),
            vec!["a", "b"]
        );
        assert_eq!(
            t.ensure_labels(&["b".into(), "c".into()]).expect("labels"),
            vec!["c"]
        );
        assert_eq!(
            fs::read_to_string(dir.path().join("docs/issues/labels.txt")).expect("read"),
            "a\nb\nc\n"
        );
    }

    #[test]
    fn a_file_where_the_folder_should_be_is_unreachable() {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::create_dir_all(dir.path().join("docs")).expect("mkdir");
        fs::write(dir.path().join("docs/issues"), "not a folder").expect("write");
        let t = LocalTracker::new(dir.path(), Path::new("docs/issues"));
        assert!(matches!(t.check(), Err(TrackerError::Unreachable { .. })));
        assert!(t.create_issue(&issue("k"), "now").is_err());
    }

    #[test]
    fn parallel_creates_get_distinct_numbers() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().to_path_buf();
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let root = root.clone();
                std::thread::spawn(move || {
                    LocalTracker::new(&root, Path::new("docs/issues"))
                        .create_issue(&issue(&format!("k{i}")), "now")
                        .map(|f| f.number)
                })
            })
            .collect();
        let mut numbers: Vec<u64> = handles
            .into_iter()
            .map(|h| h.join().expect("thread").expect("create"))
            .collect();
        numbers.sort_unstable();
        assert_eq!(numbers, (1..=8).collect::<Vec<_>>());
    }
}
