//! The look at the worktree on each side of untrusted code (a model's step, a test or lint
//! run): one [`Git::survey`] per side gives the snapshot and everything the guard checks.
//!
//! Before: the tree (journaled by the caller, the point a replay resets to) and the ignored
//! entries. After: what a snapshot cannot record (a `.git` in another case, a nested
//! repository) and files that steer the tests made under an ignored path where no review would
//! see them are removed and named; the rest is recorded as the tree the step is judged by.
//! Each side walks the tree once, as `git status` does (issue 34: a step's own cost follows
//! git's).
//!
//! The look after one untrusted run is carried to the look before the next ([`Carry`]) when
//! nothing but gavel came between: the next node visit, in the same process, with no person's
//! answer in between. That look then reads only the run's lineage folder (gavel's own writes
//! since) and the files [`Git::survey_within`] re-reads, and records them on top of the
//! carried tree. Anything else that changed in between (a process the last run left behind)
//! is then judged as the next step's change by its after-look, where a full look before would
//! have taken it as the starting point unjudged.

use std::collections::BTreeSet;
use std::sync::Mutex;

use gavel_core::{NodeCtx, NodeError};
use gavel_exec::git::{Git, GitError, Scratch, Survey, TreeId};

/// The worktree before untrusted code runs in it.
pub struct Before {
    pub tree: TreeId,
    /// Its ignored entries ([`Survey::ignored`]), to find what the code adds beneath them.
    pub ignored: BTreeSet<String>,
}

/// The worktree's tree and ignored entries, from one survey, or from the look `carried`
/// from the last untrusted run with the lineage folder `lineage` (repository-relative) read
/// again (see the module's doc).
pub fn before(
    wt: &Git,
    scratch: Scratch,
    carried: Option<Before>,
    lineage: &str,
) -> Result<Before, GitError> {
    if let (Some(carried), Scratch::Kept) = (carried, scratch) {
        let survey = wt.survey_within(lineage)?;
        return Ok(Before {
            tree: wt.record(survey)?,
            ignored: carried.ignored,
        });
    }
    let survey = wt.survey(scratch)?;
    let ignored = survey.ignored.clone();
    Ok(Before {
        tree: wt.record(survey)?,
        ignored,
    })
}

/// The last look after an untrusted run, while the worktree is exactly as it recorded: kept
/// for the next node visit's look before ([`before`]).
#[derive(Default)]
pub struct Carry(Mutex<Option<Carried>>);

struct Carried {
    /// The checkpoint the node visit that looked started from.
    seq: u64,
    worktree: String,
    look: Before,
}

impl Carry {
    /// Keeps `look` of `worktree`, taken in the node visit `cx` is: the worktree is as
    /// `look.tree` records it.
    pub fn keep(&self, cx: &NodeCtx<'_>, worktree: &str, look: Before) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = Some(Carried {
                seq: cx.seq(),
                worktree: worktree.to_owned(),
                look,
            });
        }
    }

    /// The kept look when it is for `worktree` and `cx` is the very next node visit with no
    /// person's answer; taken either way (it serves once).
    pub fn take(&self, cx: &NodeCtx<'_>, worktree: &str) -> Result<Option<Before>, NodeError> {
        let carried = self.0.lock().ok().and_then(|mut slot| slot.take());
        let Some(carried) = carried else {
            return Ok(None);
        };
        let next = carried.seq.checked_add(1) == Some(cx.seq());
        if next && carried.worktree == worktree && cx.answer()?.is_none() {
            Ok(Some(carried.look))
        } else {
            Ok(None)
        }
    }
}

/// Why a path was removed after untrusted code ran.
pub type Cleared = Vec<(String, &'static str)>;

/// Looks at the worktree after untrusted code ran: removes what [`unrecordable`] and
/// [`steers_tests`] find (returned, with why) and returns the survey when nothing was removed
/// (removing makes it stale: the caller surveys again or puts the worktree back).
pub fn after(
    wt: &Git,
    scratch: Scratch,
    ignored_before: &BTreeSet<String>,
) -> Result<(Cleared, Option<Survey>), String> {
    let survey = wt
        .survey(scratch)
        .map_err(|e| format!("cannot look at the worktree: {e}"))?;
    let mut found = unrecordable(&survey.untracked);
    found.extend(hidden_config(wt, ignored_before, &survey.ignored));
    for (rel, _) in &found {
        let abs = wt.root().join(rel);
        let removed = match std::fs::symlink_metadata(&abs) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&abs),
            Ok(_) => std::fs::remove_file(&abs),
            Err(_) => Ok(()),
        };
        removed.map_err(|e| format!("cannot remove {}: {e}", abs.display()))?;
    }
    if found.is_empty() {
        Ok((found, Some(survey)))
    } else {
        Ok((found, None))
    }
}

