//! Tests of the path, name, size, budget and output rules (secret content: `tests_secrets.rs`).

use std::fs;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

use super::rules::{BROAD_SECRET_NAMES, SECRET_NAMES};
use super::*;

/// A repository in a temp dir (`<tmp>/repo`, with `.git`), next to files outside it.
pub(super) struct Repo {
    tmp: TempDir,
    pub root: PathBuf,
}

impl Repo {
    pub fn new() -> Self {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = tmp.path().join("repo");
        fs::create_dir_all(root.join(".git")).expect("mkdir");
        fs::write(root.join(".git/config"), "[core]\n").expect("write");
        Self { tmp, root }
    }

    /// Writes `rel` (relative to the repository) with `bytes`, creating folders.
    pub fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.root.join(rel);
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        fs::write(&path, bytes).expect("write");
        path
    }

    /// Writes a file next to the repository (outside it).
    pub fn write_outside(&self, name: &str, bytes: &str) -> PathBuf {
        let path = self.tmp.path().join(name);
        fs::write(&path, bytes).expect("write");
        path
    }

    pub fn validate(&self, paths: &[&str]) -> Result<Context, ContextError> {
        self.validate_with(paths, &ContextSettings::default())
    }

    pub fn validate_with(
        &self,
        paths: &[&str],
        settings: &ContextSettings,
    ) -> Result<Context, ContextError> {
        let paths: Vec<PathBuf> = paths.iter().map(PathBuf::from).collect();
        validate(&self.root, &self.root, &paths, settings)
    }
}

/// The error of a validation that must fail.
pub(super) fn refused(result: Result<Context, ContextError>) -> ContextError {
    match result {
        Ok(context) => panic!(
            "expected a refusal, got {:?}",
            context.files.iter().map(|f| &f.path).collect::<Vec<_>>()
        ),
        Err(e) => e,
    }
}

/// The rules of a refusal, in order.
pub(super) fn rules_of(error: &ContextError) -> Vec<&str> {
    error.refusals.iter().map(|r| r.rule.as_str()).collect()
}

fn paths_of(context: &Context) -> Vec<&str> {
    context.files.iter().map(|f| f.path.as_str()).collect()
}

fn listing(dir: &Path) -> Vec<PathBuf> {
    let mut all: Vec<PathBuf> = ignore::WalkBuilder::new(dir)
        .standard_filters(false)
        .build()
        .map(|e| e.expect("walk").into_path())
        .collect();
    all.sort();
    all
}

#[test]
fn ts03_env_file_is_refused_before_anything_is_written() {
    let repo = Repo::new();
    repo.write(
        ".env",
        format!("DATABASE_URL=postgres://app:{}@db/app\n", "hunter2"),
    );
    let before = listing(&repo.root);
    let error = refused(repo.validate(&[".env"]));
    assert_eq!(rules_of(&error), ["secret-name"]);
    let message = &error.refusals[0].message;
    assert!(
        message.contains("`.env`") && message.contains("[secret-name]"),
        "{message}"
    );
    assert!(!message.contains("hunter2"));
    assert_eq!(listing(&repo.root), before, "validate wrote something");
}

#[test]
fn ts05_traversal_is_refused_whether_or_not_the_target_exists() {
    let repo = Repo::new();
    repo.write_outside("pass", "outside\n");
    let error = refused(repo.validate(&["../pass", "../missing", "docs/../../pass"]));
    assert_eq!(
        rules_of(&error),
        [
            "outside-repository",
            "outside-repository",
            "outside-repository"
        ]
    );
    assert_eq!(error.refusals[0].path, "../pass");
    assert!(error.refusals[0].message.contains("`../pass`"));
}

#[test]
fn absolute_path_outside_the_repository_is_refused() {
    let repo = Repo::new();
    let outside = repo.write_outside("notes.md", "notes\n");
    let error = refused(repo.validate(&[outside.to_str().expect("utf-8")]));
    assert_eq!(rules_of(&error), ["outside-repository"]);
}

#[test]
fn absolute_path_inside_the_repository_is_accepted() {
    let repo = Repo::new();
    let inside = repo.write("docs/a.md", "a\n");
    let context = repo
        .validate(&[inside.to_str().expect("utf-8")])
        .expect("accepted");
    assert_eq!(paths_of(&context), ["docs/a.md"]);
}

#[cfg(unix)]
#[test]
fn symlink_pointing_outside_is_refused_given_or_found_in_a_folder() {
    let repo = Repo::new();
    let outside = repo.write_outside("secret-notes.txt", "outside\n");
    fs::create_dir_all(repo.root.join("docs")).expect("mkdir");
    std::os::unix::fs::symlink(&outside, repo.root.join("docs/notes.txt")).expect("symlink");
    repo.write("docs/readme.md", "fine\n");
    let error = refused(repo.validate(&["docs/notes.txt"]));
    assert_eq!(rules_of(&error), ["outside-repository"]);
    let error = refused(repo.validate(&["docs"]));
    assert_eq!(rules_of(&error), ["outside-repository"]);
    assert_eq!(error.refusals[0].path, "docs/notes.txt");
}

