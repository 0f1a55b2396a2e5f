//! Parsing `git diff --cached --raw --numstat -z -M --no-abbrev` as it streams: one run of git gives both the
//! raw section (status, modes and full object ids of every changed file) and the numstat
//! section (lines added and deleted). With `-z` every path is a NUL-terminated byte string, so
//! names with spaces, newlines or any other byte need no unquoting.
//!
//! Raw entries: `:<old mode> <new mode> <old oid> <new oid> <status>\0<path>\0`, or for a
//! rename or copy `...R<score>\0<old path>\0<new path>\0`. Numstat entries:
//! `<added>\t<deleted>\t<path>\0`, or for a rename `<added>\t<deleted>\t\0<old>\0<new>\0`;
//! binary files show `-` for both counts.

use std::collections::HashMap;

/// One changed file as git reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RawEntry {
    /// The status letter: `M`, `A`, `D`, `R`, `C`, `T`, `U`, `X`.
    pub(crate) status: u8,
    pub(crate) old_mode: String,
    /// The mode in the index (`000000` for a deletion).
    pub(crate) new_mode: String,
    pub(crate) old_oid: String,
    /// The path before a rename or copy.
    pub(crate) old_path: Option<Vec<u8>>,
    pub(crate) path: Vec<u8>,
    pub(crate) added: u64,
    pub(crate) deleted: u64,
    pub(crate) binary: bool,
}

/// The mode git gives a submodule (gitlink) entry.
pub(crate) const GITLINK_MODE: &str = "160000";

/// The mode git gives a symbolic link.
pub(crate) const SYMLINK_MODE: &str = "120000";

/// Why the diff output could not be parsed.
#[derive(Debug)]
pub(crate) enum ParseError {
    /// Reading git's output failed.
    Io(std::io::Error),
    /// git printed something unexpected.
    Format(String),
}

impl From<String> for ParseError {
    fn from(detail: String) -> Self {
        Self::Format(detail)
    }
}

impl From<&str> for ParseError {
    fn from(detail: &str) -> Self {
        Self::Format(detail.to_owned())
    }
}

/// The longest token (a path or an entry) accepted; git's paths are far shorter (PATH_MAX).
const MAX_TOKEN: u64 = 64 * 1024;

/// NUL-terminated tokens read one at a time, with one token of look-ahead.
struct Tokens<R> {
    reader: R,
    peeked: Option<Option<Vec<u8>>>,
}

impl<R: std::io::BufRead> Tokens<R> {
    fn next(&mut self) -> Result<Option<Vec<u8>>, ParseError> {
        use std::io::{BufRead as _, Read as _};
        if let Some(token) = self.peeked.take() {
            return Ok(token);
        }
        let mut token = Vec::new();
        let n = (&mut self.reader)
            .take(MAX_TOKEN)
            .read_until(0, &mut token)
            .map_err(ParseError::Io)?;
        if n == 0 {
            return Ok(None);
        }
        if token.pop() != Some(0) {
            return Err("output does not end with NUL, or a name is too long".into());
        }
        Ok(Some(token))
    }

    fn peek(&mut self) -> Result<Option<&Vec<u8>>, ParseError> {
        if self.peeked.is_none() {
            let token = self.next()?;
            self.peeked = Some(token);
        }
        Ok(self.peeked.as_ref().and_then(Option::as_ref))
    }

    fn required(&mut self, what: &str) -> Result<Vec<u8>, ParseError> {
        self.next()?
            .ok_or_else(|| ParseError::Format(format!("output ends before {what}")))
    }
}

