//! The box's namespaces, attacked as a test a model wrote would attack them: a daemon that
//! leaves the process group to outlive the step, a write to the worktree's `.git` pointer,
//! the network, shared memory, and reading gavel's own environment through `/proc`. Each runs
//! through `gavel-confine` as gavel runs a test command: a [`ProcessSpec`] wrapped by
//! [`Confinement::wrap`] and started by [`process::run`].

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gavel_exec::confine::{Confinement, Launcher};
use gavel_exec::process::{self, ProcessOutput, ProcessSpec};
use tempfile::TempDir;

const LAUNCHER: &str = env!("CARGO_BIN_EXE_gavel-confine");

/// A worktree with a `.git` pointer file, and an outside folder.
struct Boxed {
    dir: TempDir,
    network: bool,
}

impl Boxed {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir(dir.path().join("wt")).expect("worktree");
        std::fs::create_dir(dir.path().join("outside")).expect("outside");
        std::fs::write(dir.path().join("wt/.git"), "gitdir: /the/real/one\n").expect("pointer");
        Self {
            dir,
            network: false,
        }
    }

    fn worktree(&self) -> PathBuf {
        self.dir.path().join("wt")
    }

    fn outside(&self) -> PathBuf {
        self.dir.path().join("outside")
    }

    fn sh(&self, script: &str, env: &[(&str, String)]) -> ProcessOutput {
        let spec = ProcessSpec {
            program: PathBuf::from("sh"),
            args: vec!["-c".into(), script.into()],
            env: env
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect(),
            env_remove: Vec::new(),
            cwd: Some(self.worktree()),
            stdin: String::new(),
            idle_timeout: Duration::from_secs(60),
            total_timeout: Duration::from_secs(120),
        };
        let confinement = Confinement {
            launcher: Launcher {
                program: PathBuf::from(LAUNCHER),
                args: Vec::new(),
            },
            writable: vec![self.worktree()],
            read_only: vec![self.worktree().join(".git")],
            network: self.network,
        };
        process::run(&confinement.wrap(&spec), &|| false, &mut |_| {}).expect("the launcher runs")
    }
}

fn path_str(path: &Path) -> String {
    path.to_str().expect("UTF-8 temp path").to_owned()
}

#[test]
fn a_daemon_that_left_the_process_group_is_gone_when_the_step_returns() {
    let scene = Boxed::new();
    // The daemon keeps stdout open (the runner's pipe) and writes into the worktree a second
    // later: after the step, while a person reads the report.
    let started = Instant::now();
    let out = scene.sh(
        "setsid sh -c 'sleep 2; echo late > edited-after.txt; sleep 600' &
         echo started",
        &[],
    );
    assert!(out.status.success(), "stderr: {}", out.stderr);
    assert_eq!(out.stdout, "started\n");
    // Reading ended with the step, not when the daemon would have closed the pipe.
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "the runner waited for the daemon"
    );
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        !scene.worktree().join("edited-after.txt").exists(),
        "a process the step started wrote after the step ended"
    );
}

#[test]
fn the_worktrees_git_pointer_cannot_be_written_replaced_or_removed() {
    let scene = Boxed::new();
    let other = path_str(&scene.outside());
    for (what, script) in [
        ("overwrite", format!("echo 'gitdir: {other}' > .git")),
        ("truncate", ": > .git".to_owned()),
        ("append", "echo x >> .git".to_owned()),
        (
            "replace by rename",
            "echo 'gitdir: /x' > p && mv -f p .git".to_owned(),
        ),
        ("remove", "rm -f .git".to_owned()),
    ] {
        let out = scene.sh(&script, &[]);
        assert!(!out.status.success(), "{what}: succeeded");
        assert_eq!(
            std::fs::read_to_string(scene.worktree().join(".git"))
                .ok()
                .as_deref(),
            Some("gitdir: /the/real/one\n"),
            "{what}: the pointer changed"
        );
    }
    // The rest of the worktree stays writable.
    let out = scene.sh("echo ok > code.py", &[]);
    assert!(out.status.success(), "stderr: {}", out.stderr);
}

