//! Which entries of a kept index git recorded in the second the index was last written, read
//! from the index itself (gix-index reads it; only git writes it).
//!
//! The same-second defence ([`super::Git::survey`]'s module doc) takes out of the kept index
//! every file git could be fooled about: one rewritten after the index was written, its size
//! kept and its modification time put back, whose change time falls in the same second as the
//! one git recorded. A rewrite comes after the write, and git recorded each change time before
//! it, so such an entry's recorded change time is in the write's second: those entries are
//! exactly the ones to take out. Reading them from the index costs a few milliseconds on
//! 20,000 files, where stating every file cost about 50 (issue 34: a model step's own cost
//! follows git's).
//!
//! An index gix cannot read (a newer format or extension, another hash) gives `None`, and
//! the caller states every file instead, as before.

use std::path::Path;

/// The paths (repository-relative, as git stores them) whose recorded change time is at or
/// after `written` (seconds since the epoch: the index file's modification time), or `None`
/// when gix cannot read the index at `path`.
pub(super) fn recorded_since(path: &Path, written: i64) -> Option<Vec<Vec<u8>>> {
    // The checksum is checked: an index of another hash (a SHA-256 repository) fails it
    // rather than being read with the wrong layout.
    let file = gix_index::File::at(
        path,
        gix_index::hash::Kind::Sha1,
        false,
        gix_index::decode::Options::default(),
    )
    .ok()?;
    Some(
        file.entries()
            .iter()
            .filter(|entry| i64::from(entry.stat.ctime.secs) >= written)
            .map(|entry| entry.path(&file).to_vec())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::os::unix::fs::MetadataExt;
    use std::time::Duration;

    use super::recorded_since;
    use crate::git::tests::repo_with;

    /// What `git ls-files --debug` says git recorded: each path with its change time's second.
    fn recorded_by_git(git: &crate::git::Git) -> Vec<(String, i64)> {
        let out = git.run(&["ls-files", "--debug", "-z"]).expect("ls-files");
        let mut entries = Vec::new();
        // `path\0  ctime: S:N\n  mtime: ...\n ...` per entry.
        let mut parts = out.split('\0').peekable();
        let mut path = parts.next().map(str::to_owned);
        for stats in parts {
            let ctime = stats
                .lines()
                .find_map(|l| l.trim().strip_prefix("ctime: "))
                .and_then(|t| t.split(':').next())
                .and_then(|s| s.parse::<i64>().ok())
                .expect("a ctime line");
            entries.push((path.take().expect("a path"), ctime));
            // The next path follows this entry's last line.
            path = stats.rsplit('\n').next().map(str::to_owned);
        }
        entries
    }

    #[test]
    fn the_entries_git_recorded_in_the_index_s_last_second_are_named() {
        let (dir, git) = repo_with(&[("old.txt", "old\n"), ("kept.txt", "kept\n")]);
        let index = dir.path().join(".git/index");
        // A second later, one file's change time moves on (its mode changes) and git records
        // it again; the other keeps the change time it was recorded with.
        std::thread::sleep(Duration::from_millis(1100));
        let touched = dir.path().join("old.txt");
        let mut perms = fs::metadata(&touched).expect("meta").permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o600);
        fs::set_permissions(&touched, perms).expect("chmod");
        git.run(&["update-index", "--refresh"]).expect("refresh");
        let written = fs::metadata(&index).expect("index").mtime();
        let expected: Vec<Vec<u8>> = recorded_by_git(&git)
            .into_iter()
            .filter(|(_, ctime)| *ctime >= written)
            .map(|(path, _)| path.into_bytes())
            .collect();
        assert_eq!(expected, vec![b"old.txt".to_vec()], "git's own view");
        assert_eq!(recorded_since(&index, written), Some(expected));
        // Every entry from an earlier second on; none from a later one.
        assert_eq!(
            recorded_since(&index, written - 60).map(|v| v.len()),
            Some(2)
        );
        assert_eq!(recorded_since(&index, written + 1), Some(Vec::new()));
    }

    #[test]
    fn an_index_gix_cannot_read_is_left_to_the_caller() {
        let dir = tempfile::tempdir().expect("tempdir");
        let git = crate::git::Git::at(dir.path());
        git.run(&["init", "-q", "--object-format=sha256"])
            .expect("init");
        fs::write(dir.path().join("a.txt"), "a\n").expect("write");
        git.run(&["add", "a.txt"]).expect("add");
        let index = dir.path().join(".git/index");
        assert_eq!(
            recorded_since(&index, 0),
            None,
            "a SHA-256 repository's index"
        );
        fs::write(&index, b"DIRC not an index").expect("write");
        assert_eq!(recorded_since(&index, 0), None, "a damaged index");
    }
}
