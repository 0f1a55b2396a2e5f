//! What the archive merges: the change's delta specs, read as files gavel does not trust
//! (see [`crate::change::read`]), and their hashes, so that a delta spec edited while the
//! archive gate waits is noticed (A1, A2) and merged again instead of archived unseen.

use gavel_core::ContentHash;
use serde::{Deserialize, Serialize};

use crate::change::ChangeDir;
use crate::change::read::read_text_optional;

/// One delta spec as A0 merged it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeltaHash {
    pub capability: String,
    /// The hash of `changes/ID/specs/CAPABILITY/spec.md` as it was read.
    pub hash: ContentHash,
}

/// The hashes of `specs` (`(capability, text)`, in the order given).
pub(super) fn hash_deltas(specs: &[(String, String)]) -> Vec<DeltaHash> {
    specs
        .iter()
        .map(|(capability, text)| DeltaHash {
            capability: capability.clone(),
            hash: ContentHash::of(text.as_bytes()),
        })
        .collect()
}

/// Every delta spec of the change: `(capability, text)`, sorted by capability. A `spec.md`
/// that is no regular file (a FIFO, a link, a device, too large) is an error naming it.
pub(super) fn delta_specs(dir: &ChangeDir) -> Result<Vec<(String, String)>, String> {
    let specs = dir.specs_dir();
    let entries = match std::fs::read_dir(&specs) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("cannot read {}: {e}", specs.display())),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot read {}: {e}", specs.display()))?;
        if !entry.path().is_dir() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(text) = read_text_optional(&dir.delta_spec(&name)).map_err(|e| e.to_string())? {
            out.push((name, text));
        }
    }
    out.sort();
    Ok(out)
}

/// The text of a delta spec's `## Purpose` section, if it has one.
pub(crate) fn delta_purpose(text: &str) -> Option<String> {
    let headings = crate::change::spec::outline(text).headings;
    let at = headings
        .iter()
        .position(|h| h.level == 2 && h.title.trim() == "Purpose")?;
    let start = text[headings[at].start..]
        .find('\n')
        .map_or(text.len(), |n| headings[at].start + n + 1);
    let end = headings[at + 1..]
        .iter()
        .find(|h| h.level <= 2)
        .map_or(text.len(), |h| h.start);
    let purpose = text.get(start..end)?.trim();
    (!purpose.is_empty()).then(|| purpose.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delta_spec_that_is_a_fifo_is_an_error_naming_it() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = ChangeDir::new(tmp.path(), "add-x").expect("id");
        std::fs::create_dir_all(dir.delta_spec("auth").parent().expect("parent")).expect("mkdir");
        std::fs::create_dir_all(dir.specs_dir().join("empty")).expect("mkdir");
        std::fs::write(dir.delta_spec("auth"), "## ADDED Requirements\n").expect("write");
        let specs = delta_specs(&dir).expect("read");
        assert_eq!(specs.len(), 1, "a folder without spec.md is no delta");
        nix::unistd::mkfifo(&dir.delta_spec("empty"), nix::sys::stat::Mode::S_IRWXU)
            .expect("mkfifo");
        let err = delta_specs(&dir).expect_err("a FIFO is no spec");
        assert!(
            err.contains("empty/spec.md") && err.contains("FIFO"),
            "{err}"
        );
    }

    #[test]
    fn hashes_follow_the_text() {
        let a = hash_deltas(&[("auth".into(), "one".into())]);
        let b = hash_deltas(&[("auth".into(), "two".into())]);
        assert_ne!(a, b);
        assert_eq!(a, hash_deltas(&[("auth".into(), "one".into())]));
    }
}