#[test]
fn without_network_only_the_boxes_own_loopback_answers() {
    // A server of the person's, on the host's loopback.
    let listener = TcpListener::bind("127.0.0.1:0").expect("listen");
    let port = listener.local_addr().expect("addr").port();
    listener.set_nonblocking(true).expect("nonblocking");
    let scene = Boxed::new();
    let script = format!(
        "python3 - <<'EOF'
import socket
try:
    socket.create_connection(('127.0.0.1', {port}), timeout=5)
    print('host: reached')
except OSError as e:
    print('host: refused')
s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()
c = socket.create_connection(s.getsockname(), timeout=5)
a, _ = s.accept(); c.sendall(b'ping'); print('own loopback:', a.recv(4).decode())
EOF"
    );
    let out = scene.sh(&script, &[]);
    assert!(out.status.success(), "stderr: {}", out.stderr);
    assert!(out.stdout.contains("host: refused"), "{}", out.stdout);
    assert!(out.stdout.contains("own loopback: ping"), "{}", out.stdout);
    assert!(listener.accept().is_err(), "the host's server was reached");

    // With the network allowed, the host's server answers.
    let scene = Boxed {
        network: true,
        ..Boxed::new()
    };
    let out = scene.sh(&script, &[]);
    assert!(out.stdout.contains("host: reached"), "{}", out.stdout);
    let mut accepted = None;
    for _ in 0..50 {
        if let Ok((mut stream, _)) = listener.accept() {
            let _ = stream.write_all(b"");
            let mut nothing = Vec::new();
            let _ = stream.set_read_timeout(Some(Duration::from_millis(10)));
            let _ = stream.read_to_end(&mut nothing);
            accepted = Some(());
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(accepted.is_some(), "the allowed connection never arrived");
}

#[test]
fn shared_memory_is_the_steps_own() {
    let scene = Boxed::new();
    let name = format!("gavel-box-test-{}", std::process::id());
    let out = scene.sh(&format!("echo poison > /dev/shm/{name} && echo wrote"), &[]);
    assert!(out.status.success(), "stderr: {}", out.stderr);
    assert_eq!(out.stdout, "wrote\n");
    assert!(
        !Path::new("/dev/shm").join(&name).exists(),
        "a write to /dev/shm reached the system's"
    );
}

#[test]
fn gavels_own_environment_cannot_be_read_through_proc() {
    let scene = Boxed::new();
    // The test process stands for gavel: a boxed process may not read its environment.
    let me = std::process::id();
    let out = scene.sh(
        &format!("cat /proc/{me}/environ > stolen 2>/dev/null; echo rc=$?; wc -c < stolen"),
        &[],
    );
    assert!(out.stdout.contains("rc=1"), "{}", out.stdout);
    assert!(out.stdout.ends_with("0\n"), "{}", out.stdout);
}

/// The box as a person who is not root builds it: through a user namespace. (CI runs as root,
/// so the launcher is started as `nobody` with util-linux's `setpriv`.)
#[test]
fn the_box_works_for_a_person_who_is_not_root() {
    let dir = tempfile::tempdir().expect("temp dir");
    let open = |p: &Path| {
        std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(0o777))
            .expect("chmod");
    };
    open(dir.path());
    let wt = dir.path().join("wt");
    std::fs::create_dir(&wt).expect("worktree");
    open(&wt);
    std::fs::write(wt.join(".git"), "gitdir: /the/real/one\n").expect("pointer");
    let launcher = dir.path().join("gavel-confine");
    std::fs::copy(LAUNCHER, &launcher).expect("a launcher nobody may run");
    let script = "id -u; echo in > inside.txt && echo wrote; echo out > ../outside.txt; \
                  echo x > .git; grep CapEff /proc/self/status; (setsid sleep 60 &); echo done";
    let mut cmd = if nix::unistd::geteuid().is_root() {
        let mut c = std::process::Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&launcher);
        c
    } else {
        std::process::Command::new(&launcher)
    };
    let wt_str = path_str(&wt);
    let out = cmd
        .args([
            "--no-network",
            "--ro",
            &format!("{wt_str}/.git"),
            "--write",
            &wt_str,
        ])
        .args(["--", "sh", "-c", script])
        .current_dir(&wt)
        .output()
        .expect("run the launcher");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("wrote") && stdout.contains("done"),
        "{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("CapEff:\t0000000000000000"),
        "no capability left: {stdout}"
    );
    if nix::unistd::geteuid().is_root() {
        assert!(
            stdout.starts_with("65534\n"),
            "the person's own user: {stdout}"
        );
    }
    assert!(!dir.path().join("outside.txt").exists(), "wrote outside");
    assert_eq!(
        std::fs::read_to_string(wt.join(".git")).expect("pointer"),
        "gitdir: /the/real/one\n"
    );
}

