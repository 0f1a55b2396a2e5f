//! Deferred subcommand arguments ([`super::Lazy`]) change nothing a person sees: every help
//! text, at every depth, is what the fully defined command tree prints.

use clap::CommandFactory;

use super::{Cli, define_all_now};

/// Every subcommand path of `cmd` (`["change", "plan"]`, ...), `help` excepted.
fn paths(cmd: &clap::Command, prefix: &[String], out: &mut Vec<Vec<String>>) {
    for sub in cmd.get_subcommands() {
        if sub.get_name() == "help" {
            continue;
        }
        let mut path = prefix.to_vec();
        path.push(sub.get_name().to_owned());
        paths(sub, &path, out);
        out.push(path);
    }
}

/// What `gavel PATH... FLAG` prints (help, version or a usage error).
fn shown(mut cmd: clap::Command, path: &[String], flag: &str) -> String {
    let args = std::iter::once("gavel")
        .chain(path.iter().map(String::as_str))
        .chain(std::iter::once(flag));
    match cmd.try_get_matches_from_mut(args) {
        Ok(_) => panic!("{path:?} {flag} parsed"),
        Err(e) => e.render().to_string(),
    }
}

#[test]
fn help_at_every_depth_is_the_same_deferred_or_defined_up_front() {
    let deferred = std::thread::spawn(Cli::command).join().expect("thread");
    let eager = std::thread::spawn(|| {
        define_all_now();
        let mut cmd = Cli::command();
        cmd.build();
        cmd
    })
    .join()
    .expect("thread");
    let mut all = Vec::new();
    paths(&eager, &[], &mut all);
    assert!(all.iter().any(|p| p == &["change", "plan"]), "{all:?}");
    all.push(Vec::new());
    for path in &all {
        for flag in ["--help", "-h", "--no-such-flag"] {
            assert_eq!(
                shown(deferred.clone(), path, flag),
                shown(eager.clone(), path, flag),
                "gavel {} {flag}",
                path.join(" ")
            );
        }
    }
}

#[test]
fn the_command_tree_passes_clap_s_own_checks_both_ways() {
    std::thread::spawn(|| Cli::command().debug_assert())
        .join()
        .expect("deferred");
    std::thread::spawn(|| {
        define_all_now();
        Cli::command().debug_assert();
    })
    .join()
    .expect("up front");
}
