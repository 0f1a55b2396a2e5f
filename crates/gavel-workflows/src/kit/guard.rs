//! Judging a model's step by the files it changed, never by its account of them.
//!
//! Before each model step the worktree's snapshot is journaled; after it, every path that
//! differs from that snapshot is judged here. The scaffold step may only add or change test
//! files; the implementation step may not create, change or delete a test file (so it cannot
//! make the tests pass by editing them). Neither may leave a symlink that points out of the
//! worktree, or a submodule. A refused change is put back by the caller and named in the
//! feedback the model gets.

use std::path::{Component, Path, PathBuf};

use gavel_exec::git::{ChangeKind, TreeChange};

/// Which model step made the changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// N1: write failing tests.
    Scaffold,
    /// N3: write the code that makes them pass.
    Implement,
}

/// A change the step may not make, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub change: TreeChange,
    pub why: String,
}

/// The changes of `step` in `worktree` that are refused; `is_test` says whether a path
/// (repository-relative, `/`-separated) is a test file by the runner's conventions.
pub fn refused(
    worktree: &Path,
    changes: &[TreeChange],
    step: Step,
    is_test: &dyn Fn(&str) -> bool,
) -> Vec<Refused> {
    let mut out = Vec::new();
    for c in changes {
        let why = if let Some(why) = structural(worktree, c) {
            Some(why)
        } else {
            match (step, is_test(&c.path)) {
                (Step::Scaffold, false) => Some(
                    "the test-writing step may only add or change test files; the implementation comes after the red gate"
                        .to_owned(),
                ),
                (Step::Implement, true) => Some(format!(
                    "the implementation may not {} a test file; the tests decide, they are not changed to pass",
                    match c.kind {
                        ChangeKind::Added => "create",
                        ChangeKind::Modified => "change",
                        ChangeKind::Deleted => "delete",
                    }
                )),
                _ => None,
            }
        };
        if let Some(why) = why {
            out.push(Refused {
                change: c.clone(),
                why,
            });
        }
    }
    out
}

/// The side effects of a test or lint run that are refused: those that break the rules every
/// step keeps (no `.git`, no link out of the worktree, no submodule). Which files a test may
/// write is its runner's business; these are never merged.
pub fn refused_side_effects(worktree: &Path, changes: &[TreeChange]) -> Vec<Refused> {
    changes
        .iter()
        .filter_map(|c| {
            structural(worktree, c).map(|why| Refused {
                change: c.clone(),
                why,
            })
        })
        .collect()
}

/// Why a change breaks the rules every step keeps, if it does.
fn structural(worktree: &Path, c: &TreeChange) -> Option<String> {
    if let Err(e) = super::answer::check_path(&c.path) {
        Some(e)
    } else if c.mode == "160000" {
        Some("a submodule (gitlink) may not be added or changed".to_owned())
    } else if c.kind != ChangeKind::Deleted
        && c.is_symlink()
        && !link_stays_inside(worktree, &c.path)
    {
        Some("a symlink pointing out of the worktree".to_owned())
    } else {
        None
    }
}

/// Whether the symlink at `rel` in `worktree` resolves to a place inside the worktree (not in
/// its `.git`): lexically, as its own target reads, and as the kernel resolves it, through
/// every other link on the way (`a -> b/l/../..` where `b/l` is itself a link). An absolute
/// target never does, and neither does a link whose target does not exist (a link made
/// later on its path could point it anywhere).
fn link_stays_inside(worktree: &Path, rel: &str) -> bool {
    let (Ok(root), Ok(resolved)) = (worktree.canonicalize(), worktree.join(rel).canonicalize())
    else {
        return false;
    };
    resolved.starts_with(&root)
        && !resolved.starts_with(root.join(".git"))
        && lexically_inside(worktree, rel)
}

/// [`link_stays_inside`]'s reading of the link's own target.
fn lexically_inside(worktree: &Path, rel: &str) -> bool {
    let Ok(target) = std::fs::read_link(worktree.join(rel)) else {
        return false;
    };
    if target.is_absolute() {
        return false;
    }
    let mut at: PathBuf = Path::new(rel)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    for part in target.components() {
        match part {
            Component::Normal(p) => at.push(p),
            Component::CurDir => {}
            Component::ParentDir => {
                if !at.pop() {
                    return false;
                }
            }
            _ => return false,
        }
    }
    !at.starts_with(".git")
}