#[test]
fn tmp_and_run_are_the_boxes_own_and_their_sockets_out_of_reach() {
    // A socket of the person's in /tmp (an ssh agent, an X server, tmux) and a file in /run.
    let dir = tempfile::tempdir().expect("a folder in /tmp");
    let socket = dir.path().join("agent.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).expect("listen");
    let scene = Boxed::new();
    let name = format!("gavel-box-tmp-{}", std::process::id());
    let out = scene.sh(
        &format!(
            "echo mine > /tmp/{name} && echo wrote; \
             python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('{}')\" \
             2>/dev/null && echo reached || echo unreachable; \
             ls /run | wc -l; touch /etc/gavel-box-probe 2>/dev/null || echo read-only",
            socket.display()
        ),
        &[],
    );
    assert!(
        out.stdout.contains("wrote"),
        "{}\n{}",
        out.stdout,
        out.stderr
    );
    assert!(out.stdout.contains("unreachable"), "{}", out.stdout);
    assert!(
        out.stdout.contains("\n0\n"),
        "an empty /run: {}",
        out.stdout
    );
    assert!(out.stdout.contains("read-only"), "{}", out.stdout);
    assert!(
        !Path::new("/tmp").join(&name).exists(),
        "a write to /tmp reached the system's"
    );
}

#[test]
fn regression_a_box_that_cannot_be_built_is_an_error_not_a_failing_test() {
    use gavel_exec::runners::{RunnerKind, TestCommand, run_tests_confined};
    let scene = Boxed::new();
    let cmd = TestCommand {
        kind: RunnerKind::Generic,
        command: "true".into(),
        cwd: scene.worktree(),
        timeout: Duration::from_secs(60),
        env: Vec::new(),
        env_remove: Vec::new(),
    };
    let confinement = Confinement {
        launcher: Launcher {
            program: PathBuf::from(LAUNCHER),
            args: Vec::new(),
        },
        writable: vec![scene.worktree().join("missing")],
        read_only: Vec::new(),
        network: false,
    };
    let err = run_tests_confined(&cmd, Some(&confinement), 1 << 20, &|| false, &mut |_| {})
        .expect_err("a red gate must not read the refusal as failing tests");
    assert!(
        err.to_string().contains("the box refused to run it"),
        "{err}"
    );
}

#[test]
fn regression_a_box_dies_with_the_process_that_started_it() {
    let scene = Boxed::new();
    // gavel stands here as a shell that starts the launcher and is then killed with -9.
    let marker = format!("sleep 87.{}", std::process::id() % 1000);
    let mut gavel = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "'{LAUNCHER}' --no-network --write '{}' -- sh -c '{marker}'; true",
            path_str(&scene.worktree())
        ))
        .spawn()
        .expect("start");
    // The boxed program itself (its command line starts with the marker; the shells' and the
    // launcher's only contain it), so the kill comes once the box is built.
    let program = format!("^{marker}");
    let running = || {
        std::process::Command::new("pgrep")
            .args(["-f", &program])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while !running() {
        assert!(Instant::now() < deadline, "the boxed program never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    gavel.kill().expect("kill -9");
    let _ = gavel.wait();
    let deadline = Instant::now() + Duration::from_secs(30);
    while running() {
        assert!(
            Instant::now() < deadline,
            "the box outlived the process that started it: {}",
            String::from_utf8_lossy(
                &std::process::Command::new("pgrep")
                    .args(["-af", &marker])
                    .output()
                    .map(|o| o.stdout)
                    .unwrap_or_default()
            )
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
