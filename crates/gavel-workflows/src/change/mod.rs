//! The library side of `gavel change`: spec-driven changes laid out the way OpenSpec lays
//! them out, so a tree gavel writes is one the real `openspec` CLI validates and archives.
//!
//! A change lives in `{root}/changes/ID/` (root defaults to `openspec`) with `proposal.md`,
//! delta specs in `specs/CAPABILITY/spec.md`, `tasks.md`, `REVIEW.md` and `STATE.yaml`; living
//! specs live in `{root}/specs/CAPABILITY/spec.md` and archived changes in
//! `{root}/changes/archive/YYYY-MM-DD-ID/`. This module holds the paths ([`ChangeDir`]) and the
//! id rule ([`check_id`]); the phase file is [`state`], delta specs and their merge into the
//! living specs are [`spec`], [`merge`] and [`order`], and the checklist is [`tasks`]. Every
//! file of a change is read through [`read`] (regular files only, capped). Nothing here runs a
//! model or prompts: the workflow that does is built on these values.

pub mod archive;
pub mod implement;
pub mod merge;
pub mod order;
pub mod plan;
pub mod read;
pub mod spec;
pub mod state;
pub mod structured;
pub mod tasks;

use std::path::{Path, PathBuf};

/// The folder every change tree hangs from when the configuration names none.
pub const DEFAULT_ROOT: &str = "openspec";

/// The longest change id accepted (it becomes a folder name and part of a branch name).
pub const MAX_ID_LEN: usize = 64;

/// The one name under `{root}/changes/` that is not a change: the archived changes' folder.
pub const ARCHIVE_FOLDER: &str = "archive";

/// Errors about a change's identity or place on disk.
#[derive(Debug, thiserror::Error)]
pub enum ChangeError {
    /// The id is empty, too long, or has a character outside `[a-z0-9-]`.
    #[error("invalid change id `{id}`: use 1 to {MAX_ID_LEN} lowercase letters, digits and dashes")]
    InvalidId {
        /// The id as given.
        id: String,
    },
    /// The id starts with `-`, so a command line (gavel's, git's) would read it as an option.
    #[error(
        "invalid change id `{id}`: it starts with `-`, which a command line reads as an option"
    )]
    LeadingDash {
        /// The id as given.
        id: String,
    },
    /// The id is `archive`, the folder that holds the archived changes.
    #[error(
        "invalid change id `{ARCHIVE_FOLDER}`: `changes/{ARCHIVE_FOLDER}/` holds the archived changes, so no change can be called that"
    )]
    Reserved,
    /// An id given with a folder (`gavel mcp --change-id`) names another change.
    #[error("change id `{id}` does not match its folder {}", folder.display())]
    WrongFolder {
        /// The id as given.
        id: String,
        /// The folder.
        folder: PathBuf,
    },
}

/// Checks a name used as a folder under a change tree (a change id, a capability): 1..=64
/// characters from `[a-z0-9-]`, not starting with `-`, so it is a safe folder name everywhere,
/// never read as an option, and matches what OpenSpec accepts (kebab-case).
pub fn check_name(name: &str) -> Result<(), ChangeError> {
    let ok = (1..=MAX_ID_LEN).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if !ok {
        Err(ChangeError::InvalidId {
            id: name.to_owned(),
        })
    } else if name.starts_with('-') {
        Err(ChangeError::LeadingDash {
            id: name.to_owned(),
        })
    } else {
        Ok(())
    }
}

/// Checks a change id: a valid [`check_name`] other than `archive`, the archive's folder.
pub fn check_id(id: &str) -> Result<(), ChangeError> {
    check_name(id)?;
    if id == ARCHIVE_FOLDER {
        return Err(ChangeError::Reserved);
    }
    Ok(())
}

/// Checks that `id` is a valid change id and the name of the change folder `folder`: a
/// tool given both (an id and a folder) acts on one change, not on the folder of another.
pub fn check_folder_id(folder: &Path, id: &str) -> Result<(), ChangeError> {
    check_id(id)?;
    if folder.file_name().and_then(|n| n.to_str()) != Some(id) {
        return Err(ChangeError::WrongFolder {
            id: id.to_owned(),
            folder: folder.to_owned(),
        });
    }
    Ok(())
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
    fn regression_archive_and_leading_dash_ids_are_refused_by_name() {
        // `archive` would be the archive folder itself; `-x` an option to git and gavel.
        for bad in ["archive", "-rf", "--help", "-"] {
            let err = check_id(bad).expect_err(bad).to_string();
            assert!(err.contains(&format!("`{bad}`")), "{err}");
        }
        assert!(check_id("archive-old").is_ok() && check_id("a-").is_ok());
        assert!(ChangeDir::new("openspec", "archive").is_err());
        assert!(ChangeDir::new("openspec", "-x").is_err());
        // A capability may be called `archive`; it never starts with a dash either.
        assert!(check_name("archive").is_ok());
        assert!(check_name("-x").is_err());
    }

    #[test]
    fn an_id_must_name_its_folder() {
        let folder = Path::new("/r/openspec/changes/add-login");
        assert!(check_folder_id(folder, "add-login").is_ok());
        let err = check_folder_id(folder, "other").expect_err("another change");
        assert!(
            err.to_string().contains("`other`") && err.to_string().contains("add-login"),
            "{err}"
        );
        assert!(check_folder_id(Path::new("/r/changes/archive"), "archive").is_err());
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
