//! The `local` tracker: issues as committed Markdown files with front matter.
//!
//! Issues live in `docs/issues/` (configurable) as `{number:04}-{slug}.md` with a small front
//! matter block (number, title, labels, state, created_at, gavel_key); labels live in
//! `labels.txt` beside them. Numbers are allocated under an exclusive lock on the folder, so
//! parallel runs never get the same number, and a create with a known `gavel_key` returns the
//! issue already filed. The front matter is written and read with a YAML serializer and parser
//! (serde-saphyr); only the front matter is searched for a key, never the body, and only in
//! the files named after the run's slug: filing reads one directory listing, not every issue.

use std::fs::{self, File};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{FiledIssue, NewIssue, TrackedIssue, Tracker, TrackerError, TrackerRef};
use gavel_core::fsutil;

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
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    labels: Option<Vec<String>>,
    #[serde(default)]
    state: Option<String>,
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
    split_front_matter(content).map(|(yaml, _)| yaml)
}

/// The front matter's YAML and the body after its closing line.
fn split_front_matter(content: &str) -> Option<(&str, &str)> {
    let rest = content
        .strip_prefix("---\n")
        .or_else(|| content.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end_matches(['\n', '\r']) == "---" {
            return Some((&rest[..offset], &rest[offset + line.len()..]));
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

    /// Every issue file by name: (number, file name), sorted. Only names are read: a folder
    /// of thousands of issues costs one directory listing, not thousands of reads.
    fn issues(&self, dir: &Path) -> Result<Vec<(u64, String)>, TrackerError> {
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
            out.push((num, name));
        }
        out.sort();
        Ok(out)
    }

    fn read(&self, dir: &Path, name: &str) -> Result<String, TrackerError> {
        fs::read_to_string(dir.join(name)).map_err(|e| self.unreachable(e))
    }

    fn url(&self, file: &str) -> String {
        self.dir.join(file).to_string_lossy().into_owned()
    }
}

impl Tracker for LocalTracker {
    fn describe(&self) -> String {
        format!("local ({})", self.dir.display())
    }

    fn reference(&self) -> TrackerRef {
        TrackerRef {
            kind: "local".into(),
            repo: None,
        }
    }

    fn check(&self) -> Result<(), TrackerError> {
        let dir = self.ensure_dir()?;
        // Asked of the kernel (permissions, ACLs, a read-only or immutable folder) rather than
        // by writing a probe file: on a busy ext4 every new inode costs a scan.
        nix::unistd::access(&dir, nix::unistd::AccessFlags::W_OK)
            .map_err(|e| self.unreachable(format!("{} is not writable: {e}", self.dir.display())))
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
        issue.check(self.describe())?;
        let dir = self.ensure_dir()?;
        let _lock = self.lock(&dir)?;
        let issues = self.issues(&dir)?;
        let labels_path = self.dir.join(LABELS_FILE);
        // An issue this run filed before (a crash before its journal entry) is named after the
        // run's slug: only those files are read for the key.
        let suffix = format!("-{}.md", issue.slug);
        let mut filed = None;
        for (number, name) in issues.iter().filter(|(_, name)| name.ends_with(&suffix)) {
            let front = FrontMatterIn::of(&self.read(&dir, name)?);
            if front.gavel_key.as_deref() == Some(issue.idempotency_key.as_str()) {
                filed = Some((number, name, front.created_at));
                break;
            }
        }
        if let Some((number, name, created_at)) = filed {
            return Ok(FiledIssue {
                number: *number,
                url: self.url(name),
                created_at: created_at.unwrap_or_else(|| now.to_owned()),
                paths: vec![self.dir.join(name), labels_path],
                found_existing: true,
            });
        }
        let number = issues.last().map_or(1, |(n, _)| n + 1);
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
            found_existing: false,
        })
    }

    fn get_issue(&self, reference: &str) -> Result<TrackedIssue, TrackerError> {
        let number = self.number_of(reference)?;
        let dir = self.abs();
        let missing = || TrackerError::NotFound {
            tracker: self.describe(),
            message: format!("there is no issue {number} in {}", self.dir.display()),
        };
        if !dir.is_dir() {
            return Err(missing());
        }
        let (_, name) = self
            .issues(&dir)?
            .into_iter()
            .find(|(n, _)| *n == number)
            .ok_or_else(missing)?;
        let content = self.read(&dir, &name)?;
        let (front, body) = match split_front_matter(&content) {
            Some((yaml, body)) => (
                serde_saphyr::from_str::<FrontMatterIn>(yaml).unwrap_or_default(),
                body,
            ),
            None => (FrontMatterIn::default(), content.as_str()),
        };
        let body = body.trim_start_matches(['\n', '\r']).to_owned();
        let title = front
            .title
            .or_else(|| gavel_llm::title(&body))
            .unwrap_or_else(|| name.trim_end_matches(".md").to_owned());
        Ok(TrackedIssue {
            number,
            title,
            body,
            labels: front.labels.unwrap_or_default(),
            state: front.state.unwrap_or_else(|| "open".into()),
            url: self.url(&name),
        })
    }
}

impl LocalTracker {
    /// The issue number a reference names: `12`, `#12`, or the path of an issue file in the
    /// folder (`docs/issues/0012-slug.md`, which is what this tracker gives as an issue's URL).
    fn number_of(&self, reference: &str) -> Result<u64, TrackerError> {
        let text = reference.trim();
        if text.ends_with(".md") {
            let file = std::path::Path::new(text)
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            if let Some(n) = file
                .split('-')
                .next()
                .and_then(|n| n.parse::<u64>().ok())
                .filter(|n| *n > 0)
            {
                return Ok(n);
            }
        }
        let parsed = super::reference::parse(text)?;
        if parsed.repo.is_some() {
            return Err(TrackerError::BadReference {
                message: format!(
                    "`{reference}` names a repository, but the tracker is {} (issues are files, numbered 1, 2, ...); use {} or set [tracker] kind = \"github\"",
                    self.describe(),
                    parsed.number
                ),
            });
        }
        Ok(parsed.number)
    }
}

#[cfg(test)]
mod tests;