#[cfg(unix)]
#[test]
fn symlink_with_an_innocent_name_to_a_secret_file_is_refused_by_the_target_name() {
    let repo = Repo::new();
    let env = repo.write(".env", "A=1\n");
    std::os::unix::fs::symlink(env, repo.root.join("notes.txt")).expect("symlink");
    let error = refused(repo.validate(&["notes.txt"]));
    assert_eq!(rules_of(&error), ["secret-name"]);
}

#[test]
fn files_in_the_git_folder_are_refused() {
    let repo = Repo::new();
    let error = refused(repo.validate(&[".git/config", ".git", "./.git/../.git/config"]));
    assert_eq!(rules_of(&error), ["git-folder", "git-folder", "git-folder"]);
}

#[test]
fn a_missing_path_is_refused() {
    let repo = Repo::new();
    let error = refused(repo.validate(&["docs/nope.md"]));
    assert_eq!(rules_of(&error), ["not-found"]);
    assert!(error.refusals[0].message.contains("`docs/nope.md`"));
}

/// One file name per built-in pattern; `every_secret_name_pattern_has_a_case` keeps it complete.
const NAME_CASES: &[(&str, &str)] = &[
    (".env", ".env"),
    (".env.production", ".env.*"),
    ("server.pem", "*.pem"),
    ("tls.key", "*.key"),
    ("client.p12", "*.p12"),
    ("client.pfx", "*.pfx"),
    ("id_rsa", "id_rsa*"),
    ("id_dsa", "id_dsa*"),
    ("id_ecdsa", "id_ecdsa*"),
    ("id_ed25519.pub", "id_ed25519*"),
    (".npmrc", ".npmrc"),
    (".pypirc", ".pypirc"),
    (".netrc", ".netrc"),
    (".pgpass", ".pgpass"),
    (".git-credentials", ".git-credentials"),
    (".htpasswd", ".htpasswd"),
    ("release.jks", "*.jks"),
    ("debug.keystore", "*.keystore"),
    ("passwords.kdbx", "*.kdbx"),
    ("credentials.json", "credentials*"),
    ("k8s-secrets.yaml", "*secret*"),
];

#[test]
fn every_secret_name_pattern_is_refused() {
    for (name, pattern) in NAME_CASES {
        let repo = Repo::new();
        let rel = format!("config/{name}");
        repo.write(&rel, "harmless\n");
        let error = refused(repo.validate(&[&rel]));
        assert_eq!(rules_of(&error), ["secret-name"], "{name}");
        let message = &error.refusals[0].message;
        assert!(
            message.contains(&format!("`{pattern}`")),
            "{name}: {message}"
        );
        assert!(message.contains(&format!("`{rel}`")), "{name}: {message}");
    }
}

#[test]
fn every_secret_name_pattern_has_a_case() {
    for pattern in SECRET_NAMES.iter().chain(BROAD_SECRET_NAMES) {
        assert!(
            NAME_CASES.iter().any(|(_, p)| p == pattern),
            "no test case for {pattern}"
        );
    }
}

#[test]
fn secret_names_are_matched_case_insensitively_and_only_on_the_file_name() {
    let repo = Repo::new();
    repo.write("SERVER.PEM", "x\n");
    repo.write("My.Env", "x\n");
    assert_eq!(
        rules_of(&refused(repo.validate(&["SERVER.PEM"]))),
        ["secret-name"]
    );
    // Only the name counts: a folder called `secrets` does not taint `readme.md` inside,
    // and `My.Env` is not `.env`.
    repo.write("secrets/readme.md", "how we store secrets\n");
    let context = repo
        .validate(&["secrets/readme.md", "My.Env"])
        .expect("accepted");
    assert_eq!(paths_of(&context), ["My.Env", "secrets/readme.md"]);
}

#[test]
fn hidden_env_file_inside_a_given_folder_is_refused() {
    let repo = Repo::new();
    repo.write("app/main.rs", "fn main() {}\n");
    repo.write("app/.env.local", "A=1\n");
    let error = refused(repo.validate(&["app"]));
    assert_eq!(rules_of(&error), ["secret-name"]);
    assert_eq!(error.refusals[0].path, "app/.env.local");
}

