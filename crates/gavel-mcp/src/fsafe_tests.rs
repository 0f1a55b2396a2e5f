//! What the server reads and where its journal may be: regular files only (a FIFO, a device,
//! a folder or a symbolic link is refused at once, by name), no file over the cap, a journal
//! inside the change folder only, and a failed `submit_challenge` that changes nothing.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

use crate::fsafe::{MAX_FILE_BYTES, read_regular};
use crate::{
    Challenge, ChallengeVerdict, ChangeDir, GavelMcp, Journal, McpError, ServerConfig, read_review,
};

fn server(dir: &Path) -> GavelMcp {
    GavelMcp::new(ServerConfig {
        change_dir: dir.to_owned(),
        change_id: "add-login".into(),
        journal: None,
        tools: None,
    })
    .expect("server")
}

fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(made.success(), "mkfifo {}", path.display());
}

/// Runs `f` on a thread and waits for it a long minute: a hang (what a FIFO did) fails the
/// test instead of hanging it.
fn within_a_minute<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("the call returned instead of hanging")
}

#[test]
fn a_fifo_in_the_change_folder_is_refused_at_once_not_waited_on() {
    let tmp = tempfile::tempdir().expect("tempdir");
    mkfifo(&tmp.path().join("tasks.md"));
    let dir = tmp.path().to_owned();
    let err = within_a_minute(move || server(&dir).change_info()).expect_err("a FIFO");
    assert!(
        matches!(&err, McpError::NotAFile { kind: "FIFO", path } if path.ends_with("tasks.md")),
        "{err:?}"
    );
    assert!(err.to_string().contains("tasks.md is a FIFO"), "{err}");
}

#[test]
fn a_symlink_to_dev_zero_is_refused_not_read() {
    let tmp = tempfile::tempdir().expect("tempdir");
    std::os::unix::fs::symlink("/dev/zero", tmp.path().join("STATE.yaml")).expect("symlink");
    let dir = tmp.path().to_owned();
    let err = within_a_minute(move || server(&dir).change_info()).expect_err("a symlink");
    assert!(matches!(err, McpError::Symlink(_)), "{err:?}");
    // Named directly, a device is still no regular file.
    let err = within_a_minute(|| read_review(Path::new("/dev/zero"))).expect_err("a device");
    assert!(
        matches!(err, McpError::NotAFile { kind: "device", .. }),
        "{err:?}"
    );
}

#[test]
fn a_review_md_that_is_a_fifo_or_a_folder_is_refused() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let fifo = tmp.path().join("REVIEW.md");
    mkfifo(&fifo);
    let err = within_a_minute(move || read_review(&fifo)).expect_err("a FIFO");
    assert!(
        matches!(err, McpError::NotAFile { kind: "FIFO", .. }),
        "{err:?}"
    );
    fs::create_dir(tmp.path().join("tasks.md")).expect("a folder named tasks.md");
    let err = server(tmp.path()).change_info().expect_err("a folder");
    assert!(
        matches!(err, McpError::NotAFile { kind: "folder", .. }),
        "{err:?}"
    );
}

#[test]
fn a_file_over_the_cap_is_refused_without_reading_it() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let big = tmp.path().join("proposal.md");
    // Sparse: the size is there, the bytes are not.
    fs::File::create(&big)
        .and_then(|f| f.set_len(MAX_FILE_BYTES + 1))
        .expect("a big file");
    let err = read_regular(&big, MAX_FILE_BYTES).expect_err("too large");
    assert!(matches!(err, McpError::TooLarge { .. }), "{err:?}");
    assert!(err.to_string().contains("larger than"), "{err}");
    fs::write(&big, "12345").expect("small");
    assert_eq!(
        read_regular(&big, 5).expect("at the cap").as_deref(),
        Some("12345")
    );
    assert!(matches!(
        read_regular(&big, 4),
        Err(McpError::TooLarge { cap: 4, .. })
    ));
    assert_eq!(
        read_regular(&tmp.path().join("none"), 5).expect("missing"),
        None
    );
}

/// A change folder `change` inside a temporary folder, with a folder `outside` beside it.
fn change_and_outside() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let change = tmp.path().join("change");
    let outside = tmp.path().join("outside");
    fs::create_dir(&change).expect("change");
    fs::create_dir(&outside).expect("outside");
    (tmp, change, outside)
}

fn with_journal(change: &Path, journal: PathBuf) -> Result<GavelMcp, McpError> {
    GavelMcp::new(ServerConfig {
        change_dir: change.to_owned(),
        change_id: "add-login".into(),
        journal: Some(journal),
        tools: None,
    })
}

