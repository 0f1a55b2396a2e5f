//! Every merge operation and every way a merge is refused.

use super::*;
use crate::change::spec::{Rename, Requirement};

const LIVING: &str = "# auth Specification

## Purpose
Who may log in.

## Requirements

### Requirement: Login
The system SHALL log users in.

#### Scenario: ok
- **WHEN** good password
- **THEN** logged in

### Requirement: Logout
The system SHALL log users out.

#### Scenario: bye
- **WHEN** logout
- **THEN** logged out

## Notes
Kept as is.
";

fn req(name: &str, statement: &str) -> Requirement {
    Requirement::compose(name, statement, &[("s", "- **WHEN** a\n- **THEN** b")])
}

fn names(text: &str) -> Vec<String> {
    crate::change::spec::parse_living_spec(text)
        .into_iter()
        .map(|r| r.name)
        .collect()
}

#[test]
fn added_goes_after_the_last_requirement() {
    let delta = DeltaSpec {
        added: vec![req("Reset", "The system SHALL reset passwords.")],
        ..DeltaSpec::default()
    };
    let out = merge(LIVING, &delta).expect("merge");
    assert_eq!(names(&out), ["Login", "Logout", "Reset"]);
    assert!(out.starts_with("# auth Specification\n\n## Purpose\nWho may log in.\n"));
    assert!(out.ends_with("## Notes\nKept as is.\n"), "{out}");
    let reset = out.find("Requirement: Reset").expect("added");
    assert!(reset < out.find("## Notes").expect("notes"));
}

#[test]
fn modified_replaces_the_block() {
    // The MODIFIED block keeps the living requirement's scenario `ok` (and adds one).
    let delta = DeltaSpec {
        modified: vec![Requirement::compose(
            "Login",
            "The system SHALL log users in with 2FA.",
            &[
                (
                    "ok",
                    "- **WHEN** good password and code
- **THEN** logged in",
                ),
                (
                    "s",
                    "- **WHEN** a
- **THEN** b",
                ),
            ],
        )],
        ..DeltaSpec::default()
    };
    let out = merge(LIVING, &delta).expect("merge");
    assert!(out.contains("with 2FA"));
    assert!(!out.contains("The system SHALL log users in.\n"));
    assert_eq!(names(&out), ["Login", "Logout"]);
}

#[test]
fn removed_deletes_the_block() {
    let delta = DeltaSpec {
        removed: vec![req("Login", "gone")],
        ..DeltaSpec::default()
    };
    let out = merge(LIVING, &delta).expect("merge");
    assert_eq!(names(&out), ["Logout"]);
    assert!(!out.contains("good password"));
    assert!(
        out.contains("## Requirements\n\n### Requirement: Logout"),
        "{out}"
    );
}

#[test]
fn renamed_renames_and_modified_uses_the_new_name() {
    let delta = DeltaSpec {
        renamed: vec![Rename {
            from: "Logout".into(),
            to: "Sign Out".into(),
        }],
        modified: vec![Requirement::compose(
            "Sign Out",
            "The system SHALL sign users out.",
            &[(
                "bye",
                "- **WHEN** sign out
- **THEN** signed out",
            )],
        )],
        ..DeltaSpec::default()
    };
    let out = merge(LIVING, &delta).expect("merge");
    assert_eq!(names(&out), ["Login", "Sign Out"]);
    assert!(out.contains("sign users out"));
    let only_rename = DeltaSpec {
        renamed: delta.renamed.clone(),
        ..DeltaSpec::default()
    };
    let out = merge(LIVING, &only_rename).expect("merge");
    assert!(out.contains("### Requirement: Sign Out\nThe system SHALL log users out."));
}

#[test]
fn a_new_capability_gets_its_requirements_section() {
    let delta = DeltaSpec {
        added: vec![req("A", "The system SHALL a.")],
        ..DeltaSpec::default()
    };
    let out = merge(&new_living_spec("pay", "Payments."), &delta).expect("merge");
    assert!(
        out.contains("## Requirements\n\n### Requirement: A\n"),
        "{out}"
    );
    let out = merge("# pay\n\nIntro.\n", &delta).expect("merge");
    assert_eq!(
        out,
        format!(
            "# pay\n\nIntro.\n\n## Requirements\n\n{}\n",
            delta.added[0].text
        )
    );
}

