//! Confined processes, run the way gavel runs an agent: a [`ProcessSpec`] wrapped by
//! [`Confinement::wrap`] and started by [`process::run`], with `gavel-confine` as the launcher.
//! Each escape an agent could try (a sibling folder, another checkout, `$HOME`, directories,
//! removals, renames, truncation, hard and symbolic links, grandchildren) must be denied by the
//! kernel, leave nothing behind, and say so on the child's stderr: "Permission denied" from
//! Landlock, or "Read-only file system" from the box's read-only mounts, which stop it first
//! wherever both apply.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use gavel_exec::confine::{Confinement, Launcher, support};
use gavel_exec::process::{self, ProcessOutput, ProcessSpec};
use tempfile::TempDir;

const LAUNCHER: &str = env!("CARGO_BIN_EXE_gavel-confine");

/// A worktree and a private temp folder (both writable) side by side in one folder (not
/// writable), another checkout and a home folder elsewhere (not writable either).
struct Scene {
    base: TempDir,
    checkout: TempDir,
    home: TempDir,
}

impl Scene {
    fn new() -> Self {
        let scene = Self {
            base: outside_tmp(),
            checkout: outside_tmp(),
            home: outside_tmp(),
        };
        std::fs::create_dir(scene.worktree()).expect("worktree");
        std::fs::create_dir(scene.tmp()).expect("tmp");
        std::fs::write(scene.worktree().join("inside.txt"), "inside\n").expect("write");
        std::fs::write(scene.keep(), "the person's file\n").expect("write");
        scene
    }

    fn worktree(&self) -> PathBuf {
        self.base.path().join("wt")
    }

    fn tmp(&self) -> PathBuf {
        self.base.path().join("tmp")
    }

    fn checkout(&self) -> &Path {
        self.checkout.path()
    }

    /// A file in the other checkout that no confined process may change.
    fn keep(&self) -> PathBuf {
        self.checkout().join("keep.txt")
    }

    fn confinement(&self) -> Confinement {
        Confinement {
            launcher: Launcher {
                program: PathBuf::from(LAUNCHER),
                args: Vec::new(),
            },
            writable: vec![self.worktree(), self.tmp()],
            read_only: Vec::new(),
            network: true,
        }
    }

    /// Runs `sh -c script` confined, in the worktree, with `$HOME`, `$TMPDIR`, `$OUT` (the
    /// other checkout) and `$KEEP` set.
    fn sh(&self, script: &str) -> ProcessOutput {
        self.run(Path::new("sh"), &["-c", script])
    }