/// Parses the combined raw + numstat output as it streams in. Every raw entry becomes one
/// [`RawEntry`] in git's order, and is handed to `on_raw` as soon as it is read (before git
/// has computed any line counts), so work on it can overlap git's. Its counts come from the
/// numstat entry for the same (new) path, or are 0/0 when numstat has none (a change of mode
/// only).
pub(crate) fn parse_stream(
    reader: impl std::io::BufRead,
    mut on_raw: impl FnMut(&RawEntry),
) -> Result<Vec<RawEntry>, ParseError> {
    let mut tokens = Tokens {
        reader,
        peeked: None,
    };
    let mut entries = Vec::new();
    // Raw section: every entry starts with ':'; paths are taken positionally, so a file whose
    // name starts with ':' is not mistaken for a header.
    while tokens.peek()?.is_some_and(|t| t.first() == Some(&b':')) {
        let head = tokens.required("a raw entry")?;
        let head = String::from_utf8(head).map_err(|_| "a raw entry is not ASCII")?;
        let fields: Vec<&str> = head[1..].split(' ').collect();
        let [old_mode, new_mode, old_oid, _new_oid, status] = fields[..] else {
            return Err(format!("malformed raw entry {head:?}").into());
        };
        let status_letter = *status
            .as_bytes()
            .first()
            .ok_or_else(|| format!("raw entry without a status: {head:?}"))?;
        let (old_path, path) = if matches!(status_letter, b'R' | b'C') {
            let old = tokens.required("a path")?;
            (Some(old), tokens.required("a path")?)
        } else {
            (None, tokens.required("a path")?)
        };
        let entry = RawEntry {
            status: status_letter,
            old_mode: old_mode.to_owned(),
            new_mode: new_mode.to_owned(),
            old_oid: old_oid.to_owned(),
            old_path,
            path,
            added: 0,
            deleted: 0,
            binary: false,
        };
        on_raw(&entry);
        entries.push(entry);
    }

    // Numstat section, keyed by the new path.
    let mut counts: HashMap<Vec<u8>, (u64, u64, bool)> = HashMap::with_capacity(entries.len());
    while let Some(token) = tokens.next()? {
        let mut parts = token.splitn(3, |&b| b == b'\t');
        let (Some(added), Some(deleted), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(format!(
                "malformed numstat entry {:?}",
                String::from_utf8_lossy(&token)
            )
            .into());
        };
        let path = if path.is_empty() {
            // A rename: the old and the new path follow as their own tokens.
            tokens.required("a renamed file's old path")?;
            tokens.required("a renamed file's new path")?
        } else {
            path.to_vec()
        };
        let count = if added == b"-" && deleted == b"-" {
            (0, 0, true)
        } else {
            (number(added)?, number(deleted)?, false)
        };
        counts.insert(path, count);
    }

    for entry in &mut entries {
        if let Some(&(added, deleted, binary)) = counts.get(&entry.path) {
            entry.added = added;
            entry.deleted = deleted;
            entry.binary = binary;
        }
    }
    Ok(entries)
}

fn number(text: &[u8]) -> Result<u64, String> {
    std::str::from_utf8(text)
        .ok()
        .and_then(|t| t.parse().ok())
        .ok_or_else(|| format!("{:?} is not a line count", String::from_utf8_lossy(text)))
}

/// Whether an object id is git's null id (all zeros: "no such file on this side").
pub(crate) fn is_null_oid(oid: &str) -> bool {
    oid.bytes().all(|b| b == b'0')
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: &str = "87ae6b695deceaf160611414f7dcd5c7366b2e79";
    const NEW: &str = "22f6b3b038c9c8f81e86f801c481bbf851e477fe";
    const NUL: &str = "0000000000000000000000000000000000000000";

    fn raw(old_mode: &str, new_mode: &str, old: &str, new: &str, status: &str) -> String {
        format!(":{old_mode} {new_mode} {old} {new} {status}")
    }

    #[test]
    fn parses_every_kind_of_entry() {
        let mut out = Vec::new();
        for token in [
            raw("100644", "100644", OLD, NEW, "M").as_str(),
            "b.bin",
            raw("100644", "100644", OLD, NEW, "R087").as_str(),
            "old name.txt",
            "new\nname.txt",
            raw("000000", "100644", NUL, NEW, "A").as_str(),
            ":colon",
            raw("100644", "000000", OLD, NUL, "D").as_str(),
            "gone",
            raw("100644", "100755", OLD, OLD, "M").as_str(),
            "mode-only",
            "-\t-\tb.bin",
            "1\t0\t",
            "old name.txt",
            "new\nname.txt",
            "7\t0\t:colon",
            "0\t12\tgone",
        ] {
            out.extend_from_slice(token.as_bytes());
            out.push(0);
        }
        let mut seen = Vec::new();
        let entries = parse_stream(&out[..], |e| seen.push(e.path.clone())).unwrap();
        assert_eq!(seen.len(), 5, "every raw entry is announced");
        assert_eq!(entries.len(), 5);
        assert!(entries[0].binary);
        assert_eq!(entries[1].status, b'R');
        assert_eq!(entries[1].old_path.as_deref(), Some(&b"old name.txt"[..]));
        assert_eq!(entries[1].path, b"new\nname.txt");
        assert_eq!((entries[1].added, entries[1].deleted), (1, 0));
        assert_eq!(entries[2].path, b":colon");
        assert_eq!((entries[2].status, entries[2].added), (b'A', 7));
        assert_eq!((entries[3].status, entries[3].deleted), (b'D', 12));
        assert_eq!((entries[4].added, entries[4].deleted), (0, 0));
        assert_eq!(entries[3].old_oid, OLD);
    }

    #[test]
    fn empty_output_is_no_entries() {
        assert!(parse_stream(&b""[..], |_| {}).unwrap().is_empty());
    }

    #[test]
    fn rejects_garbage() {
        for bad in [
            &b":100644 M\0x\0"[..],
            b"x\ty\tz\0",
            b"nonsense\0",
            b"1\t2\tno-terminator",
            b":100644 100644 a b M\0",
        ] {
            let result = parse_stream(bad, |_| {});
            assert!(
                matches!(result, Err(ParseError::Format(_))),
                "{:?}: {result:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn null_oid() {
        assert!(is_null_oid(NUL));
        assert!(!is_null_oid(OLD));
    }
}
