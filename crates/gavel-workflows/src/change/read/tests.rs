//! The change reader: regular files only, capped, never blocked by a FIFO. Each attack runs on
//! a thread with a deadline, so a reader that blocks fails the test instead of hanging it.

use std::sync::mpsc;
use std::time::Duration;

use super::*;

/// Runs `read` on a thread and returns its result, or panics if it takes longer than a
/// minute: a reader that blocks on a FIFO never returns at all.
fn within_a_minute<T: Send + 'static>(read: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(read());
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("the read blocked: a FIFO or device was read as a file")
}

fn mkfifo(path: &Path) {
    nix::unistd::mkfifo(path, nix::sys::stat::Mode::S_IRWXU).expect("mkfifo");
}

#[test]
fn a_regular_file_is_read() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = tmp.path().join("tasks.md");
    fs::write(&path, "- [ ] 1.1 a\n").expect("write");
    assert_eq!(read_text(&path).expect("read"), "- [ ] 1.1 a\n");
    assert_eq!(read_bytes(&path).expect("read"), b"- [ ] 1.1 a\n");
    assert!(
        read_text_optional(&tmp.path().join("nope"))
            .expect("missing")
            .is_none()
    );
    assert!(
        read_bytes_optional(&tmp.path().join("nope"))
            .expect("missing")
            .is_none()
    );
    let err = read_text(&tmp.path().join("nope")).expect_err("missing");
    assert!(err.is_not_found(), "{err}");
}

#[test]
fn a_fifo_is_refused_without_blocking() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = tmp.path().join("STATE.yaml");
    mkfifo(&path);
    let p = path.clone();
    let err = within_a_minute(move || read_text(&p)).expect_err("a FIFO is no file");
    let msg = err.to_string();
    assert!(
        msg.contains(&path.display().to_string()) && msg.contains("named pipe (FIFO)"),
        "{msg}"
    );
    // An optional read refuses it too: only a missing file is `None`.
    let p = path.clone();
    assert!(within_a_minute(move || read_text_optional(&p)).is_err());
}

#[test]
fn a_symlink_to_dev_zero_is_refused_without_reading_it() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = tmp.path().join("tasks.md");
    std::os::unix::fs::symlink("/dev/zero", &path).expect("symlink");
    let p = path.clone();
    let err = within_a_minute(move || read_bytes(&p)).expect_err("a link is not followed");
    assert!(matches!(err, ReadError::Symlink { .. }), "{err}");
    assert!(err.to_string().contains("symbolic link"), "{err}");
    // Even a link to a regular file is refused: it could point anywhere.
    let target = tmp.path().join("secret");
    fs::write(&target, "key").expect("write");
    let link = tmp.path().join("proposal.md");
    std::os::unix::fs::symlink(&target, &link).expect("symlink");
    assert!(matches!(read_text(&link), Err(ReadError::Symlink { .. })));
    assert!(is_present(&link) && is_present(&path));
}

#[test]
fn devices_and_folders_are_refused() {
    let err = within_a_minute(|| read_bytes(Path::new("/dev/zero"))).expect_err("a device");
    assert!(err.to_string().contains("is a device"), "{err}");
    let tmp = tempfile::tempdir().expect("tempdir");
    let err = read_text(tmp.path()).expect_err("a folder");
    assert!(err.to_string().contains("is a folder"), "{err}");
}

#[test]
fn a_file_over_the_cap_is_refused_and_one_at_the_cap_is_read() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = tmp.path().join("spec.md");
    let at_cap = vec![b'a'; usize::try_from(MAX_FILE_BYTES).expect("fits")];
    fs::write(&path, &at_cap).expect("write");
    assert_eq!(read_bytes(&path).expect("at the cap").len(), at_cap.len());
    let mut over = at_cap;
    over.push(b'a');
    fs::write(&path, &over).expect("write");
    let err = read_bytes(&path).expect_err("over the cap");
    assert!(matches!(err, ReadError::TooLarge { .. }), "{err}");
    assert!(err.to_string().contains("8 MiB"), "{err}");
}

#[test]
fn the_cap_holds_even_when_the_length_is_not_what_the_metadata_said() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = tmp.path().join("grows.md");
    fs::write(&path, "small").expect("write");
    let file = File::open(&path).expect("open");
    // A file that grows after its metadata was read is still cut at the cap.
    fs::write(
        &path,
        vec![b'b'; usize::try_from(MAX_FILE_BYTES).expect("fits") + 10],
    )
    .expect("grow");
    let err = read_capped(file, 5, &path).expect_err("grew past the cap");
    assert!(matches!(err, ReadError::TooLarge { .. }), "{err}");
}

#[test]
fn text_that_is_not_utf8_names_the_offset() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = tmp.path().join("proposal.md");
    fs::write(&path, b"ok\xffno").expect("write");
    let err = read_text(&path).expect_err("not UTF-8");
    assert!(err.to_string().contains("offset 2"), "{err}");
}
