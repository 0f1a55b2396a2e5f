//! Finding programs on `PATH`: gavel's one lookup. [`find_program`] answers whether a program
//! can be run at all (the agent CLIs' pre-flight checks, `gavel doctor`, the editor; re-exported
//! as `gavel_llm::which`), and [`on_path`] finds one once per process, so that starting it is
//! one `execve`.
//!
//! `Command::new("git")` leaves the search to the C library, which in the child tries `execve`
//! in every `PATH` folder until one works: on a `PATH` that starts with tool folders (cargo,
//! pyenv shims) that is five failed calls before git starts, made again for every git command,
//! while the parent waits (a spawn suspends the caller until the child's program is running).
//! [`on_path`] does the same search once per process and hands back the full path.
//!
//! It answers only what the C library would find too: the first regular file with an execute
//! bit in the absolute folders of `PATH`, searched in order. A `PATH` with an empty or relative
//! entry before that (which means a folder relative to wherever the child starts) is left to the
//! C library, as is a name that contains a slash or is not found at all: `None`, and the caller
//! passes the bare name as before.

use std::ffi::{OsStr, OsString};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Answers already found: (name, the `PATH` searched, the answer).
type Found = Vec<(String, OsString, Option<PathBuf>)>;
static FOUND: Mutex<Found> = Mutex::new(Vec::new());

/// The full path of `name` on this process's `PATH` (see the module docs for when it is `None`).
/// Remembered for the process, and searched again if `PATH` changes.
pub fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    let mut found = FOUND
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, _, answer)) = found.iter().find(|(n, p, _)| n == name && *p == path) {
        return answer.clone();
    }
    let answer = search(name, &path);
    found.push((name.to_owned(), path, answer.clone()));
    answer
}

/// The full path of `program` if it can be run: an explicit path (one with a slash) that is an
/// executable file, or a name found in one of `PATH`'s folders as one. Searched every time,
/// relative folders included (relative to this process's folder), as a pre-flight check wants.
pub fn find_program(program: &str) -> Option<PathBuf> {
    if program.is_empty() {
        return None;
    }
    if program.contains('/') {
        let p = Path::new(program);
        return is_executable_file(p).then(|| p.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| is_executable_file(p))
}

/// The search of [`on_path`], over `path` (a `PATH` value).
fn search(name: &str, path: &OsStr) -> Option<PathBuf> {
    if name.is_empty() || name.contains('/') {
        return None;
    }
    for dir in std::env::split_paths(path) {
        if !dir.is_absolute() {
            return None; // relative to the child's folder: the C library's business
        }
        let candidate = dir.join(name);
        if is_executable_file(&candidate) {
            return Some(candidate);
        }
    }
    None
}

/// A regular file (following links, as `execve` does) with an execute bit.
fn is_executable_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn tool(dir: &Path, name: &str, mode: u32) -> PathBuf {
        let file = dir.join(name);
        std::fs::write(&file, "#!/bin/sh\n").expect("write");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).expect("chmod");
        file
    }

    #[test]
    fn the_first_executable_file_in_path_order_wins() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (a, b, c) = (
            tmp.path().join("a"),
            tmp.path().join("b"),
            tmp.path().join("c"),
        );
        for d in [&a, &b, &c] {
            std::fs::create_dir(d).expect("mkdir");
        }
        tool(&a, "prog", 0o644); // not executable: skipped, as execvp skips it
        std::fs::create_dir(b.join("prog")).expect("mkdir"); // a folder: skipped
        let want = tool(&c, "prog", 0o755);
        let path = std::env::join_paths([&a, &b, &c]).expect("join");
        assert_eq!(search("prog", &path), Some(want));
    }

    #[test]
    fn relative_entries_names_with_slashes_and_missing_programs_are_left_to_the_c_library() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("bin");
        std::fs::create_dir(&dir).expect("mkdir");
        tool(&dir, "prog", 0o755);
        let relative_first = std::env::join_paths([Path::new("rel"), &dir]).expect("join");
        assert_eq!(search("prog", &relative_first), None);
        let empty_first = OsString::from(format!(":{}", dir.display()));
        assert_eq!(search("prog", &empty_first), None);
        let plain = std::env::join_paths([&dir]).expect("join");
        assert_eq!(search("sub/prog", &plain), None);
        assert_eq!(search("absent", &plain), None);
        assert_eq!(search("", &plain), None);
    }

    #[test]
    fn find_program_finds_sh_and_rejects_nonsense() {
        assert!(find_program("sh").is_some());
        assert!(find_program("definitely-not-a-program-gavel").is_none());
        assert!(find_program("").is_none());
    }

    #[test]
    fn find_program_takes_an_explicit_path_only_when_it_is_an_executable_file() {
        let sh = find_program("sh").expect("sh on PATH");
        let explicit = sh.to_str().expect("a UTF-8 path");
        assert_eq!(find_program(explicit), Some(sh.clone()));
        let dir = tempfile::tempdir().expect("tempdir");
        let plain = dir.path().join("notes.txt");
        std::fs::write(&plain, "not a program").expect("write");
        assert_eq!(find_program(plain.to_str().expect("UTF-8")), None);
        assert_eq!(find_program(dir.path().to_str().expect("UTF-8")), None);
    }

    #[test]
    fn a_program_after_the_one_found_does_not_matter() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("bin");
        std::fs::create_dir(&dir).expect("mkdir");
        let want = tool(&dir, "prog", 0o700);
        // An entry after the match may be relative: the match is already made.
        let path = std::env::join_paths([&dir, Path::new("rel")]).expect("join");
        assert_eq!(search("prog", &path), Some(want));
    }
}
