//! Finding programs on `PATH`, for pre-flight checks (the editor, later the agent CLIs).

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
}