#[test]
fn gitignored_folders_inside_a_given_folder_are_not_sent() {
    let repo = Repo::new();
    repo.write(".gitignore", "node_modules/\n");
    repo.write("proj/.gitignore", "target/\n");
    repo.write("proj/src/lib.rs", "pub fn f() {}\n");
    repo.write("proj/target/debug/out.txt", "build output\n");
    repo.write(
        "proj/web/node_modules/left-pad/index.js",
        "module.exports = 1;\n",
    );
    let context = repo.validate(&["proj/"]).expect("accepted");
    assert_eq!(paths_of(&context), ["proj/.gitignore", "proj/src/lib.rs"]);
}

#[test]
fn deny_patterns_refuse_matching_files() {
    let repo = Repo::new();
    repo.write("docs/private/plan.md", "plan\n");
    repo.write("db/dump.sql", "select 1;\n");
    repo.write("docs/public.md", "public\n");
    let settings = ContextSettings {
        deny: vec!["docs/private/".into(), "*.sql".into()],
        ..ContextSettings::default()
    };
    let error = refused(repo.validate_with(&["docs", "db"], &settings));
    assert_eq!(rules_of(&error), ["denied", "denied"]);
    assert!(error.refusals[0].message.contains("`*.sql`"));
    assert!(error.refusals[1].message.contains("`docs/private/`"));
    let context = repo
        .validate_with(&["docs/public.md"], &settings)
        .expect("accepted");
    assert_eq!(paths_of(&context), ["docs/public.md"]);
}

#[test]
fn an_invalid_deny_pattern_is_reported() {
    let repo = Repo::new();
    repo.write("a.md", "a\n");
    let settings = ContextSettings {
        deny: vec!["docs/{a,b".into()],
        ..ContextSettings::default()
    };
    let error = refused(repo.validate_with(&["a.md"], &settings));
    assert_eq!(rules_of(&error), ["invalid-deny-pattern"]);
}

#[test]
fn files_over_the_size_limit_are_refused_and_at_the_limit_accepted() {
    let repo = Repo::new();
    repo.write("big.txt", "x".repeat(11));
    repo.write("ok.txt", "x".repeat(10));
    let settings = ContextSettings {
        max_file_bytes: 10,
        ..ContextSettings::default()
    };
    let error = refused(repo.validate_with(&["big.txt", "ok.txt"], &settings));
    assert_eq!(rules_of(&error), ["too-large"]);
    assert!(error.refusals[0].message.contains("11 bytes"));
    assert!(repo.validate_with(&["ok.txt"], &settings).is_ok());
}

