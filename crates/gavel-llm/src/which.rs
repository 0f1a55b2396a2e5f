//! Finding programs on `PATH`: gavel's one lookup, for the agent CLIs' pre-flight checks and
//! `gavel doctor` ([`crate::tools::find_on_path`]) and for the editor (re-exported as
//! `gavel_workflows::which`).

use std::env;
use std::path::{Path, PathBuf};

/// The full path of `program` if it can be run: an explicit path that exists, or a name found
/// in one of `PATH`'s folders as an executable file.
pub fn find_program(program: &str) -> Option<PathBuf> {
    if program.is_empty() {
        return None;
    }
    if program.contains('/') {
        let p = Path::new(program);
        return is_executable(p).then(|| p.to_path_buf());
    }
    let path = env::var_os("PATH")?;
    env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_sh_and_rejects_nonsense() {
        assert!(find_program("sh").is_some());
        assert!(find_program("definitely-not-a-program-gavel").is_none());
        assert!(find_program("").is_none());
    }

    #[test]
    fn an_explicit_path_must_be_an_executable_file() {
        let sh = find_program("sh").expect("sh on PATH");
        let explicit = sh.to_str().expect("a UTF-8 path");
        assert_eq!(find_program(explicit), Some(sh.clone()));
        let dir = tempfile::tempdir().expect("tempdir");
        let plain = dir.path().join("notes.txt");
        std::fs::write(&plain, "not a program").expect("write");
        assert_eq!(find_program(plain.to_str().expect("UTF-8")), None);
        assert_eq!(find_program(dir.path().to_str().expect("UTF-8")), None);
    }
}
