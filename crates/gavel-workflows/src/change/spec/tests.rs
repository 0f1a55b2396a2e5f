//! Delta and living spec parsing, and the writer round trip.

use super::*;

const DELTA: &str = "# Delta for auth

## ADDED Requirements

### Requirement: Two-Factor Login
The system SHALL ask for a second factor.

#### Scenario: Code sent
- **WHEN** a user logs in
- **THEN** a code is sent

```markdown
### Requirement: Not a heading inside a fence
```

## MODIFIED Requirements

### Requirement: Session Timeout
The system SHALL expire sessions after 30 minutes.

#### Scenario: Idle
- **WHEN** idle for 30 minutes
- **THEN** the session ends

#### Scenario: Active
- **WHEN** active
- **THEN** it stays

## REMOVED Requirements

### Requirement: Remember Me
**Reason**: unsafe

## RENAMED Requirements

- FROM: `### Requirement: Login`
- TO: `### Requirement: Password Login`
* FROM: ### Requirement: Logout
* TO: ### Requirement: Sign Out
";

#[test]
fn parses_every_section() {
    let delta = parse_delta_spec(DELTA).expect("valid delta");
    assert_eq!(delta.added.len(), 1);
    let added = &delta.added[0];
    assert_eq!(added.name, "Two-Factor Login");
    assert_eq!(added.scenarios, ["Code sent"]);
    assert!(
        added
            .text
            .starts_with("### Requirement: Two-Factor Login\n")
    );
    assert!(
        added.text.ends_with("```"),
        "fenced text stays: {}",
        added.text
    );
    assert_eq!(delta.modified[0].name, "Session Timeout");
    assert_eq!(delta.modified[0].scenarios, ["Idle", "Active"]);
    assert_eq!(delta.removed[0].name, "Remember Me");
    assert_eq!(
        delta.renamed,
        [
            Rename {
                from: "Login".into(),
                to: "Password Login".into()
            },
            Rename {
                from: "Logout".into(),
                to: "Sign Out".into()
            }
        ]
    );
}

#[test]
fn errors_name_the_requirement() {
    let no_scenario = "## ADDED Requirements\n\n### Requirement: Bare\nThe system SHALL x.\n";
    assert_eq!(
        parse_delta_spec(no_scenario),
        Err(SpecError::MissingScenario {
            name: "Bare".into()
        })
    );
    let twice = "## MODIFIED Requirements\n\n### Requirement: A\nx\n\n#### Scenario: s\n- y\n\n\
                 ### Requirement: A\nx\n\n#### Scenario: s\n- y\n";
    let err = parse_delta_spec(twice).expect_err("duplicate");
    assert!(err.to_string().contains("`A`") && err.to_string().contains("MODIFIED"));
    assert_eq!(
        parse_delta_spec("# Title\n\n## Purpose\nnothing\n"),
        Err(SpecError::NoDeltas)
    );
}

#[test]
fn renames_must_pair_up() {
    let cases = [
        ("- FROM: `### Requirement: A`\n", "FROM", "A"),
        ("- TO: `### Requirement: B`\n", "TO", "B"),
        (
            "- FROM: `### Requirement: A`\n- FROM: `### Requirement: C`\n- TO: `### Requirement: B`\n",
            "FROM",
            "A",
        ),
    ];
    for (body, side, name) in cases {
        let text = format!("## RENAMED Requirements\n\n{body}");
        assert_eq!(
            parse_delta_spec(&text),
            Err(SpecError::UnpairedRename {
                side,
                name: name.into()
            }),
            "{body}"
        );
    }
}

#[test]
fn living_spec_requirements_stop_at_the_next_section() {
    let living = "# auth Specification\n\n## Purpose\nLogins.\n\n## Requirements\n\n\
                  ### Requirement: Login\nThe system SHALL log in.\n\n#### Scenario: ok\n- ok\n\n\
                  ### Requirement: Logout\nThe system SHALL log out.\n\n## Notes\nfree text\n";
    let reqs = parse_living_spec(living);
    let names: Vec<_> = reqs.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["Login", "Logout"]);
    assert_eq!(reqs[0].scenarios, ["ok"]);
    assert_eq!(
        reqs[1].text,
        "### Requirement: Logout\nThe system SHALL log out."
    );
}

#[test]
fn render_then_parse_round_trips() {
    let delta = DeltaSpec {
        added: vec![Requirement::compose(
            "New",
            "The system SHALL do it.",
            &[("Works", "- **WHEN** x\n- **THEN** y")],
        )],
        modified: vec![],
        removed: vec![Requirement {
            name: "Old".into(),
            text: "### Requirement: Old\n**Reason**: gone".into(),
            scenarios: vec![],
        }],
        renamed: vec![Rename {
            from: "A".into(),
            to: "B".into(),
        }],
    };
    let text = render_delta_spec(&delta);
    assert!(text.contains("- FROM: `### Requirement: A`\n- TO: `### Requirement: B`"));
    assert_eq!(parse_delta_spec(&text).expect("parses"), delta);
}