/// The refusals as feedback for the model: one line per path.
pub fn feedback(refused: &[Refused]) -> String {
    let mut text = String::from("These changes were refused and put back:\n");
    for r in refused {
        text.push_str(&format!("- `{}`: {}\n", r.change.path, r.why));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(path: &str, kind: ChangeKind, mode: &str) -> TreeChange {
        TreeChange {
            path: path.into(),
            kind,
            mode: mode.into(),
        }
    }

    fn is_test(p: &str) -> bool {
        p.starts_with("tests/") || p.rsplit('/').next().is_some_and(|f| f.starts_with("test_"))
    }

    #[test]
    fn each_step_keeps_to_its_own_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let changes = [
            change("tests/test_calc.py", ChangeKind::Added, "100644"),
            change("calc.py", ChangeKind::Modified, "100644"),
            change("test_old.py", ChangeKind::Deleted, "100644"),
        ];
        let scaffold: Vec<String> = refused(dir.path(), &changes, Step::Scaffold, &is_test)
            .into_iter()
            .map(|r| r.change.path)
            .collect();
        assert_eq!(scaffold, ["calc.py"]);
        let implement = refused(dir.path(), &changes, Step::Implement, &is_test);
        let paths: Vec<&str> = implement.iter().map(|r| r.change.path.as_str()).collect();
        assert_eq!(paths, ["tests/test_calc.py", "test_old.py"]);
        assert!(implement[0].why.contains("may not create a test file"));
        assert!(implement[1].why.contains("may not delete a test file"));
        let text = feedback(&implement);
        assert!(text.contains("`tests/test_calc.py`"), "{text}");
    }

    #[test]
    fn a_test_runs_side_effects_keep_only_the_rules_every_step_keeps() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::os::unix::fs::symlink("/etc", dir.path().join("out")).expect("link");
        let changes = [
            change("tests/snapshots/a.snap", ChangeKind::Added, "100644"),
            change("calc.py", ChangeKind::Modified, "100644"),
            change("out", ChangeKind::Added, "120000"),
            change("vendor/lib", ChangeKind::Added, "160000"),
        ];
        let refused: Vec<String> = refused_side_effects(dir.path(), &changes)
            .into_iter()
            .map(|r| r.change.path)
            .collect();
        assert_eq!(refused, ["out", "vendor/lib"]);
    }

    #[test]
    fn symlinks_out_and_submodules_are_refused_wherever_they_are() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("src/deep")).expect("mkdir");
        std::os::unix::fs::symlink("/etc/passwd", root.join("src/abs")).expect("link");
        std::os::unix::fs::symlink("../../../outside", root.join("src/deep/up")).expect("link");
        std::os::unix::fs::symlink("../.git/config", root.join("src/git")).expect("link");
        std::fs::write(root.join("README.md"), "hi\n").expect("readme");
        std::os::unix::fs::symlink("../README.md", root.join("src/fine")).expect("link");
        let changes = [
            change("src/abs", ChangeKind::Added, "120000"),
            change("src/deep/up", ChangeKind::Added, "120000"),
            change("src/git", ChangeKind::Added, "120000"),
            change("src/fine", ChangeKind::Added, "120000"),
            change("vendor/lib", ChangeKind::Added, "160000"),
        ];
        let refused: Vec<String> = refused(root, &changes, Step::Implement, &is_test)
            .into_iter()
            .map(|r| format!("{}: {}", r.change.path, r.why))
            .collect();
        assert_eq!(refused.len(), 4, "{refused:?}");
        assert!(
            refused.iter().all(|r| !r.starts_with("src/fine")),
            "{refused:?}"
        );
        assert!(refused[3].contains("submodule"), "{refused:?}");
    }

    #[test]
    fn regression_a_link_through_another_link_is_judged_where_the_kernel_takes_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("wt");
        std::fs::create_dir_all(root.join("a/b/c")).expect("mkdir");
        // `a/b/c/l` is the worktree itself; read lexically, `x` stays inside (at `a`), but the
        // kernel climbs from the worktree's root: out of it.
        std::os::unix::fs::symlink("../../..", root.join("a/b/c/l")).expect("link");
        std::os::unix::fs::symlink("a/b/c/l/../../..", root.join("x")).expect("link");
        std::os::unix::fs::symlink("missing/file", root.join("dangling")).expect("link");
        let changes = [
            change("a/b/c/l", ChangeKind::Added, "120000"),
            change("x", ChangeKind::Added, "120000"),
            change("dangling", ChangeKind::Added, "120000"),
        ];
        let refused: Vec<String> = refused_side_effects(&root, &changes)
            .into_iter()
            .map(|r| r.change.path)
            .collect();
        assert_eq!(refused, ["x", "dangling"]);
    }
}
