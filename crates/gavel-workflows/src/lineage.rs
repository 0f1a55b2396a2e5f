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
}
