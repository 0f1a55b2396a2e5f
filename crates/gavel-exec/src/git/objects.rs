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
/// its id ([`write_loose`]).
pub(crate) fn write_object(git_dir: &Path, kind: &str, body: &[u8]) -> std::io::Result<String> {
    let id = object_id(kind, body);
    if !has_loose(git_dir, &id) {
        write_loose(git_dir, kind, body, &id)?;
    }
    Ok(id)
}

/// Writes the loose object `id` of `kind` with `body`, which the caller has just found
/// missing, as git writes one: the header (`blob N\0`) and the body as a zlib stream, in a
/// read-only temporary file (`tmp_obj_*`, which `git gc` removes when one is left behind)
/// renamed to the id's path. Like git, it makes the fan-out folder only when creating the
/// file there fails for want of it. An object that fits one 4 KiB disk block as it is goes
/// in stored (uncompressed) deflate blocks, what git writes with `core.looseCompression=0`:
/// on disk it takes the block it would take compressed, and a process that writes only such
/// objects never sets up a compressor (a few hundred KB of tables to zero, a real part of a
/// short run). Larger ones are compressed at git's default level for loose objects (1, with
/// an 8 KiB window). git reads either; a rename over the same object written at the same
/// moment by git replaces it with the same content.
pub(crate) fn write_loose(
    git_dir: &Path,
    kind: &str,
    body: &[u8],
    id: &str,
) -> std::io::Result<()> {
    let (Some(fan_out), Some(name)) = (id.get(..2), id.get(2..)) else {
        return Err(std::io::Error::other(format!("not an object id: {id}")));
    };
    let dir = git_dir.join("objects").join(fan_out);
    let data = zlib(format!("{kind} {}\0", body.len()).as_bytes(), body)?;
    let mut tmp = match temp_object(&dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(&dir)?;
            temp_object(&dir)?
        }
        opened => opened?,
    };
    tmp.write_all(&data)?;
    tmp.persist(dir.join(name)).map_err(|e| e.error)?;
    Ok(())
}

/// A new, read-only temporary file for an object in the fan-out folder `dir`.
fn temp_object(dir: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    tempfile::Builder::new()
        .prefix("tmp_obj_")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o444))
        .tempfile_in(dir)
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

/// The largest loose object (header and body) kept in stored deflate blocks: with zlib's
/// 2-byte header, a 5-byte block header and the 4-byte checksum, one 4 KiB block.
const STORED_MAX: usize = 4096 - 11;

/// `head` then `body` as a zlib stream (with zlib's header, as loose objects are): stored
/// when they fit [`STORED_MAX`], compressed otherwise.
fn zlib(head: &[u8], body: &[u8]) -> std::io::Result<Vec<u8>> {
    let len = head.len() + body.len();
    if len <= STORED_MAX {
        return Ok(stored(head, body));
    }
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

/// `head` then `body` (together at most 65,535 bytes) as a zlib stream of one final stored
/// deflate block (RFC 1950, 1951): the header zlib writes at level 0, the block, the Adler-32
/// of the data.
fn stored(head: &[u8], body: &[u8]) -> Vec<u8> {
    let len = u16::try_from(head.len() + body.len()).unwrap_or(u16::MAX);
    let mut out = Vec::with_capacity(usize::from(len) + 11);
    // CMF 0x78 (deflate, 32 KiB window), FLG 0x01 (fastest, no dictionary; 0x7801 % 31 == 0).
    out.extend_from_slice(&[0x78, 0x01, 0x01]);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&(!len).to_le_bytes());
    out.extend_from_slice(head);
    out.extend_from_slice(body);
    out.extend_from_slice(&adler32(&[head, body]).to_be_bytes());
    out
}

