//! gitignore files made only of plain patterns, matched without compiling anything.
//!
//! Building the `ignore` crate's matcher for a file compiles its globs into a regex set, which
//! was a tenth of a filing's own time for a three-line `.gitignore`. Most ignore files hold
//! only plain patterns (`target/`, `*.log`, `/dist`, `!keep.txt`), which git matches with a
//! few string comparisons, so this module does the same for them, following gitignore(5) and
//! git's `dir.c`:
//!
//! - blank lines and `#` comments are skipped; trailing spaces are dropped;
//! - `!` negates; a trailing `/` matches folders only;
//! - a pattern with a `/` at its start or in its middle is matched against the path relative
//!   to the ignore file's folder (`*` and `?` never match a `/`); any other pattern against
//!   the last path component, at any depth;
//! - the last matching pattern of the file decides.
//!
//! A file with anything else (`[` classes, `**`, a backslash escape, a carriage return, a
//! byte outside ASCII (a byte-order mark), a pattern that is empty or `/` alone) is not parsed here: [`parse`] answers `None` and the
//! caller uses the `ignore` crate for it, as before.

use std::path::Path;

/// One plain pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pattern {
    /// The glob, without its `!`, leading `/` or trailing `/`.
    glob: Vec<u8>,
    /// `!pattern`: a match un-ignores.
    negated: bool,
    /// `pattern/`: matches folders only.
    dir_only: bool,
    /// Matched against the whole relative path (it had a `/` at its start or middle), not
    /// the last component.
    anchored: bool,
}

/// The plain patterns of one ignore file, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Simple {
    patterns: Vec<Pattern>,
}

/// What the last matching pattern says about a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// No pattern matches.
    None,
    /// Ignored.
    Ignore,
    /// Un-ignored by a `!` pattern.
    Whitelist,
}

/// The patterns of an ignore file's `text`, or `None` when one of them is more than plain.
pub(crate) fn parse(text: &[u8]) -> Option<Simple> {
    let mut patterns = Vec::new();
    for line in text.split(|b| *b == b'\n') {
        if line.is_empty() || line[0] == b'#' {
            continue;
        }
        if line
            .iter()
            .any(|b| matches!(b, b'[' | b'\\' | b'\r' | b'\0') || !b.is_ascii())
            || line.windows(2).any(|w| w == b"**")
        {
            return None;
        }
        let mut p = line;
        while let [rest @ .., b' '] = p {
            p = rest;
        }
        if p.is_empty() {
            continue;
        }
        let negated = p[0] == b'!';
        if negated {
            p = &p[1..];
        }
        let dir_only = p.last() == Some(&b'/');
        if dir_only {
            p = &p[..p.len() - 1];
        }
        let anchored = p.contains(&b'/');
        if let [b'/', rest @ ..] = p {
            p = rest;
        }
        if p.is_empty() || p.first() == Some(&b'/') || p.last() == Some(&b'/') {
            return None;
        }
        patterns.push(Pattern {
            glob: p.to_vec(),
            negated,
            dir_only,
            anchored,
        });
    }
    Some(Simple { patterns })
}

impl Simple {
    /// The verdict for `rel`, a path relative to the ignore file's folder (a folder when
    /// `is_dir`).
    pub(crate) fn matched(&self, rel: &Path, is_dir: bool) -> Verdict {
        let Some(rel) = rel.to_str() else {
            return Verdict::None;
        };
        let rel = rel.as_bytes();
        let base = rel.rsplit(|b| *b == b'/').next().unwrap_or(rel);
        for p in self.patterns.iter().rev() {
            if p.dir_only && !is_dir {
                continue;
            }
            let subject = if p.anchored { rel } else { base };
            if glob_match(&p.glob, subject) {
                return if p.negated {
                    Verdict::Whitelist
                } else {
                    Verdict::Ignore
                };
            }
        }
        Verdict::None
    }
}

/// Whether `glob` (`*` any run of bytes but `/`, `?` one byte but `/`, anything else itself)
/// matches all of `text`.
fn glob_match(glob: &[u8], text: &[u8]) -> bool {
    let (mut g, mut t) = (0, 0);
    // Where to resume after the last `*`: the glob after it and the text it has taken so far.
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match glob.get(g) {
            Some(b'*') => {
                star = Some((g + 1, t));
                g += 1;
                continue;
            }
            Some(b'?') if text[t] != b'/' => {
                g += 1;
                t += 1;
                continue;
            }
            Some(&c) if c != b'?' && c == text[t] => {
                g += 1;
                t += 1;
                continue;
            }
            _ => {}
        }
        // A mismatch: let the last `*` take one more byte, unless that byte is a `/`.
        match star {
            Some((after, taken)) if text[taken] != b'/' => {
                star = Some((after, taken + 1));
                g = after;
                t = taken + 1;
            }
            _ => return false,
        }
    }
    glob[g..].iter().all(|b| *b == b'*')
}

#[cfg(test)]
#[path = "ignore_simple_tests.rs"]
mod tests;