#[test]
fn a_journal_outside_the_change_folder_is_refused_by_name() {
    let (_tmp, change, outside) = change_and_outside();
    std::os::unix::fs::symlink(&outside, change.join("out")).expect("folder symlink");
    std::os::unix::fs::symlink(outside.join("j.jsonl"), change.join("link.jsonl"))
        .expect("file symlink");
    for given in [
        outside.join("j.jsonl"),
        change.join("../outside/j.jsonl"),
        change.join("sub/../j.jsonl"),
        change.join("out/j.jsonl"),
        PathBuf::from("j.jsonl"),
        change.clone(),
    ] {
        let err = with_journal(&change, given.clone()).expect_err("outside");
        assert!(
            matches!(&err, McpError::JournalOutside { given: g, .. } if *g == given),
            "{given:?}: {err:?}"
        );
        assert!(
            err.to_string().contains(&given.display().to_string()),
            "the error names the value: {err}"
        );
    }
    let err = with_journal(&change, change.join("link.jsonl")).expect_err("a symlink");
    assert!(matches!(err, McpError::Symlink(_)), "{err:?}");
    assert!(!outside.join("j.jsonl").exists());
    mkfifo(&change.join("fifo.jsonl"));
    let err = with_journal(&change, change.join("fifo.jsonl")).expect_err("a FIFO");
    assert!(
        matches!(err, McpError::NotAFile { kind: "FIFO", .. }),
        "{err:?}"
    );
    // Inside, in the folder itself or a subfolder, it is taken.
    fs::create_dir(change.join("state")).expect("subfolder");
    with_journal(&change, change.join("mcp.jsonl")).expect("inside");
    with_journal(&change, change.join("state/mcp.jsonl")).expect("inside, deeper");
}

#[test]
fn a_journal_whose_folder_is_swapped_for_a_symlink_is_refused_when_used() {
    let (_tmp, change, outside) = change_and_outside();
    fs::create_dir(change.join("state")).expect("subfolder");
    let dir = ChangeDir::open(&change).expect("dir");
    let journal = Journal::inside(&dir, &change.join("state/mcp.jsonl")).expect("inside");
    journal
        .record(serde_json::json!(1), "create_review", serde_json::json!({}))
        .expect("recorded");
    fs::remove_dir_all(change.join("state")).expect("rm");
    std::os::unix::fs::symlink(&outside, change.join("state")).expect("swap");
    let err = journal
        .record(serde_json::json!(2), "create_review", serde_json::json!({}))
        .expect_err("now outside");
    assert!(matches!(err, McpError::JournalOutside { .. }), "{err:?}");
    assert!(!outside.join("mcp.jsonl").exists());
}

#[test]
fn a_challenge_that_cannot_be_written_leaves_the_proposal_as_it_was() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let proposal = "# Proposal\n\nAdd login.\n";
    fs::write(tmp.path().join("proposal.md"), proposal).expect("proposal");
    // challenge.json cannot be replaced (a folder holds its name): the proposal, already
    // written by then, is put back.
    fs::create_dir_all(tmp.path().join("challenge.json/x")).expect("a folder");
    let challenge = Challenge {
        verdict: ChallengeVerdict::Rejected,
        findings: vec!["No spec.".into()],
    };
    let err = server(tmp.path())
        .write_challenge(&challenge)
        .expect_err("challenge.json is a folder");
    assert!(matches!(err, McpError::Io { .. }), "{err:?}");
    assert_eq!(
        fs::read_to_string(tmp.path().join("proposal.md")).expect("proposal"),
        proposal
    );
    let mut names: Vec<String> = fs::read_dir(tmp.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["challenge.json", "proposal.md"],
        "no temporary file left"
    );
}

#[test]
fn a_challenge_on_a_proposal_that_is_a_fifo_fails_at_once_and_writes_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    mkfifo(&tmp.path().join("proposal.md"));
    let dir = tmp.path().to_owned();
    let err = within_a_minute(move || {
        server(&dir).write_challenge(&Challenge {
            verdict: ChallengeVerdict::Approved,
            findings: vec![],
        })
    })
    .expect_err("a FIFO");
    assert!(
        matches!(err, McpError::NotAFile { kind: "FIFO", .. }),
        "{err:?}"
    );
    assert!(!tmp.path().join("challenge.json").exists());
}

/// The process's umask, read without changing it (`/proc/self/status`).
fn umask() -> u32 {
    let status = fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix("Umask:"))
        .expect("a Umask line");
    u32::from_str_radix(line.trim(), 8).expect("octal")
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(path).expect("metadata").permissions().mode() & 0o7777
}

#[test]
fn regression_a_rewritten_file_keeps_its_mode_and_a_new_one_is_0666_less_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().expect("tempdir");
    let proposal = tmp.path().join("proposal.md");
    // A proposal committed as 0644 (once turned into 0600 by the rewrite), and a group-only
    // one: each keeps what it had.
    for kept in [0o644, 0o640] {
        fs::write(&proposal, "# Proposal\n").expect("proposal");
        fs::set_permissions(&proposal, fs::Permissions::from_mode(kept)).expect("chmod");
        let _ = fs::remove_file(tmp.path().join("challenge.json"));
        server(tmp.path())
            .write_challenge(&Challenge {
                verdict: ChallengeVerdict::Approved,
                findings: vec![],
            })
            .expect("written");
        assert_eq!(mode(&proposal), kept, "proposal.md keeps {kept:o}");
        // challenge.json is new: created as git creates a file.
        assert_eq!(
            mode(&tmp.path().join("challenge.json")),
            0o666 & !umask(),
            "a new file is 0666 less the umask {:o}",
            umask()
        );
    }
}
