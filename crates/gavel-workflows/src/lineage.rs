//! The numbered lineage folder: every artifact of a run, in order.
//!
//! A run writes `001-brief.md`, `002-draft.md`, `003-verdict.md`, ... into
//! `docs/lineage/active/{slug}/`; once the issue is filed the folder moves to
//! `docs/lineage/done/{issue#}-{slug}/`. Numbers come from the checkpointed `file_counter`, so
//! they are gap-free and ordered across loops, pauses, crashes and resumes: a replayed node
//! rewrites the same number with the same content.

use std::path::{Path, PathBuf};

use crate::fsutil;

/// A run's lineage folder.
#[derive(Debug, Clone)]
pub struct Lineage {
    root: PathBuf,
    rel: PathBuf,
}

impl Lineage {
    /// The active folder for `slug` under `lineage_dir` (repository-relative), in `repo_root`.
    pub fn active(repo_root: &Path, lineage_dir: &Path, slug: &str) -> Self {
        Self {
            root: repo_root.to_path_buf(),
            rel: lineage_dir.join("active").join(slug),
        }
    }

    /// The folder `rel` (repository-relative) in `repo_root`: a lineage kept elsewhere than
    /// under the lineage folder (a spec-driven change keeps its own in `lineage/`).
    pub fn at(repo_root: &Path, rel: impl Into<PathBuf>) -> Self {
        Self {
            root: repo_root.to_path_buf(),
            rel: rel.into(),
        }
    }

    /// The folder a filed run moves to.
    pub fn done_rel(lineage_dir: &Path, issue: u64, slug: &str) -> PathBuf {
        lineage_dir.join("done").join(format!("{issue}-{slug}"))
    }

    /// The folder, repository-relative.
    pub fn rel(&self) -> &Path {
        &self.rel
    }

    /// The folder, absolute.
    pub fn abs(&self) -> PathBuf {
        self.root.join(&self.rel)
    }

    /// The repository-relative path of artifact number `n` with `suffix` (`draft.md`).
    pub fn artifact_rel(&self, n: u32, suffix: &str) -> PathBuf {
        self.rel.join(artifact_name(n, suffix))
    }

    /// Writes artifact `n` atomically and returns its repository-relative path.
    pub fn write(&self, n: u32, suffix: &str, content: &[u8]) -> std::io::Result<PathBuf> {
        let rel = self.artifact_rel(n, suffix);
        fsutil::write_atomic(&self.root.join(&rel), content)?;
        Ok(rel)
    }
}

/// The highest artifact number in the folder `dir` (0 when it is empty or missing): a run
/// that adds to a lineage other runs wrote (a spec-driven change's) numbers on from there.
pub fn highest_number(dir: &Path) -> u32 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    name.split_once('-')
                        .and_then(|(n, _)| n.parse::<u32>().ok())
                })
                .max()
                .unwrap_or(0)
        })
        .unwrap_or(0)
}

/// What [`restore`] did in a clone that lacked a run's lineage files.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Restored {
    /// The files written, repository-relative, in the order the run wrote them.
    pub written: Vec<PathBuf>,
}

/// Why a run's lineage could not be written into this clone.
#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    #[error(transparent)]
    Store(#[from] gavel_core::StoreError),
    #[error("the run's lineage names `{0}`, which is not a path inside the repository")]
    BadPath(String),
    #[error("cannot write {0}: {1}")]
    Io(String, std::io::Error),
}

/// Writes into this clone the lineage files of `run` that it lacks, from the store: a run
/// started in another clone of the repository (a shared PostgreSQL store) carries on here as
/// if it had started here. Every file the run wrote is named, with its content, by an
/// [`gavel_core::EventKind::Artifact`] event; a file this clone already has is left as it is.
/// Nothing is written unless every missing file can be (its content is in the store), and
/// nothing at all once the run has moved or committed its lineage (its files are then under
/// their new names in the clone that did it, where the run ends).
pub fn restore(
    store: &dyn gavel_core::RunStore,
    run: gavel_core::RunId,
    repo_root: &Path,
) -> Result<Restored, RestoreError> {
    let mut files: Vec<(PathBuf, gavel_core::ContentHash)> = Vec::new();
    let mut moved = false;
    for event in store.events(run)? {
        let gavel_core::EventKind::Artifact { path, content, .. } = event.kind else {
            continue;
        };
        let Some(content) = content else {
            moved = true;
            continue;
        };
        let rel = PathBuf::from(&path);
        let inside = rel
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
        if !inside || path.is_empty() {
            return Err(RestoreError::BadPath(path));
        }
        // A file written again (a replayed node) keeps its last content.
        files.retain(|(p, _)| *p != rel);
        files.push((rel, content));
    }
    let missing: Vec<&(PathBuf, gavel_core::ContentHash)> = files
        .iter()
        .filter(|(rel, _)| !repo_root.join(rel).exists())
        .collect();
    if moved {
        // The lineage was moved or committed where the run was driven: its files are there
        // under their new names, and the run ends in that clone.
        return Ok(Restored::default());
    }
    let mut contents = Vec::with_capacity(missing.len());
    for (rel, hash) in &missing {
        let bytes = store
            .get_blob(hash)?
            .ok_or_else(|| gavel_core::StoreError::MissingBlob(hash.clone()))?;
        contents.push((rel, bytes));
    }
    let mut restored = Restored::default();
    for (rel, bytes) in contents {
        fsutil::write_atomic(&repo_root.join(rel), &bytes)
            .map_err(|e| RestoreError::Io(rel.display().to_string(), e))?;
        restored.written.push(rel.clone());
    }
    Ok(restored)
}

