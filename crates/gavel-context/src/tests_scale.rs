//! Tests of validating whole folders: many files checked on several threads in batches, files
//! found by the walk taken without canonicalizing them again, and the token count that stops
//! past twice the budget.

use std::fs;
use std::path::PathBuf;

use super::tests::{Repo, refused, rules_of};
use super::tests_secrets::{ALNUM, fake};
use super::*;

/// More files than three batches of `check.rs`, so batches and threads both matter.
const MANY: usize = 1_300;

fn name(i: usize) -> String {
    format!("tree/d{:02}/f{i:04}.txt", i / 100)
}

#[test]
fn a_large_folder_gives_every_file_in_path_order_as_one_by_one_would() {
    let repo = Repo::new();
    for i in 0..MANY {
        repo.write(&name(i), format!("file {i}\n"));
    }
    let context = repo.validate(&["tree"]).expect("accepted");
    let paths: Vec<String> = context.files.iter().map(|f| f.path.clone()).collect();
    let mut expected: Vec<String> = (0..MANY).map(name).collect();
    expected.sort();
    assert_eq!(paths, expected);
    // Each file's record is its own, whichever thread checked it.
    for f in &context.files {
        let text = fs::read_to_string(repo.root.join(&f.path)).expect("read");
        assert_eq!(f.text, text, "{}", f.path);
        assert_eq!(f.tokens, gavel_llm::tokens::count(&text), "{}", f.path);
    }
    let one_by_one: Vec<PathBuf> = expected.iter().map(PathBuf::from).collect();
    let again = validate(
        &repo.root,
        &repo.root,
        &one_by_one,
        &ContextSettings::default(),
    )
    .expect("accepted");
    assert_eq!(again, context);
}

#[test]
fn every_problem_in_a_large_folder_is_reported_in_path_order_and_counted() {
    let repo = Repo::new();
    let secret_at = [3, 517, 1_024, 1_299];
    let binary_at = [0, 700];
    for i in 0..MANY {
        let body = if secret_at.contains(&i) {
            format!("line one\ntoken ghp_{}\n", fake(ALNUM, 36, i as u64))
        } else if binary_at.contains(&i) {
            "bin\0ary".to_owned()
        } else {
            format!("file {i}\n")
        };
        repo.write(&name(i), body);
    }
    let error = refused(repo.validate(&["tree"]));
    assert_eq!(error.files, MANY);
    let shown: Vec<(&str, &str)> = error
        .refusals
        .iter()
        .map(|r| (r.path.as_str(), r.rule.as_str()))
        .collect();
    let mut expected: Vec<(String, &str)> = secret_at
        .iter()
        .map(|&i| (name(i), "secret-content:github-pat"))
        .chain(binary_at.iter().map(|&i| (name(i), "binary")))
        .collect();
    expected.sort();
    let expected: Vec<(&str, &str)> = expected.iter().map(|(p, r)| (p.as_str(), *r)).collect();
    assert_eq!(shown, expected);
    assert!(
        error.refusals[1].message.contains("line 2"),
        "{}",
        error.refusals[1].message
    );
}

#[cfg(unix)]
#[test]
fn links_and_special_files_found_in_a_folder_are_still_resolved_and_checked() {
    let repo = Repo::new();
    repo.write("docs/real.md", "real\n");
    repo.write("notes/plain.md", "plain\n");
    // A link to a file inside the repository counts once, as its target.
    std::os::unix::fs::symlink("../notes/plain.md", repo.root.join("docs/alias.md"))
        .expect("symlink");
    let context = repo.validate(&["docs", "notes"]).expect("accepted");
    let paths: Vec<&str> = context.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["docs/real.md", "notes/plain.md"]);
    // A link to a secret file is refused by the target's name; a FIFO is not a file.
    repo.write("hidden/.env", "A=1\n");
    std::os::unix::fs::symlink("../hidden/.env", repo.root.join("docs/config.txt"))
        .expect("symlink");
    nix::unistd::mkfifo(
        &repo.root.join("docs/pipe"),
        nix::sys::stat::Mode::S_IRUSR | nix::sys::stat::Mode::S_IWUSR,
    )
    .expect("mkfifo");
    let error = refused(repo.validate(&["docs"]));
    // The walk's refusals come first, then the checks', each in path order.
    assert_eq!(rules_of(&error), ["not-a-file", "secret-name"]);
    assert_eq!(error.refusals[0].path, "docs/pipe");
    assert_eq!(error.refusals[1].path, "docs/config.txt");
}

#[test]
fn past_twice_the_budget_the_rest_is_not_counted_and_the_refusal_says_so() {
    let repo = Repo::new();
    // Two files of more than COUNTED_AT_LEAST bytes together, each far over the budget of 10:
    // the files after them are not counted.
    let words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu\n";
    let lines = COUNTED_AT_LEAST as usize / words.len() / 2 + 1;
    repo.write("a.md", words.repeat(lines));
    repo.write("b.md", words.repeat(lines));
    repo.write("c.md", words.repeat(lines + 2));
    repo.write("d.md", words.repeat(lines + 1));
    let settings = ContextSettings {
        max_tokens: 10,
        ..ContextSettings::default()
    };
    let error = refused(repo.validate_with(&["."], &settings));
    assert_eq!(rules_of(&error), ["over-token-budget"]);
    let counted = 2 * gavel_llm::tokens::count(&words.repeat(lines));
    let message = &error.refusals[0].message;
    let rest = words.len() * (2 * lines + 3);
    assert!(
        message.contains(&format!(
            "more than {counted} tokens (its first 2 files; the other 2, {rest} bytes, were not counted)"
        )),
        "{message}"
    );
    assert!(message.contains("budget of 10"), "{message}");
    // The biggest by size, counted or not.
    let size = |n: usize| words.len() * n;
    assert!(
        message.contains(&format!(
            "`c.md` ({} bytes), `d.md` ({} bytes), `a.md` ({} bytes)",
            size(lines + 2),
            size(lines + 1),
            size(lines)
        )),
        "{message}"
    );
}

#[test]
fn within_twice_the_budget_every_file_is_counted_exactly() {
    let repo = Repo::new();
    let words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu\n";
    repo.write("a.md", words);
    repo.write("b.md", words);
    let each = gavel_llm::tokens::count(words);
    let settings = ContextSettings {
        max_tokens: 2 * each - 1,
        ..ContextSettings::default()
    };
    let error = refused(repo.validate_with(&["."], &settings));
    let message = &error.refusals[0].message;
    assert!(
        message.contains(&format!("the context is {} tokens", 2 * each)),
        "{message}"
    );
}
