//! What git just wrote, read back without a git process: the commit `HEAD` names and loose
//! objects. Anything not plainly there (a packed ref, a packed object, another ref backend)
//! answers `None`, and the caller asks git. And the one kind of object gavel writes itself: a
//! loose object (a blob or a tree), stored as git stores one.

use std::io::{Read, Write};
use std::path::Path;

use sha1::{Digest, Sha1};

/// The SHA-1 id of the object of `kind` with `body`.
pub(crate) fn object_id(kind: &str, body: &[u8]) -> String {
    let mut hasher = Sha1::new();
    hasher.update(format!("{kind} {}\0", body.len()).as_bytes());
    hasher.update(body);
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Whether `git_dir` holds the loose object `id`.
pub(crate) fn has_loose(git_dir: &Path, id: &str) -> bool {
    id.len() == 40
        && git_dir
            .join("objects")
            .join(&id[..2])
            .join(&id[2..])
            .exists()
}

/// Writes the loose object of the blob holding `content` (see [`write_object`]).
pub(crate) fn write_blob(git_dir: &Path, content: &[u8]) -> std::io::Result<String> {
    write_object(git_dir, "blob", content)
}

/// Writes the loose object of `kind` with `body` into `git_dir` unless it is there; returns
/// its id. As git writes one: the header (`blob N\0`) and the body, zlib-compressed at git's
/// default level for loose objects (1, with an 8 KiB window), in a temporary file (`tmp_obj_*`, which `git gc`
/// removes when one is left behind) renamed to the id's path, read-only. A rename over the
/// same object written at the same moment (by git) replaces it with identical bytes.
pub(crate) fn write_object(git_dir: &Path, kind: &str, body: &[u8]) -> std::io::Result<String> {
    let id = object_id(kind, body);
    let dir = git_dir.join("objects").join(&id[..2]);
    let path = dir.join(&id[2..]);
    if path.exists() {
        return Ok(id);
    }
    std::fs::create_dir_all(&dir)?;
    let data = zlib(format!("{kind} {}\0", body.len()).as_bytes(), body)?;
    let mut tmp = tempfile::Builder::new()
        .prefix("tmp_obj_")
        .tempfile_in(&dir)?;
    tmp.write_all(&data)?;
    tmp.as_file()
        .set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o444))?;
    tmp.persist(&path).map_err(|e| e.error)?;
    Ok(id)
}

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

thread_local! {
    /// One encoder per thread, reset between objects: a new one allocates and zeroes a few
    /// hundred KB of tables, more than compressing a small object costs. Level 1 as git's
    /// loose objects; an 8 KiB window (git reads any).
    static ZLIB: std::cell::RefCell<flate2::write::ZlibEncoder<Vec<u8>>> =
        std::cell::RefCell::new(zlib_encoder());
}

fn zlib_encoder() -> flate2::write::ZlibEncoder<Vec<u8>> {
    flate2::write::ZlibEncoder::new_with_compress(
        Vec::new(),
        flate2::Compress::new_with_window_bits(flate2::Compression::new(1), true, 13),
    )
}

/// `head` then `body`, zlib-compressed (with zlib's header, as loose objects are).
fn zlib(head: &[u8], body: &[u8]) -> std::io::Result<Vec<u8>> {
    ZLIB.with(|z| {
        let mut z = z.borrow_mut();
        let out = z
            .write_all(head)
            .and_then(|()| z.write_all(body))
            .and_then(|()| z.reset(Vec::new()));
        if out.is_err() {
            // Never leave half a stream for the next object.
            *z = zlib_encoder();
        }
        out
    })
}