    fn run(&self, program: &Path, args: &[&str]) -> ProcessOutput {
        let spec = ProcessSpec {
            program: program.to_path_buf(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            env: vec![
                ("HOME".into(), path_str(self.home.path())),
                ("TMPDIR".into(), path_str(&self.tmp())),
                ("OUT".into(), path_str(self.checkout())),
                ("KEEP".into(), path_str(&self.keep())),
                ("LC_ALL".into(), "C".into()),
            ],
            env_remove: Vec::new(),
            cwd: Some(self.worktree()),
            stdin: String::new(),
            idle_timeout: Duration::from_secs(30),
            total_timeout: Duration::from_secs(60),
        };
        let wrapped = self.confinement().wrap(&spec);
        process::run(&wrapped, &|| false, &mut |_| {}).expect("the launcher runs")
    }

    /// Every file and folder beneath `dir`, relative to it.
    fn listing(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .expect("read dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// Asserts that nothing outside the two writable folders changed.
    fn assert_untouched(&self, what: &str) {
        assert_eq!(
            Self::listing(self.base.path()),
            ["tmp", "wt"],
            "{what}: the worktree's parent changed"
        );
        assert_eq!(
            Self::listing(self.checkout()),
            ["keep.txt"],
            "{what}: the other checkout changed"
        );
        assert_eq!(
            std::fs::read_to_string(self.keep()).expect("keep.txt"),
            "the person's file\n",
            "{what}: keep.txt changed"
        );
        assert!(
            Self::listing(self.home.path()).is_empty(),
            "{what}: $HOME changed"
        );
    }
}

/// A temporary folder outside `/tmp`, which the box replaces by a private one: these tests
/// check what the box may do to folders it can see.
fn outside_tmp() -> TempDir {
    tempfile::Builder::new()
        .prefix("confine-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("temp dir")
}

fn path_str(path: &Path) -> String {
    path.to_str().expect("temp paths are UTF-8").to_owned()
}

fn assert_denied(out: &ProcessOutput, what: &str, message: &str) {
    assert!(
        !out.status.success(),
        "{what}: succeeded\nstdout: {}\nstderr: {}",
        out.stdout,
        out.stderr
    );
    assert!(
        out.stderr.contains(message) || out.stderr.contains("Read-only file system"),
        "{what}: stderr does not say {message:?} (or that the file system is read-only): {}",
        out.stderr
    );
    assert!(
        !out.stderr.contains("gavel confine:"),
        "{what}: the launcher refused instead: {}",
        out.stderr
    );
}

#[test]
fn support_reports_a_usable_landlock_abi() {
    let abi = support().expect("this kernel has Landlock");
    assert!(abi >= 3, "ABI {abi}");
}

#[test]
fn writes_inside_the_writable_folders_succeed() {
    let scene = Scene::new();
    let out = scene.sh("set -e
         echo new > new.txt
         : > inside.txt
         mkdir -p sub/deeper && echo x > sub/deeper/f
         mv sub/deeper/f moved.txt && ln moved.txt hard && ln -s moved.txt soft && rm hard
         rmdir sub/deeper
         t=$(mktemp) && echo temp > \"$t\" && mv \"$t\" from-tmp.txt
         echo out > /dev/stdout && echo err > /dev/stderr && echo gone > /dev/null
         echo done");
    assert!(out.status.success(), "stderr: {}", out.stderr);
    assert!(out.stdout.contains("out\n") && out.stdout.contains("done\n"));
    let wt = scene.worktree();
    assert_eq!(
        Scene::listing(&wt),
        [
            "from-tmp.txt",
            "inside.txt",
            "moved.txt",
            "new.txt",
            "soft",
            "sub"
        ]
    );
    assert_eq!(
        std::fs::read_to_string(wt.join("inside.txt")).ok(),
        Some(String::new())
    );
    scene.assert_untouched("writes inside");
}

#[test]
fn every_write_outside_is_denied_and_nothing_lands() {
    let scene = Scene::new();
    let permission = "Permission denied";
    let cases = [
        ("a sibling of the worktree", "echo x > ../escape.txt"),
        ("an absolute path elsewhere", "echo x > \"$OUT/new.txt\""),
        ("appending to a file elsewhere", "echo x >> \"$KEEP\""),
        ("$HOME", "echo x > \"$HOME/x\""),
        ("a folder elsewhere", "mkdir \"$OUT/newdir\""),
        ("a folder beside the worktree", "mkdir ../newdir"),
        ("removing a file elsewhere", "rm -f \"$KEEP\""),
        (
            "renaming a file elsewhere",
            "mv \"$KEEP\" \"$OUT/moved.txt\"",
        ),
        (
            "moving a file elsewhere into the worktree",
            "mv \"$KEEP\" stolen.txt",
        ),
        (
            "moving a worktree file out",
            "mv inside.txt \"$OUT/inside.txt\"",
        ),
        ("truncate(2) of a file elsewhere", "truncate -s 0 \"$KEEP\""),
        ("O_TRUNC of a file elsewhere", ": > \"$KEEP\""),
        ("a hard link out", "ln inside.txt \"$OUT/link\""),
        ("a symbolic link out", "ln -s /etc/passwd \"$OUT/link\""),
        (
            "a worktree symlink pointing out",
            "ln -s \"$KEEP\" sym && echo pwn > sym",
        ),
        (
            "a grandchild shell",
            "sh -c 'sh -c \"echo x > \\\"$OUT/gc.txt\\\"\"'",
        ),
        (
            "a python3 grandchild",
            "python3 -c 'import os; open(os.environ[\"OUT\"] + \"/py.txt\", \"w\")'",
        ),
    ];
    for (what, script) in cases {
        let out = scene.sh(script);
        assert_denied(&out, what, permission);
        scene.assert_untouched(what);
    }
    // Landlock refuses a hard link that would make an outside file writable with EXDEV.
    let out = scene.sh("ln \"$KEEP\" link && echo pwn >> link");
    assert_denied(&out, "a hard link in", "cross-device link");
    scene.assert_untouched("a hard link in");
    // `mv` of the person's file into the worktree fails to rename across the box's mounts
    // and falls back to a copy (a read, which the box allows) whose removal of the original
    // is refused: the original stays, and the copy is the worktree's own file.
    assert_eq!(
        Scene::listing(&scene.worktree()),
        ["inside.txt", "stolen.txt", "sym"]
    );
}

#[test]
fn reads_outside_still_work() {
    let scene = Scene::new();
    let out = scene.sh("cat \"$KEEP\" && ls \"$OUT\" && head -c 4 /dev/urandom | wc -c");
    assert!(out.status.success(), "stderr: {}", out.stderr);
    assert_eq!(out.stdout, "the person's file\nkeep.txt\n4\n");
}

#[test]
fn a_writable_file_allows_that_file_only() {
    let scene = Scene::new();
    let mut confinement = scene.confinement();
    confinement.writable.push(scene.keep());
    let spec = ProcessSpec {
        program: PathBuf::from("sh"),
        args: vec![
            "-c".into(),
            format!(
                "echo state >> '{}' && echo x > '{}/other'",
                scene.keep().display(),
                scene.checkout().display()
            ),
        ],
        env: Vec::new(),
        env_remove: Vec::new(),
        cwd: Some(scene.worktree()),
        stdin: String::new(),
        idle_timeout: Duration::from_secs(30),
        total_timeout: Duration::from_secs(60),
    };
    let out = process::run(&confinement.wrap(&spec), &|| false, &mut |_| {}).expect("runs");
    assert_denied(&out, "a sibling of a writable file", "Permission denied");
    assert_eq!(
        std::fs::read_to_string(scene.keep()).ok().as_deref(),
        Some("the person's file\nstate\n")
    );
    assert_eq!(Scene::listing(scene.checkout()), ["keep.txt"]);
}

#[test]
fn a_missing_program_exits_127_with_a_clear_message() {
    let scene = Scene::new();
    let out = scene.run(Path::new("gavel-no-such-program"), &[]);
    assert_eq!(out.status.code(), Some(127), "stderr: {}", out.stderr);
    assert!(
        out.stderr
            .contains("gavel confine: `gavel-no-such-program` not found"),
        "{}",
        out.stderr
    );
}

/// Runs the launcher directly with `args`.
fn launcher(args: &[&str]) -> std::process::Output {
    Command::new(LAUNCHER)
        .args(args)
        .output()
        .expect("run gavel-confine")
}

#[test]
fn bad_usage_is_refused_with_exit_126_and_the_usage() {
    for (args, says) in [
        (&["sh", "-c", "true"][..], "unexpected argument `sh`"),
        (&["--write", "relative", "--", "true"][..], "absolute path"),
        (&["--write", "/tmp"][..], "missing `--`"),
        (&["--write", "/tmp", "--"][..], "no program"),
    ] {
        let out = launcher(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(126), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(
            stderr.contains("expected [--no-network] [--ro PATH]... [--write DIR]... -- PROGRAM"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn a_missing_writable_folder_is_refused_and_nothing_runs() {
    let scene = Scene::new();
    let missing = scene.base.path().join("not-there");
    let marker = scene.worktree().join("ran");
    let out = launcher(&[
        "--write",
        &path_str(&scene.worktree()),
        "--write",
        &path_str(&missing),
        "--",
        "touch",
        &path_str(&marker),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(126), "{stderr}");
    assert!(
        stderr.contains("gavel confine: cannot set up the confinement")
            && stderr.contains("not-there"),
        "{stderr}"
    );
    assert!(!marker.exists(), "the program ran without its confinement");
}

#[test]
fn the_program_keeps_its_exit_code_and_arguments() {
    let scene = Scene::new();
    let out = scene.run(
        Path::new("sh"),
        &[
            "-c",
            "printf '%s|' \"$@\"; exit 3",
            "sh",
            "--",
            "--write",
            "a b",
        ],
    );
    assert_eq!(out.status.code(), Some(3), "stderr: {}", out.stderr);
    assert_eq!(out.stdout, "--|--write|a b|\n");
}