#[test]
fn every_refusal_names_the_requirement_and_returns_no_text() {
    let missing = |op| MergeError::Missing {
        op,
        name: "Nope".into(),
    };
    let cases = [
        (
            DeltaSpec {
                modified: vec![req("Nope", "x")],
                ..DeltaSpec::default()
            },
            missing("MODIFIED"),
        ),
        (
            DeltaSpec {
                removed: vec![req("Nope", "x")],
                ..DeltaSpec::default()
            },
            missing("REMOVED"),
        ),
        (
            DeltaSpec {
                renamed: vec![Rename {
                    from: "Nope".into(),
                    to: "New".into(),
                }],
                ..DeltaSpec::default()
            },
            missing("RENAMED"),
        ),
        (
            DeltaSpec {
                added: vec![req("Reset", "x"), req("Login", "x")],
                ..DeltaSpec::default()
            },
            MergeError::Exists {
                op: "ADDED",
                name: "Login".into(),
            },
        ),
        (
            DeltaSpec {
                renamed: vec![Rename {
                    from: "Login".into(),
                    to: "Logout".into(),
                }],
                ..DeltaSpec::default()
            },
            MergeError::Exists {
                op: "RENAMED",
                name: "Logout".into(),
            },
        ),
        (
            DeltaSpec {
                removed: vec![req("Login", "x")],
                modified: vec![req("Login", "y")],
                ..DeltaSpec::default()
            },
            MergeError::Conflict {
                name: "Login".into(),
                first: "REMOVED",
                second: "MODIFIED",
            },
        ),
    ];
    for (delta, want) in cases {
        let err = merge(LIVING, &delta).expect_err("refused");
        assert!(err.to_string().contains('`'), "{err}");
        assert_eq!(err, want);
    }
}

/// Issue 32: a MODIFIED requirement that omits a scenario the living spec still has would
/// drop it; the merge is refused naming every dropped scenario, counting duplicates and
/// comparing a renamed requirement with the block it renames, as OpenSpec does.
#[test]
fn a_modified_requirement_that_drops_a_living_scenario_is_refused_naming_it() {
    let living = LIVING.replace(
        "#### Scenario: bye\n",
        "#### Scenario: bye\n- **WHEN** logout\n- **THEN** logged out\n\n#### Scenario: twice\n- **WHEN** x\n- **THEN** y\n\n#### Scenario: twice\n",
    );
    let delta = DeltaSpec {
        renamed: vec![Rename {
            from: "Logout".into(),
            to: "Sign Out".into(),
        }],
        modified: vec![
            req("Login", "The system SHALL log users in with 2FA."),
            Requirement::compose(
                "Sign Out",
                "The system SHALL sign users out.",
                &[
                    ("bye", "- **WHEN** a\n- **THEN** b"),
                    ("twice", "- **WHEN** a\n- **THEN** b"),
                ],
            ),
        ],
        ..DeltaSpec::default()
    };
    let err = merge(&living, &delta).expect_err("refused");
    assert_eq!(
        err,
        MergeError::DropsScenarios {
            dropped: vec![
                Dropped {
                    requirement: "Login".into(),
                    scenarios: vec!["ok".into()],
                },
                Dropped {
                    requirement: "Sign Out".into(),
                    scenarios: vec!["twice".into()],
                },
            ]
        }
    );
    let text = err.to_string();
    assert!(
        text.contains(
            "MODIFIED requirement `Login` omits scenario(s) the living spec still has: `ok`"
        ),
        "{text}"
    );
    // Every scenario kept (and one added): the merge goes through.
    let kept = DeltaSpec {
        modified: vec![Requirement::compose(
            "Login",
            "The system SHALL log users in.",
            &[
                ("new", "- **WHEN** a\n- **THEN** b"),
                ("ok", "- **WHEN** a\n- **THEN** b"),
            ],
        )],
        ..DeltaSpec::default()
    };
    assert!(merge(&living, &kept).is_ok());
}
