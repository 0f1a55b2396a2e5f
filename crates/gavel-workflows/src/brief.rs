//! Loading and validating a person's brief before anything is written.
//!
//! Bad input must change nothing, so every check on the brief (it exists, is a file, is at most
//! 1 MB, is UTF-8, is not blank, and its name makes a slug that stays inside the lineage folder)
//! runs before a run, a folder or a database is created.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Briefs larger than this are refused.
pub const MAX_BRIEF_BYTES: u64 = 1024 * 1024;

/// Why a brief or slug was refused.
#[derive(Debug, thiserror::Error)]
pub enum BriefError {
    #[error("brief file {0} does not exist")]
    NotFound(PathBuf),
    #[error("brief {0} is a directory, not a file")]
    IsDirectory(PathBuf),
    #[error("brief {0} is not a regular file (a pipe, socket or device cannot be a brief)")]
    NotAFile(PathBuf),
    #[error("brief {path} is {size} bytes; the limit is {MAX_BRIEF_BYTES} bytes (1 MB)")]
    TooLarge { path: PathBuf, size: u64 },
    #[error("brief {path} is not valid UTF-8 (first bad byte at offset {offset})")]
    NotUtf8 { path: PathBuf, offset: usize },
    #[error("brief {0} is empty")]
    Empty(PathBuf),
    #[error("cannot read brief {path}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("slug {slug:?} is not allowed: {reason}")]
    BadSlug { slug: String, reason: &'static str },
}

/// Reads and validates a brief.
pub fn load_brief(path: &Path) -> Result<String, BriefError> {
    let meta = match fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(BriefError::NotFound(path.to_path_buf()));
        }
        Err(source) => {
            return Err(BriefError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    if meta.is_dir() {
        return Err(BriefError::IsDirectory(path.to_path_buf()));
    }
    // A FIFO, socket or device would block the read forever (or never end): only a regular
    // file is a brief.
    if !meta.is_file() {
        return Err(BriefError::NotAFile(path.to_path_buf()));
    }
    if meta.len() > MAX_BRIEF_BYTES {
        return Err(BriefError::TooLarge {
            path: path.to_path_buf(),
            size: meta.len(),
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    fs::File::open(path)
        .and_then(|f| f.take(MAX_BRIEF_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|source| BriefError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    if bytes.len() as u64 > MAX_BRIEF_BYTES {
        return Err(BriefError::TooLarge {
            path: path.to_path_buf(),
            size: bytes.len() as u64,
        });
    }
    let text = String::from_utf8(bytes).map_err(|e| BriefError::NotUtf8 {
        path: path.to_path_buf(),
        offset: e.utf8_error().valid_up_to(),
    })?;
    if text.trim().is_empty() {
        return Err(BriefError::Empty(path.to_path_buf()));
    }
    Ok(text)
}

/// The slug for a brief: its file name without the extension, validated.
pub fn slug_from_path(path: &Path) -> Result<String, BriefError> {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    validate_slug(&stem)?;
    Ok(stem)
}

/// Checks that a slug names exactly one folder inside the lineage folder.
pub fn validate_slug(slug: &str) -> Result<(), BriefError> {
    let bad = |reason| {
        Err(BriefError::BadSlug {
            slug: slug.to_owned(),
            reason,
        })
    };
    if slug.is_empty() {
        return bad("it is empty");
    }
    if slug == "." || slug == ".." || slug.contains("..") {
        return bad("it contains `..`, which would leave the lineage folder");
    }
    if slug.contains('/') || slug.contains('\\') {
        return bad("it contains a path separator");
    }
    if slug.chars().any(char::is_control) {
        return bad("it contains control characters");
    }
    if slug.starts_with('.') || slug.starts_with('-') {
        return bad("it starts with `.` or `-`");
    }
    if slug.len() > 100 {
        return bad("it is longer than 100 bytes");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_that_would_escape_are_refused() {
        for slug in [
            "", ".", "..", "../x", "a/b", "a\\b", "a\nb", "a\u{1b}b", ".hidden", "x..y",
        ] {
            assert!(validate_slug(slug).is_err(), "{slug:?} should be refused");
        }
        for slug in ["my-feature", "feature_2", "Dark Mode", "42"] {
            assert!(validate_slug(slug).is_ok(), "{slug:?} should be accepted");
        }
    }

    #[test]
    fn each_bad_brief_gets_its_own_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = |n: &str| dir.path().join(n);
        assert!(matches!(
            load_brief(&p("missing.md")),
            Err(BriefError::NotFound(_))
        ));
        assert!(matches!(
            load_brief(dir.path()),
            Err(BriefError::IsDirectory(_))
        ));
        fs::write(p("empty.md"), " \n\t\n").expect("write");
        assert!(matches!(
            load_brief(&p("empty.md")),
            Err(BriefError::Empty(_))
        ));
        fs::write(p("bin.md"), b"ok\xff\xfe").expect("write");
        assert!(matches!(
            load_brief(&p("bin.md")),
            Err(BriefError::NotUtf8 { offset: 2, .. })
        ));
        fs::write(p("big.md"), vec![b'a'; 1024 * 1024 + 1]).expect("write");
        assert!(matches!(
            load_brief(&p("big.md")),
            Err(BriefError::TooLarge { .. })
        ));
        fs::write(p("ok.md"), "# idea\n").expect("write");
        assert_eq!(load_brief(&p("ok.md")).expect("valid"), "# idea\n");
    }
}
