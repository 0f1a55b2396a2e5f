//! Unit tests of the confinement's pure parts: argument parsing, wrapping a spec, and the
//! accept-or-refuse decision on what the kernel enforced (a kernel without Landlock cannot be
//! simulated, so the decision is tested on its own). The confined processes themselves are
//! tested in `tests/integration/confine.rs`, through the `gavel-confine` binary.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use landlock::{ABI, LandlockStatus, RulesetStatus};

use super::launcher::{Invocation, parse};
use super::{ConfineError, Confinement, EXIT_NOT_FOUND, EXIT_REFUSED, Launcher, judge, support};
use crate::process::ProcessSpec;

fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

fn available(abi: i32) -> LandlockStatus {
    LandlockStatus::Available {
        effective_abi: ABI::from(abi),
        kernel_abi: None,
    }
}

#[test]
fn support_reports_this_kernels_landlock_abi() {
    let abi = support().expect("this kernel has Landlock");
    assert!(abi >= super::MIN_ABI, "ABI {abi}");
}

#[test]
fn parse_reads_write_folders_the_program_and_its_arguments() {
    let got = parse(os(&[
        "--no-network",
        "--write",
        "/w",
        "--ro",
        "/w/.git",
        "--write=/t",
        "--ro=/w/x",
        "--",
        "sh",
        "-c",
        "--write",
        "--",
    ]))
    .expect("valid");
    assert_eq!(
        got,
        Invocation {
            writable: vec![PathBuf::from("/w"), PathBuf::from("/t")],
            read_only: vec![PathBuf::from("/w/.git"), PathBuf::from("/w/x")],
            network: false,
            init: false,
            person: None,
            program: "sh".into(),
            args: os(&["-c", "--write", "--"]),
        }
    );
}

#[test]
fn parse_allows_no_writable_folder() {
    let got = parse(os(&["--", "true"])).expect("valid");
    assert!(got.writable.is_empty());
    assert!(got.network, "the network is allowed unless refused");
}

#[test]
fn parse_refuses_bad_usage_with_a_reason() {
    for (args, says) in [
        (&[][..], "missing `--`"),
        (&["--write", "/w"][..], "missing `--`"),
        (&["--write"][..], "needs a path"),
        (&["--ro"][..], "needs a path"),
        (
            &["--ro", "rel", "--", "sh"][..],
            "`--ro` needs an absolute path",
        ),
        (&["--write", "rel", "--", "sh"][..], "absolute path"),
        (
            &["--writ", "/w", "--", "sh"][..],
            "unexpected argument `--writ`",
        ),
        (&["sh", "-c", "x"][..], "unexpected argument `sh`"),
        (&["--write", "/w", "--"][..], "no program"),
        (&["--", ""][..], "no program"),
    ] {
        let err = parse(os(args)).expect_err("refused");
        assert!(matches!(err, ConfineError::Usage(_)), "{args:?}: {err:?}");
        assert!(err.to_string().contains(says), "{args:?}: {err}");
        assert_eq!(err.exit_code(), EXIT_REFUSED);
    }
}

#[test]
fn wrap_runs_the_same_spec_through_the_launcher() {
    let spec = ProcessSpec {
        program: PathBuf::from("claude"),
        args: vec!["-p".into(), "--".into()],
        env: vec![("HOME".into(), "/h".into())],
        env_remove: vec!["GIT_DIR".into()],
        cwd: Some(PathBuf::from("/wt")),
        stdin: "prompt".into(),
        idle_timeout: Duration::from_secs(7),
        total_timeout: Duration::from_secs(9),
    };
    let confinement = Confinement {
        launcher: Launcher {
            program: PathBuf::from("/bin/gavel"),
            args: vec!["__confine".into()],
        },
        writable: vec![PathBuf::from("/wt"), PathBuf::from("/tmp/agent")],
        read_only: Vec::new(),
        network: true,
    };
    let wrapped = confinement.wrap(&spec);
    assert_eq!(wrapped.program, PathBuf::from("/bin/gavel"));
    assert_eq!(
        wrapped.args,
        [
            "__confine",
            "--write",
            "/wt",
            "--write",
            "/tmp/agent",
            "--",
            "claude",
            "-p",
            "--"
        ]
    );
    assert_eq!(wrapped.env, spec.env);
    assert_eq!(wrapped.env_remove, spec.env_remove);
    assert_eq!(wrapped.cwd, spec.cwd);
    assert_eq!(wrapped.stdin, spec.stdin);
    assert_eq!(wrapped.idle_timeout, spec.idle_timeout);
    assert_eq!(wrapped.total_timeout, spec.total_timeout);
}

#[test]
fn judge_accepts_full_enforcement() {
    assert_eq!(
        judge(available(7), RulesetStatus::FullyEnforced).ok(),
        Some(7)
    );
    let newer = LandlockStatus::Available {
        effective_abi: ABI::from(10),
        kernel_abi: Some(12),
    };
    assert_eq!(judge(newer, RulesetStatus::FullyEnforced).ok(), Some(12));
}

#[test]
fn judge_accepts_partial_enforcement_only_when_the_kernel_lacks_the_newer_rights() {
    // ABI 3 and 4 kernels have every required right but not device ioctls (ABI 5).
    assert_eq!(
        judge(available(3), RulesetStatus::PartiallyEnforced).ok(),
        Some(3)
    );
    assert_eq!(
        judge(available(4), RulesetStatus::PartiallyEnforced).ok(),
        Some(4)
    );
    // A kernel with every right that still enforced only part is not trusted.
    let err = judge(available(7), RulesetStatus::PartiallyEnforced).expect_err("refused");
    assert!(err.to_string().contains("only part"), "{err}");
}

#[test]
fn judge_refuses_what_cannot_confine_writes() {
    let cases = [
        (
            LandlockStatus::NotImplemented,
            RulesetStatus::NotEnforced,
            "no Landlock",
        ),
        (
            LandlockStatus::NotEnabled,
            RulesetStatus::NotEnforced,
            "not enabled",
        ),
        (available(1), RulesetStatus::PartiallyEnforced, "too old"),
        (available(2), RulesetStatus::FullyEnforced, "too old"),
        (available(7), RulesetStatus::NotEnforced, "did not enforce"),
    ];
    for (landlock, ruleset, says) in cases {
        let case = format!("{landlock:?} {ruleset:?}");
        let err = judge(landlock, ruleset).expect_err("refused");
        assert!(matches!(err, ConfineError::Unsupported { .. }), "{err:?}");
        assert!(err.to_string().contains(says), "{case}: {err}");
        assert_eq!(err.exit_code(), EXIT_REFUSED);
    }
}

#[test]
fn a_missing_program_exits_127_anything_else_126() {
    let missing = ConfineError::Exec {
        program: "nope".into(),
        source: std::io::Error::from(std::io::ErrorKind::NotFound),
    };
    assert_eq!(missing.exit_code(), EXIT_NOT_FOUND);
    let denied = ConfineError::Exec {
        program: "x".into(),
        source: std::io::Error::from(std::io::ErrorKind::PermissionDenied),
    };
    assert_eq!(denied.exit_code(), EXIT_REFUSED);
}
