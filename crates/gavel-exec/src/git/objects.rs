//! What git just wrote, read back without a git process: the commit `HEAD` names and loose
//! objects. Anything not plainly there (a packed ref, a packed object, another ref backend)
//! answers `None`, and the caller asks git.

use std::io::Read;
use std::path::Path;

/// The commit id `HEAD` names, through a loose ref (or a detached `HEAD`).
pub(crate) fn head_id(git_dir: &Path) -> Option<String> {
    let head = std::fs::read_to_string(git_dir.join("HEAD")).ok()?;
    let head = head.trim();
    let id = match head.strip_prefix("ref: ") {
        Some(name) if name.starts_with("refs/") && !name.contains("..") => {
            std::fs::read_to_string(git_dir.join(name)).ok()?
        }
        Some(_) => return None,
        None => head.to_owned(),
    };
    let id = id.trim();
    (id.len() == 40 && id.bytes().all(|b| b.is_ascii_hexdigit())).then(|| id.to_owned())
}

/// The body of the loose object `id` if it is of `kind` (`commit`, `tree`, `blob`).
pub(crate) fn loose(git_dir: &Path, id: &str, kind: &str) -> Option<Vec<u8>> {
    let path = git_dir
        .join("objects")
        .join(id.get(..2)?)
        .join(id.get(2..)?);
    let file = std::fs::File::open(path).ok()?;
    let mut bytes = Vec::new();
    flate2::read::ZlibDecoder::new(file)
        .take(1 << 20)
        .read_to_end(&mut bytes)
        .ok()?;
    let nul = bytes.iter().position(|b| *b == 0)?;
    let header = std::str::from_utf8(&bytes[..nul]).ok()?;
    let (found, size) = header.split_once(' ')?;
    let fits = found == kind && size.parse::<usize>().ok()? == bytes.len() - nul - 1;
    fits.then(|| bytes.split_off(nul + 1))
}

/// The tree the loose commit `id` records.
pub(crate) fn commit_tree(git_dir: &Path, id: &str) -> Option<String> {
    let body = loose(git_dir, id, "commit")?;
    let first = body.split(|b| *b == b'\n').next()?;
    let tree = std::str::from_utf8(first.strip_prefix(b"tree ")?).ok()?;
    (tree.len() == 40).then(|| tree.to_owned())
}

/// Whether the loose commit `id`'s message has the line `line`.
pub(crate) fn commit_has_line(git_dir: &Path, id: &str, line: &str) -> Option<bool> {
    let body = loose(git_dir, id, "commit")?;
    let text = String::from_utf8_lossy(&body);
    let (_, message) = text.split_once("\n\n")?;
    Some(message.lines().any(|l| l.trim_end() == line))
}
