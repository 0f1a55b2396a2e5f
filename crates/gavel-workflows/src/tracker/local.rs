//! The `local` tracker: issues as committed Markdown files with front matter.
//!
//! Issues live in `docs/issues/` (configurable) as `{number:04}-{slug}.md` with a small front
//! matter block (number, title, labels, state, created_at, gavel_key); labels live in
//! `labels.txt` beside them. Numbers are allocated under an exclusive lock on the folder, so
//! parallel runs never get the same number, and a create with a known `gavel_key` returns the
//! issue already filed.

use std::fs::{self, File};
use std::path::{Path, PathBuf};

use super::{FiledIssue, NewIssue, Tracker, TrackerError};
use crate::fsutil;

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
        let key_line = format!("gavel_key: {}", issue.idempotency_key);
        let labels_path = self.dir.join(LABELS_FILE);
        if let Some((number, name, content)) = issues
            .iter()
            .find(|(_, _, c)| c.lines().any(|l| l == key_line))
        {
            let created_at = content
                .lines()
                .find_map(|l| l.strip_prefix("created_at: "))
                .unwrap_or(now)
                .to_owned();
            return Ok(FiledIssue {
                number: *number,
                url: self.url(name),
                created_at,
                paths: vec![self.dir.join(name), labels_path],
            });
        }
        let number = issues.last().map_or(1, |(n, _, _)| n + 1);
        let name = format!("{number:04}-{}.md", issue.slug);
        let labels = issue
            .labels
            .iter()
            .map(|l| yaml_str(l))
            .collect::<Vec<_>>()
            .join(", ");
        let text = format!(
            "---\nnumber: {number}\ntitle: {}\nlabels: [{labels}]\nstate: open\ncreated_at: {now}\n{key_line}\n---\n\n{}",
            yaml_str(&issue.title),
            issue.body.trim_start()
        );
        fsutil::write_atomic(&dir.join(&name), text.as_bytes()).map_err(|e| self.unreachable(e))?;
        Ok(FiledIssue {
            number,
            url: self.url(&name),
            created_at: now.to_owned(),
            paths: vec![self.dir.join(&name), labels_path],
        })
    }
}

/// A double-quoted YAML string.
fn yaml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| String::from("\"\""))
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
        assert!(text.contains("title: \"Add \\\"dark\\\" mode\""), "{text}");
        assert!(text.ends_with("body"));
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