/// The untracked entries a snapshot cannot record ([`Survey::untracked`]), each with why: a
/// component that is `.git` in another case (`.GIT/config`: git refuses it), named up to that
/// component; and a nested repository (listed as `dir/`; it would be a submodule, or stop git
/// when it has no commit).
fn unrecordable(untracked: &[String]) -> Cleared {
    let mut out: Cleared = Vec::new();
    for path in untracked.iter().filter(|p| !p.is_empty()) {
        if let Some(dir) = path.strip_suffix('/') {
            out.push((
                dir.to_owned(),
                "a nested repository (a submodule) may not be added",
            ));
            continue;
        }
        let mut prefix = Vec::new();
        for part in path.split('/') {
            prefix.push(part);
            if part.eq_ignore_ascii_case(".git") {
                let top = prefix.join("/");
                if !out.iter().any(|(p, _)| *p == top) {
                    out.push((
                        top,
                        "names a `.git` (in any case): git's metadata is not the model's to write",
                    ));
                }
                break;
            }
        }
    }
    out
}

/// File names that change how a test run behaves wherever they sit on its path (pytest's
/// `conftest.py` and ini files, Python's start-up hooks and `.pth` files, jest's and vitest's
/// configuration): made under an ignored path, they would steer the tests while no review
/// ever shows them.
fn steers_tests(name: &str) -> bool {
    matches!(
        name,
        "conftest.py" | "pytest.ini" | ".pytest.ini" | "sitecustomize.py" | "usercustomize.py"
    ) || name.ends_with(".pth")
        || name.starts_with("jest.config.")
        || name.starts_with("vitest.config.")
}

/// The files that [`steers_tests`] names which appeared under ignored paths (`now`) since
/// `before` (a new ignored folder is searched, without following links, up to 10,000
/// entries), with why.
fn hidden_config(wt: &Git, before: &BTreeSet<String>, now: &BTreeSet<String>) -> Cleared {
    const WHY: &str =
        "a file that steers the tests, made under an ignored path where no review sees it";
    let mut found = Vec::new();
    for entry in now.difference(before) {
        let path = entry.trim_end_matches('/');
        let abs = wt.root().join(path);
        if entry.ends_with('/') {
            let mut stack = vec![(abs, path.to_owned())];
            let mut seen = 0usize;
            while let Some((dir, rel)) = stack.pop() {
                let Ok(entries) = std::fs::read_dir(&dir) else {
                    continue;
                };
                for e in entries.flatten() {
                    seen += 1;
                    if seen > 10_000 {
                        break;
                    }
                    let name = e.file_name().to_string_lossy().into_owned();
                    let child = format!("{rel}/{name}");
                    match e.file_type() {
                        Ok(t) if t.is_dir() => stack.push((e.path(), child)),
                        Ok(_) if steers_tests(&name) => found.push((child, WHY)),
                        _ => {}
                    }
                }
            }
        } else if path.rsplit('/').next().is_some_and(steers_tests) {
            found.push((path.to_owned(), WHY));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_that_steer_the_tests_are_named_by_their_names() {
        for name in [
            "conftest.py",
            "pytest.ini",
            "sitecustomize.py",
            "evil.pth",
            "jest.config.js",
        ] {
            assert!(steers_tests(name), "{name}");
        }
        for name in [
            "conftest.cpython-311-pytest-9.2.0.pyc",
            "package.json",
            "calc.py",
        ] {
            assert!(!steers_tests(name), "{name}");
        }
    }

    #[test]
    fn a_git_folder_in_another_case_is_unrecordable_and_named_once() {
        let untracked: Vec<String> = [
            ".GIT/config",
            ".GIT/hooks/x",
            "src/.Git/HEAD",
            "src/ok.py",
            ".github/ci.yml",
            "sub/",
        ]
        .map(String::from)
        .to_vec();
        let found: Vec<String> = unrecordable(&untracked)
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        assert_eq!(found, [".GIT", "src/.Git", "sub"]);
    }
}