/// The journal key that says "this clone has driven the run": the machine and the clone's
/// folder, hashed. [`restore`] is for a clone that never drove the run; the clone that did has
/// its lineage already, possibly moved on (a filing killed after the move), and must not get
/// the old files back.
pub fn clone_mark(repo_root: &Path) -> String {
    let host = gavel_exec::process::host_name();
    let id = gavel_core::ContentHash::of(format!("{host}\n{}", repo_root.display()).as_bytes());
    format!("clone:{}", &id.as_str()[..16])
}

/// `NNN-suffix`, zero-padded to three digits (more digits past 999).
pub fn artifact_name(n: u32, suffix: &str) -> String {
    format!("{n:03}-{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn artifacts_are_numbered_with_three_digits() {
        assert_eq!(artifact_name(1, "brief.md"), "001-brief.md");
        assert_eq!(artifact_name(42, "verdict.md"), "042-verdict.md");
        assert_eq!(artifact_name(1000, "draft.md"), "1000-draft.md");
    }

    #[test]
    fn writes_land_in_the_active_folder() {
        let dir = tempfile::tempdir().expect("tempdir");
        let l = Lineage::active(dir.path(), Path::new("docs/lineage"), "idea");
        let rel = l.write(2, "draft.md", b"# T").expect("write");
        assert_eq!(rel, Path::new("docs/lineage/active/idea/002-draft.md"));
        assert!(dir.path().join(&rel).is_file());
    }

    use gavel_core::{Event, EventKind, RunStatus, RunStore};
    use gavel_store_testkit::MemoryStore;

    const NOW: &str = "2026-01-30T14:33:20Z";

    fn artifact(store: &MemoryStore, path: &str, bytes: Option<&[u8]>) -> Event {
        Event {
            at: NOW.into(),
            kind: EventKind::Artifact {
                path: path.into(),
                content: bytes.map(|b| store.put_blob(b).expect("blob")),
                kind: None,
            },
        }
    }

    fn run_with(store: &MemoryStore, events: &[Event]) -> gavel_core::RunId {
        let run = store
            .create_run("issue", "s", b"{}", "n", NOW)
            .expect("run");
        store
            .set_status(run, &RunStatus::Running, events, NOW)
            .expect("events");
        run
    }

    #[test]
    fn a_clone_gets_the_files_it_lacks_with_their_last_content_and_keeps_its_own() {
        let store = MemoryStore::new();
        let events = [
            artifact(&store, "docs/lineage/active/s/001-brief.md", Some(b"brief")),
            artifact(&store, "docs/lineage/active/s/002-draft.md", Some(b"old")),
            artifact(&store, "docs/lineage/active/s/002-draft.md", Some(b"draft")),
            artifact(&store, "docs/lineage/active/s/003-verdict.md", Some(b"v")),
        ];
        let run = run_with(&store, &events);
        let dir = tempfile::tempdir().expect("tempdir");
        let mine = dir.path().join("docs/lineage/active/s/003-verdict.md");
        fsutil::write_atomic(&mine, b"edited here").expect("write");
        let restored = restore(&store, run, dir.path()).expect("restore");
        assert_eq!(
            restored.written,
            [
                PathBuf::from("docs/lineage/active/s/001-brief.md"),
                PathBuf::from("docs/lineage/active/s/002-draft.md")
            ]
        );
        let read = |rel: &str| std::fs::read(dir.path().join(rel)).expect("read");
        assert_eq!(read("docs/lineage/active/s/002-draft.md"), b"draft");
        assert_eq!(read("docs/lineage/active/s/003-verdict.md"), b"edited here");
        assert_eq!(
            restore(&store, run, dir.path()).expect("again"),
            Restored::default()
        );
    }

    #[test]
    fn a_path_outside_the_repository_is_refused_and_nothing_is_written() {
        let store = MemoryStore::new();
        let events = [
            artifact(&store, "docs/lineage/active/s/001-brief.md", Some(b"brief")),
            artifact(&store, "../outside.md", Some(b"x")),
        ];
        let run = run_with(&store, &events);
        let dir = tempfile::tempdir().expect("tempdir");
        let err = restore(&store, run, dir.path()).expect_err("refused");
        assert!(err.to_string().contains("../outside.md"), "{err}");
        assert!(!dir.path().join("docs").exists(), "nothing written");
    }

    #[test]
    fn a_run_that_moved_its_lineage_is_left_alone() {
        let store = MemoryStore::new();
        let events = [
            artifact(&store, "docs/lineage/active/s/001-brief.md", Some(b"brief")),
            artifact(&store, "docs/lineage/done/1-s", None),
        ];
        let run = run_with(&store, &events);
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(
            restore(&store, run, dir.path()).expect("restore"),
            Restored::default()
        );
        assert!(!dir.path().join("docs").exists());
    }
}
