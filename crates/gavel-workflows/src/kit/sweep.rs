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
use gavel_exec::git::{Git, GitError, Listing, Scratch, Survey, TreeId};

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
    if let Some(tracked) = survey
        .undecodable
        .iter()
        .find(|u| u.listed == Listing::Changed)
    {
        // A tracked file whose name git cannot hand gavel as text: its change could not be
        // recorded, shown or put back, so the step is not judged at all.
        return Err(format!(
            "the tracked file `{}` changed and its name is not UTF-8: gavel cannot record or review that change; rename it in the repository (or restore it in the worktree) and resume",
            tracked.path.display()
        ));
    }
    let mut found: Vec<(String, &'static str, std::path::PathBuf)> =
        unrecordable(&survey.untracked)
            .into_iter()
            .map(|(rel, why)| {
                let abs = wt.root().join(&rel);
                (rel, why, abs)
            })
            .collect();
    // A new file whose name is not UTF-8 cannot be named to git by gavel, so it would be
    // neither recorded nor reviewed while the tests still see it: removed like the rest. An
    // ignored entry with such a name is searched for files that steer the tests, as a new
    // ignored folder is (whether it is new cannot be told: the lists hold text).
    for u in &survey.undecodable {
        let abs = wt.root().join(&u.path);
        let shown = u.path.to_string_lossy().into_owned();
        match u.listed {
            Listing::Untracked => {
                // Up to the first name that is not UTF-8: a folder of such a name goes whole.
                let top = undecodable_prefix(&u.path);
                let shown = top.to_string_lossy().into_owned();
                if !found.iter().any(|(s, _, _)| *s == shown) {
                    found.push((
                        shown,
                        "a name that is not UTF-8: gavel's snapshot cannot record or show it",
                        wt.root().join(top),
                    ));
                }
            }
            Listing::Ignored if std::fs::symlink_metadata(&abs).is_ok_and(|m| m.is_dir()) => {
                found.extend(steering_files(&abs, &shown));
            }
            Listing::Ignored => {
                let name = u.path.file_name().map(|n| n.to_string_lossy().into_owned());
                if name.as_deref().is_some_and(steers_tests) {
                    found.push((shown, HIDDEN_CONFIG, abs));
                }
            }
            Listing::Changed => {}
        }
    }
    found.extend(hidden_config(wt, ignored_before, &survey.ignored));
    for (_, _, abs) in &found {
        let removed = match std::fs::symlink_metadata(abs) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(abs),
            Ok(_) => std::fs::remove_file(abs),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
        };
        removed.map_err(|e| format!("cannot remove {}: {e}", abs.display()))?;
    }
    let found: Cleared = found.into_iter().map(|(rel, why, _)| (rel, why)).collect();
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
fn hidden_config(
    wt: &Git,
    before: &BTreeSet<String>,
    now: &BTreeSet<String>,
) -> Vec<(String, &'static str, std::path::PathBuf)> {
    let mut found = Vec::new();
    for entry in now.difference(before) {
        let path = entry.trim_end_matches('/');
        let abs = wt.root().join(path);
        if entry.ends_with('/') {
            found.extend(steering_files(&abs, path));
        } else if path.rsplit('/').next().is_some_and(steers_tests) {
            found.push((path.to_owned(), HIDDEN_CONFIG, abs));
        }
    }
    found
}

/// `path` up to and including its first component that is not UTF-8 (all of it when there is
/// none).
fn undecodable_prefix(path: &std::path::Path) -> std::path::PathBuf {
    let mut prefix = std::path::PathBuf::new();
    for part in path.components() {
        prefix.push(part);
        if part.as_os_str().to_str().is_none() {
            break;
        }
    }
    prefix
}

/// Why [`hidden_config`] and [`steering_files`] remove a file.
const HIDDEN_CONFIG: &str =
    "a file that steers the tests, made under an ignored path where no review sees it";

/// The files [`steers_tests`] names under the folder `abs` (shown as `shown`), searched
/// without following links, up to 10,000 entries; each with its display path, why, and its
/// path on disk.
fn steering_files(
    abs: &std::path::Path,
    shown: &str,
) -> Vec<(String, &'static str, std::path::PathBuf)> {
    let mut found = Vec::new();
    let mut stack = vec![(abs.to_path_buf(), shown.to_owned())];
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
                Ok(_) if steers_tests(&name) => found.push((child, HIDDEN_CONFIG, e.path())),
                _ => {}
            }
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

    #[test]
    fn names_that_are_not_utf8_are_removed_or_searched_and_never_followed_out() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let outside = tempfile::tempdir().expect("outside");
        std::fs::write(outside.path().join("conftest.py"), "\n").expect("write");
        let root = dir.path();
        let git = Git::at(root);
        git.run(&["init", "-q"]).expect("init");
        std::fs::write(root.join(".gitignore"), "*.pth\nbuild*/\nlink*\n").expect("write");
        let name = |bytes: &[u8]| root.join(std::ffi::OsStr::from_bytes(bytes));
        // An ignored `.pth` of such a name, an ignored folder of such a name holding a
        // conftest.py, a new file of such a name, and an ignored link of such a name to a
        // folder outside (never searched through).
        std::fs::write(name(b"evil\xff.pth"), "import os\n").expect("write");
        std::fs::create_dir(name(b"build\xfe")).expect("mkdir");
        std::fs::write(name(b"build\xfe/conftest.py"), "\n").expect("write");
        std::fs::write(name(b"data_\xfd.txt"), "x\n").expect("write");
        std::os::unix::fs::symlink(outside.path(), name(b"link\xfc")).expect("link");
        std::fs::write(root.join("kept.pth"), "\n").expect("write");
        let before: BTreeSet<String> = ["kept.pth".to_owned()].into();
        let (found, survey) = after(&git, Scratch::Fresh, &before).expect("after");
        let mut shown: Vec<String> = found.into_iter().map(|(p, _)| p).collect();
        shown.sort();
        assert_eq!(
            shown,
            [
                "build\u{fffd}/conftest.py",
                "data_\u{fffd}.txt",
                "evil\u{fffd}.pth"
            ]
        );
        assert!(survey.is_none(), "removing makes the survey stale");
        assert!(!name(b"evil\xff.pth").exists());
        assert!(!name(b"build\xfe/conftest.py").exists());
        assert!(!name(b"data_\xfd.txt").exists());
        assert!(
            outside.path().join("conftest.py").exists(),
            "not followed out"
        );
        assert!(root.join("kept.pth").exists());
    }
}