/// The Adler-32 checksum of `parts`, one after the other.
fn adler32(parts: &[&[u8]]) -> u32 {
    const MOD: u32 = 65521;
    // The most bytes before the sums must be reduced to stay within 32 bits.
    const NMAX: usize = 5552;
    let (mut a, mut b) = (1u32, 0u32);
    for part in parts {
        for chunk in part.chunks(NMAX) {
            for &byte in chunk {
                a += u32::from(byte);
                b += a;
            }
            a %= MOD;
            b %= MOD;
        }
    }
    (b << 16) | a
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    fn inflate(data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        flate2::read::ZlibDecoder::new(data)
            .read_to_end(&mut out)
            .expect("a valid zlib stream");
        out
    }

    #[test]
    fn small_objects_are_stored_and_large_ones_compressed_and_both_read_back() {
        let small = b"hello\n".repeat(10);
        let data = zlib(b"blob 60\0", &small).expect("zlib");
        assert_eq!(data.len(), 8 + 60 + 11, "stored as it is");
        assert_eq!(inflate(&data), [&b"blob 60\0"[..], &small].concat());

        let edge = vec![b'x'; STORED_MAX - 10];
        let head = format!("blob {}\0", edge.len());
        assert_eq!(head.len(), 10);
        let data = zlib(head.as_bytes(), &edge).expect("zlib");
        assert_eq!(
            data.len(),
            4096,
            "the largest stored object fills one block"
        );
        assert_eq!(inflate(&data), [head.as_bytes(), &edge].concat());
        let over = vec![b'x'; STORED_MAX - 9];
        let head = format!("blob {}\0", over.len());
        let data = zlib(head.as_bytes(), &over).expect("zlib");
        assert!(
            data.len() < 200,
            "one byte more is compressed: {}",
            data.len()
        );

        let large = b"all work and no play\n".repeat(500);
        let head = format!("blob {}\0", large.len());
        let data = zlib(head.as_bytes(), &large).expect("zlib");
        assert!(data.len() < large.len() / 4, "compressed: {}", data.len());
        assert_eq!(inflate(&data), [head.as_bytes(), &large].concat());
    }

    #[test]
    fn adler32_matches_the_reference_values() {
        assert_eq!(adler32(&[]), 1);
        assert_eq!(adler32(&[b"Wikipedia"]), 0x11E6_0398);
        assert_eq!(adler32(&[b"Wiki", b"pedia"]), 0x11E6_0398);
        // Past the point where the sums must be reduced: zlib's own trailer says.
        let long = vec![0xffu8; 100_000];
        let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(1));
        encoder.write_all(&long).expect("compress");
        let stream = encoder.finish().expect("compress");
        let trailer: [u8; 4] = stream[stream.len() - 4..].try_into().expect("4 bytes");
        assert_eq!(
            adler32(&[&long[..40_000], &long[40_000..]]),
            u32::from_be_bytes(trailer)
        );
    }

    /// A new, empty repository, its git and its `.git` folder.
    fn new_repo() -> (tempfile::TempDir, super::super::Git, std::path::PathBuf) {
        let dir = tempfile::tempdir().expect("a temp dir");
        let git = super::super::Git::at(dir.path());
        git.run(&["init", "-q"]).expect("init");
        let git_dir = dir.path().join(".git");
        (dir, git, git_dir)
    }

    #[test]
    fn git_reads_and_checks_stored_objects() {
        let (_dir, git, git_dir) = new_repo();
        let id = write_blob(&git_dir, b"a small file\n").expect("written");
        assert_eq!(id, object_id("blob", b"a small file\n"));
        let shown = git.run(&["cat-file", "-p", &id]).expect("git reads it");
        assert_eq!(shown, "a small file\n");
        let large = "line of text\n".repeat(1000);
        let big = write_blob(&git_dir, large.as_bytes()).expect("written");
        assert_eq!(
            git.run(&["cat-file", "-s", &big]).expect("size").trim(),
            "13000"
        );
        git.run(&["fsck", "--strict", "--no-dangling"])
            .expect("git fsck accepts both");
    }

    #[test]
    fn objects_are_read_only_their_folder_made_on_demand_and_an_existing_one_kept() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};

        let (_dir, git, git_dir) = new_repo();
        let id = object_id("blob", b"first\n");
        let fan_out = git_dir.join("objects").join(&id[..2]);
        assert!(!fan_out.exists(), "a new repository has no fan-out folders");

        write_loose(&git_dir, "blob", b"first\n", &id).expect("written");
        let path = fan_out.join(&id[2..]);
        let meta = std::fs::metadata(&path).expect("the object");
        assert_eq!(
            meta.permissions().mode() & 0o777,
            0o444,
            "read-only as git's"
        );
        let names: Vec<_> = std::fs::read_dir(&fan_out)
            .expect("the fan-out folder")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names.len(), 1, "no temporary file left: {names:?}");
        assert_eq!(
            git.run(&["cat-file", "-p", &id]).expect("git reads it"),
            "first\n"
        );

        // The folder is there now; another object of the same folder lands beside the first.
        let (body, other) = (0..)
            .map(|n| format!("second {n}\n"))
            .map(|body| {
                let id = object_id("blob", body.as_bytes());
                (body, id)
            })
            .find(|(_, other)| other[..2] == id[..2])
            .expect("one in a few hundred shares the folder");
        write_loose(&git_dir, "blob", body.as_bytes(), &other).expect("written");
        assert!(fan_out.join(&other[2..]).is_file());

        // write_object leaves an object that is there as it is.
        let inode = meta.ino();
        assert_eq!(write_blob(&git_dir, b"first\n").expect("present"), id);
        assert_eq!(std::fs::metadata(&path).expect("kept").ino(), inode);
    }
}
