//! The library side of `gavel change`: spec-driven changes laid out the way OpenSpec lays
//! them out, so a tree gavel writes is one the real `openspec` CLI validates and archives.
//!
//! A change lives in `{root}/changes/ID/` (root defaults to `openspec`) with `proposal.md`,
//! delta specs in `specs/CAPABILITY/spec.md`, `tasks.md`, `REVIEW.md` and `STATE.yaml`; living
//! specs live in `{root}/specs/CAPABILITY/spec.md` and archived changes in
//! `{root}/changes/archive/YYYY-MM-DD-ID/`. This module holds the paths ([`ChangeDir`]) and the
//! id rule ([`check_id`]); the phase file is [`state`], delta specs and their merge into the
//! living specs are [`spec`], [`merge`] and [`order`], and the checklist is [`tasks`]. Nothing
//! here runs a model or prompts: the workflow that does is built on these values.

pub mod archive;
pub mod merge;
pub mod order;
pub mod plan;
pub mod spec;
pub mod state;
pub mod structured;
pub mod tasks;

use std::path::{Path, PathBuf};

/// The folder every change tree hangs from when the configuration names none.
pub const DEFAULT_ROOT: &str = "openspec";

/// The longest change id accepted (it becomes a folder name and part of a branch name).
pub const MAX_ID_LEN: usize = 64;

/// Errors about a change's identity or place on disk.
#[derive(Debug, thiserror::Error)]
pub enum ChangeError {
    /// The id is empty, too long, or has a character outside `[a-z0-9-]`.
    #[error("invalid change id `{id}`: use 1 to {MAX_ID_LEN} lowercase letters, digits and dashes")]
    InvalidId {
        /// The id as given.
        id: String,
    },
}

/// Checks a change id: 1..=64 characters from `[a-z0-9-]`, so it is a safe folder name
/// everywhere and matches what OpenSpec accepts (kebab-case).
pub fn check_id(id: &str) -> Result<(), ChangeError> {
    let ok = (1..=MAX_ID_LEN).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(ChangeError::InvalidId { id: id.to_owned() })
    }
}

/// The paths of one change (and of the tree around it). Building one checks the id, so a
/// `ChangeDir` never points outside `{root}/changes/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeDir {
    root: PathBuf,
    id: String,
}

impl ChangeDir {
    /// The change `id` under the OpenSpec tree at `root` (e.g. `repo/openspec`).
    pub fn new(root: impl Into<PathBuf>, id: &str) -> Result<Self, ChangeError> {
        check_id(id)?;
        Ok(Self {
            root: root.into(),
            id: id.to_owned(),
        })
    }

    /// The change's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The OpenSpec tree's root (`{root}`).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `{root}/changes/ID/`.
    pub fn dir(&self) -> PathBuf {
        self.root.join("changes").join(&self.id)
    }

    /// `{root}/changes/ID/proposal.md`.
    pub fn proposal(&self) -> PathBuf {
        self.dir().join("proposal.md")
    }

    /// `{root}/changes/ID/tasks.md`.
    pub fn tasks(&self) -> PathBuf {
        self.dir().join("tasks.md")
    }

    /// `{root}/changes/ID/REVIEW.md`.
    pub fn review(&self) -> PathBuf {
        self.dir().join("REVIEW.md")
    }

    /// `{root}/changes/ID/STATE.yaml`.
    pub fn state(&self) -> PathBuf {
        self.dir().join("STATE.yaml")
    }

    /// `{root}/changes/ID/specs/`, holding one folder per capability the change touches.
    pub fn specs_dir(&self) -> PathBuf {
        self.dir().join("specs")
    }

    /// `{root}/changes/ID/specs/CAPABILITY/spec.md`: the change's delta for a capability.
    pub fn delta_spec(&self, capability: &str) -> PathBuf {
        self.specs_dir().join(capability).join("spec.md")
    }

    /// `{root}/specs/CAPABILITY/spec.md`: the living spec a delta merges into.
    pub fn living_spec(&self, capability: &str) -> PathBuf {
        self.root.join("specs").join(capability).join("spec.md")
    }

    /// `{root}/changes/archive/YYYY-MM-DD-ID/`: where the change goes once archived on `date`.
    pub fn archive_dir(&self, date: jiff::civil::Date) -> PathBuf {
        self.root.join("changes").join("archive").join(format!(
            "{}-{}",
            date.strftime("%Y-%m-%d"),
            self.id
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_lowercase_kebab_up_to_64_chars() {
        for good in ["a", "add-login", "x1-2", &"a".repeat(64)] {
            assert!(check_id(good).is_ok(), "{good}");
        }
        for bad in ["", "Add", "a_b", "a/b", "..", "a b", "é", &"a".repeat(65)] {
            let err = check_id(bad).expect_err(bad).to_string();
            assert!(err.contains(&format!("`{bad}`")), "{err}");
        }
    }

    #[test]
    fn change_dir_lays_out_openspec_paths() {
        let dir = ChangeDir::new(DEFAULT_ROOT, "add-login").expect("valid id");
        assert_eq!(dir.dir(), Path::new("openspec/changes/add-login"));
        assert_eq!(
            dir.state(),
            Path::new("openspec/changes/add-login/STATE.yaml")
        );
        assert_eq!(
            dir.delta_spec("auth"),
            Path::new("openspec/changes/add-login/specs/auth/spec.md")
        );
        assert_eq!(
            dir.living_spec("auth"),
            Path::new("openspec/specs/auth/spec.md")
        );
        let date = jiff::civil::date(2026, 3, 7);
        assert_eq!(
            dir.archive_dir(date),
            Path::new("openspec/changes/archive/2026-03-07-add-login")
        );
        assert!(ChangeDir::new("openspec", "../x").is_err());
    }
}
