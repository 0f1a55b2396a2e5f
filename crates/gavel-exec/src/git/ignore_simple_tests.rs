//! Plain gitignore patterns against git itself (`git check-ignore`), and what is left to the
//! `ignore` crate.

use std::fs;
use std::path::Path;
use std::process::Command;

use super::*;
use crate::git::ignore_rules::Rules;

#[test]
fn globs_match_as_gits_wildmatch_with_pathname() {
    assert!(glob_match(b"*.log", b"run.log"));
    assert!(glob_match(b"*", b"anything"));
    assert!(glob_match(b"a*b*c", b"axxbyyc"));
    assert!(glob_match(b"a*b*c", b"abc"));
    assert!(!glob_match(b"a*b*c", b"axxbyy"));
    assert!(glob_match(b"?.md", b"a.md"));
    assert!(!glob_match(b"?.md", b"ab.md"));
    assert!(
        !glob_match(b"doc/*.md", b"doc/sub/a.md"),
        "* never crosses a /"
    );
    assert!(!glob_match(b"doc?a", b"doc/a"), "? never matches a /");
    assert!(glob_match(b"doc/*/a", b"doc/x/a"));
    assert!(!glob_match(b"script.yaml", b"script.yaml.calls"));
    assert!(glob_match(b"script.yaml*", b"script.yaml.calls.jsonl"));
}

#[test]
fn only_plain_files_are_parsed() {
    let parsed = parse(b"# gavel's state\n.gavel/\n\n/dist \n!keep.log\ndocs/*.tmp\n")
        .expect("plain patterns");
    let globs: Vec<(&[u8], bool, bool, bool)> = parsed
        .patterns
        .iter()
        .map(|p| (p.glob.as_slice(), p.negated, p.dir_only, p.anchored))
        .collect();
    assert_eq!(
        globs,
        [
            (&b".gavel"[..], false, true, false),
            (&b"dist"[..], false, false, true),
            (&b"keep.log"[..], true, false, false),
            (&b"docs/*.tmp"[..], false, false, true),
        ]
    );
    for complex in [
        &b"*.[oa]\n"[..],
        b"**/build\n",
        b"logs/**\n",
        b"\\#not-a-comment\n",
        b"trailing\\ \n",
        b"crlf\r\n",
        b"/\n",
        b"!\n",
        b"a//\n",
        b"\xef\xbb\xbfbom.txt\n",
    ] {
        assert_eq!(
            parse(complex),
            None,
            "{:?} is left to the ignore crate",
            String::from_utf8_lossy(complex)
        );
    }
}

/// git with no user or system config.
fn git(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("git")
}

#[test]
fn plain_patterns_ignore_what_git_ignores() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    assert!(git(root, &["init", "-q", "-b", "main"]).status.success());
    let files = [
        (
            ".gitignore",
            "# comment\n.gavel/\nscript.yaml*\n*.log\n!keep.log\n/dist\nbuild/\n\
             docs/*.tmp\nnotes?.md\n/top.txt\nsub/deep/x.md\nmid*/out\n",
        ),
        ("docs/.gitignore", "!also.log\n*.md\n!readme.md\nlocal/\n"),
        (".git/info/exclude", "excluded.txt\n"),
    ];
    for (path, text) in files {
        let path = root.join(path);
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        fs::write(&path, text).expect("write");
        assert!(
            parse(text.as_bytes()).is_some(),
            "{text:?} is plain: this test is about the plain matcher"
        );
    }
    let paths = [
        ".gavel/state.db",
        "a/.gavel",
        "script.yaml",
        "script.yaml.calls.jsonl",
        "sub/script.yaml",
        "run.log",
        "keep.log",
        "sub/keep.log",
        "dist/app.js",
        "sub/dist/app.js",
        "build/x",
        "sub/build/x",
        "build.txt",
        "docs/a.tmp",
        "docs/sub/a.tmp",
        "notes1.md",
        "notes12.md",
        "top.txt",
        "sub/top.txt",
        "sub/deep/x.md",
        "other/sub/deep/x.md",
        "middle/out",
        "mid/out/y",
        "docs/also.log",
        "docs/other.log",
        "docs/guide.md",
        "docs/readme.md",
        "docs/issues/0001-dark-mode.md",
        "docs/local/a.txt",
        "docs/lineage/done/1-x/001-brief.md",
        "excluded.txt",
        "ideas/done/1-x.md",
        "plain.txt",
    ];
    for path in paths {
        let full = root.join(path);
        fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        fs::write(&full, "x\n").expect("write");
    }
    let mut rules = Rules::new(root, None).expect("readable rules");
    for path in paths {
        let by_git = git(root, &["check-ignore", "-q", "--no-index", path]);
        let git_says = match by_git.status.code() {
            Some(0) => true,
            Some(1) => false,
            other => panic!("git check-ignore {path}: {other:?} {by_git:?}"),
        };
        let ours = rules.ignored(&root.join(path), false);
        assert_eq!(ours, Some(git_says), "{path}");
    }
}
