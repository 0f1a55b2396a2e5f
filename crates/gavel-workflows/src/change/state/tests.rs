//! STATE.yaml: round trips, errors naming file and line, and the atomic write.

use super::*;

const GOOD: &str = "format: 1
change_id: add-login
phase: implementing
updated_at: 2026-03-07T10:00:00Z
planning_iterations: 2
implementation_iterations: 1
last_verdict: NEEDS_FIX
";

fn err_of(text: &str) -> StateError {
    parse_state(Path::new("ch/STATE.yaml"), text).expect_err("must be rejected")
}

fn line_of(err: &StateError) -> Option<u64> {
    match err {
        StateError::Invalid { line, .. } => *line,
        StateError::Io { .. } | StateError::Read(_) => None,
    }
}

#[test]
fn parses_every_field() {
    let state = parse_state(Path::new("STATE.yaml"), GOOD).expect("valid");
    assert_eq!(state.change_id, "add-login");
    assert_eq!(state.phase, Phase::Implementing);
    assert_eq!(state.planning_iterations, 2);
    assert_eq!(state.implementation_iterations, 1);
    assert_eq!(state.last_verdict, Some(Verdict::NeedsFix));
}

#[test]
fn render_then_parse_round_trips() {
    let now: jiff::Timestamp = "2026-03-07T10:00:00Z".parse().expect("ts");
    let mut state = ChangeState::new("x", now);
    assert_eq!(
        parse_state(Path::new("S"), &render_state(&state)).expect("fresh"),
        state
    );
    state.phase = Phase::Complete;
    state.last_verdict = Some(Verdict::Approved);
    state.implementation_iterations = 3;
    let text = render_state(&state);
    assert!(text.contains("phase: complete"), "{text}");
    assert_eq!(
        parse_state(Path::new("S"), &text).expect("round trip"),
        state
    );
}

#[test]
fn unknown_phase_names_file_and_line() {
    let err = err_of(&GOOD.replace("phase: implementing", "phase: coding"));
    assert_eq!(line_of(&err), Some(3), "{err}");
    let msg = err.to_string();
    assert!(msg.starts_with("ch/STATE.yaml:3:"), "{msg}");
    assert!(msg.contains("coding"), "{msg}");
}

#[test]
fn unknown_key_names_file_and_line() {
    let err = err_of(&format!("{GOOD}owner: bob\n"));
    assert_eq!(line_of(&err), Some(8), "{err}");
    assert!(err.to_string().contains("owner"), "{err}");
}

#[test]
fn malformed_yaml_names_file_and_line() {
    let err = err_of("format: 1\nchange_id: x\nphase: [proposed\n");
    assert!(err.to_string().starts_with("ch/STATE.yaml:"), "{err}");
    assert!(line_of(&err).is_some_and(|l| l >= 3), "{err}");
}

#[test]
fn bad_values_name_their_line() {
    let err = err_of(&GOOD.replace("change_id: add-login", "change_id: Add_Login"));
    assert_eq!(line_of(&err), Some(2), "{err}");
    let err = err_of(&GOOD.replace("2026-03-07T10:00:00Z", "yesterday"));
    assert_eq!(line_of(&err), Some(4), "{err}");
    let err = err_of(&GOOD.replace("format: 1", "format: 9"));
    assert_eq!(line_of(&err), Some(1), "{err}");
    let err = err_of(&GOOD.replace("NEEDS_FIX", "MAYBE"));
    assert_eq!(line_of(&err), Some(7), "{err}");
}

#[test]
fn missing_file_names_it() {
    let dir = ChangeDir::new("/nonexistent", "x").expect("id");
    let err = load_state(&dir).expect_err("missing");
    assert!(
        err.to_string()
            .contains("/nonexistent/changes/x/STATE.yaml"),
        "{err}"
    );
}

/// The change `add-login` in a temporary tree, its folder made.
fn change_in(tmp: &tempfile::TempDir) -> ChangeDir {
    let dir = ChangeDir::new(tmp.path(), "add-login").expect("id");
    fs::create_dir_all(dir.dir()).expect("mkdir");
    dir
}

#[test]
fn regression_a_state_file_of_another_change_is_refused_naming_its_line() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = change_in(&tmp);
    fs::write(
        dir.state(),
        GOOD.replace("change_id: add-login", "change_id: other"),
    )
    .expect("w");
    let err = load_state(&dir).expect_err("another change's id");
    assert_eq!(line_of(&err), Some(2), "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("`other`") && msg.contains("`add-login`") && msg.contains("STATE.yaml:2:"),
        "{msg}"
    );
    fs::write(dir.state(), GOOD).expect("w");
    assert_eq!(load_state(&dir).expect("its own").change_id, "add-login");
}

#[test]
fn regression_a_fifo_or_a_link_to_dev_zero_as_state_file_is_refused_at_once() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = change_in(&tmp);
    nix::unistd::mkfifo(&dir.state(), nix::sys::stat::Mode::S_IRWXU).expect("mkfifo");
    // On a thread with a deadline: the old reader blocked in open() forever.
    let (tx, rx) = std::sync::mpsc::channel();
    let d = dir.clone();
    std::thread::spawn(move || {
        let _ = tx.send(load_state(&d).map(|_| ()).map_err(|e| e.to_string()));
    });
    let err = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("a FIFO STATE.yaml blocked the read")
        .expect_err("a FIFO is no state file");
    assert!(err.contains("STATE.yaml") && err.contains("FIFO"), "{err}");
    fs::remove_file(dir.state()).expect("rm");
    std::os::unix::fs::symlink("/dev/zero", dir.state()).expect("symlink");
    let err = load_state(&dir).expect_err("a link is no state file");
    assert!(err.to_string().contains("symbolic link"), "{err}");
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<_> = fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn save_is_atomic_and_leaves_no_temp_file() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = ChangeDir::new(tmp.path(), "x").expect("id");
    fs::create_dir_all(dir.dir()).expect("mkdir");
    let path = dir.state();
    let now = jiff::Timestamp::UNIX_EPOCH;
    let mut state = ChangeState::new("x", now);
    save_state(&path, &state).expect("first save");
    state.phase = Phase::Challenged;
    save_state(&path, &state).expect("second save");
    assert_eq!(load_state(&dir).expect("load").phase, Phase::Challenged);
    assert_eq!(names_in(&dir.dir()), ["STATE.yaml"]);
}

#[test]
fn failed_save_removes_its_temp_file_and_keeps_the_old_target() {
    let dir = tempfile::tempdir().expect("tempdir");
    // A non-empty folder where the file should go: the rename fails after the temp file
    // was written.
    let path = dir.path().join("STATE.yaml");
    fs::create_dir_all(path.join("occupied")).expect("mkdir");
    let state = ChangeState::new("x", jiff::Timestamp::UNIX_EPOCH);
    let err = save_state(&path, &state).expect_err("rename over a folder fails");
    assert!(err.to_string().contains("STATE.yaml"), "{err}");
    assert_eq!(names_in(dir.path()), ["STATE.yaml"]);
    assert!(path.is_dir());
}

#[test]
fn phases_point_at_the_command_that_moves_them_on() {
    use NextCommand::*;
    let cases = [
        (Phase::Proposed, Some(Plan)),
        (Phase::Challenged, Some(Impl)),
        (Phase::Rejected, None),
        (Phase::Implementing, Some(Impl)),
        (Phase::Complete, Some(Archive)),
        (Phase::Archived, None),
    ];
    for (phase, want) in cases {
        assert_eq!(phase.next_command(), want, "{}", phase.as_str());
    }
    assert_eq!(Archive.as_str(), "archive");
}