#[test]
fn binary_files_are_refused() {
    let repo = Repo::new();
    repo.write("logo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    let error = refused(repo.validate(&["logo.png"]));
    assert_eq!(rules_of(&error), ["binary"]);
}

#[test]
fn non_utf8_files_are_refused_with_the_line() {
    let repo = Repo::new();
    repo.write("latin1.txt", b"caf\xc3\xa9 ok\nna\xefve\n");
    let error = refused(repo.validate(&["latin1.txt"]));
    assert_eq!(rules_of(&error), ["not-utf8"]);
    assert!(error.refusals[0].message.contains("line 2"));
}

#[test]
fn context_over_the_token_budget_is_refused_naming_the_biggest_files() {
    let repo = Repo::new();
    repo.write("a.md", "alpha beta gamma delta epsilon zeta eta theta\n");
    repo.write("b.md", "one two three four five six\n");
    repo.write("c.md", "red green blue\n");
    repo.write("d.md", "x\n");
    let settings = ContextSettings {
        max_tokens: 10,
        ..ContextSettings::default()
    };
    let error = refused(repo.validate_with(&["."], &settings));
    assert_eq!(rules_of(&error), ["over-token-budget"]);
    let total: u64 = ["a.md", "b.md", "c.md", "d.md"]
        .iter()
        .map(|f| gavel_llm::tokens::count(&fs::read_to_string(repo.root.join(f)).expect("read")))
        .sum();
    let message = &error.refusals[0].message;
    assert!(message.contains(&format!("{total} tokens")), "{message}");
    assert!(message.contains("budget of 10"), "{message}");
    assert!(message.contains("`a.md`") && message.contains("`b.md`") && message.contains("`c.md`"));
    assert!(!message.contains("`d.md`"), "{message}");
}

#[test]
fn every_problem_is_reported_at_once() {
    let repo = Repo::new();
    repo.write(".env", "A=1\n");
    repo.write("bin.dat", b"\0\0");
    repo.write("ok.md", "fine\n");
    repo.write_outside("pass", "p\n");
    let error = refused(repo.validate(&[".env", "../pass", "missing.md", "bin.dat", "ok.md"]));
    let mut rules = rules_of(&error);
    rules.sort_unstable();
    assert_eq!(
        rules,
        ["binary", "not-found", "outside-repository", "secret-name"]
    );
    let shown = error.to_string();
    assert!(shown.starts_with("context refused:\n  - "), "{shown}");
    assert_eq!(shown.lines().count(), 5, "{shown}");
}

#[test]
fn files_are_sorted_deduplicated_and_resolved_against_cwd() {
    let repo = Repo::new();
    repo.write("sub/b.md", "b\n");
    repo.write("sub/a.md", "a\n");
    let cwd = repo.root.join("sub");
    let paths: Vec<PathBuf> = ["b.md", "a.md", ".", "./b.md", "../sub/a.md"]
        .iter()
        .map(PathBuf::from)
        .collect();
    let context = validate(&repo.root, &cwd, &paths, &ContextSettings::default()).expect("ok");
    assert_eq!(paths_of(&context), ["sub/a.md", "sub/b.md"]);
}

#[test]
fn a_clean_context_is_accepted_with_its_manifest() {
    let repo = Repo::new();
    repo.write("docs/hello.txt", "hello world");
    repo.write("src/main.rs", "fn main() {}\n");
    let context = repo.validate(&["src", "docs/hello.txt"]).expect("accepted");
    assert_eq!(paths_of(&context), ["docs/hello.txt", "src/main.rs"]);
    let hello = &context.files[0];
    assert_eq!(hello.bytes, 11);
    assert_eq!(hello.text, "hello world");
    assert_eq!(
        hello.sha256,
        "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9"
    );
    assert_eq!(hello.tokens, gavel_llm::tokens::count("hello world"));
    assert_eq!(
        context.total_tokens,
        context.files.iter().map(|f| f.tokens).sum::<u64>()
    );

    let manifest = context.manifest();
    assert_eq!(manifest.last(), Some(&b'\n'));
    let text = String::from_utf8(manifest.clone()).expect("utf-8");
    assert!(
        !text.contains("hello world") && !text.contains("fn main"),
        "{text}"
    );
    let json: serde_json::Value = serde_json::from_slice(&manifest).expect("json");
    assert_eq!(json["files"][0]["path"], "docs/hello.txt");
    assert_eq!(json["files"][0]["bytes"], 11);
    assert_eq!(json["files"][0]["tokens"], hello.tokens);
    assert_eq!(json["files"][0]["sha256"], hello.sha256.as_str());
    assert_eq!(json["files"][1]["path"], "src/main.rs");
    assert_eq!(json["total_tokens"], context.total_tokens);
    assert_eq!(json["total_bytes"], 11 + 13);
    let keys: Vec<&String> = json["files"][0]
        .as_object()
        .expect("object")
        .keys()
        .collect();
    assert_eq!(keys.len(), 4, "{keys:?}");
}

#[test]
fn prompt_section_fences_each_file_longer_than_its_backticks() {
    let repo = Repo::new();
    repo.write("a.md", "Use:\n\n```rust\nfn f() {}\n```\n");
    repo.write("b.txt", "no newline");
    let context = repo.validate(&["a.md", "b.txt"]).expect("accepted");
    assert_eq!(
        context.prompt_section(),
        "### a.md\n\n````\nUse:\n\n```rust\nfn f() {}\n```\n````\n\n\
         ### b.txt\n\n```\nno newline\n```\n"
    );
}

#[test]
fn broad_secret_names_do_not_apply_to_source_code_and_docs() {
    let repo = Repo::new();
    repo.write("src/credentials.rs", "pub fn load() {}\n");
    repo.write("docs/secret_handling.md", "# How gavel handles secrets\n");
    repo.write("deploy/credentials.json", "{}\n");
    repo.write("deploy/db-secret.yaml", "kind: Secret\n");
    let context = repo.validate(&["src", "docs"]).expect("accepted");
    assert_eq!(
        paths_of(&context),
        ["docs/secret_handling.md", "src/credentials.rs"]
    );
    let error = refused(repo.validate(&["deploy"]));
    assert_eq!(rules_of(&error), ["secret-name", "secret-name"]);
}

#[test]
fn this_repositorys_own_sources_are_accepted() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    // gavel-core: ordinary Rust. gavel-llm: `credentials.rs`, API keys handled by name.
    // This module: the rule table and the tests with their fake secrets built from pieces.
    let paths = [
        PathBuf::from("crates/gavel-core/src"),
        PathBuf::from("crates/gavel-llm/src"),
        PathBuf::from("crates/gavel-context/src"),
    ];
    let settings = ContextSettings {
        max_file_bytes: 1024 * 1024,
        max_tokens: 10_000_000,
        ..ContextSettings::default()
    };
    let context = validate(&workspace, &workspace, &paths, &settings).expect("no false positive");
    let paths = paths_of(&context);
    assert!(
        paths
            .iter()
            .any(|p| p.starts_with("crates/gavel-core/src/"))
    );
    assert!(paths.contains(&"crates/gavel-llm/src/credentials.rs"));
    assert!(paths.contains(&"crates/gavel-context/src/rules.rs"));
    assert!(paths.contains(&"crates/gavel-context/src/tests_secrets.rs"));
}
