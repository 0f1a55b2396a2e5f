//! The words of the issue → LLD kind that `gavel init` writes: the low-level design template
//! (the sections a design needs before anyone writes a test or a line of code, as in the seed's
//! own LLD) and the review rubric that checks each of them.

/// The template written to `docs/templates/0102-feature-lld-template.md` by `gavel init`.
pub const DEFAULT_TEMPLATE: &str = r#"# {Issue number} - Feature: {Short title}

## 1. Context & Goal
* **Issue:** #{number} ({link})
* **Objective:** {What this change achieves, in one or two sentences.}
* **Status:** Draft

### Open Questions (optional)
- [ ] {A question the design cannot answer alone; remove the section when there is none.}

## 2. Proposed Changes

### 2.1 Files Changed
| File | Change | Description |
|------|--------|-------------|
| `{path}` | Add / Modify / Delete | {What changes in this file and why} |

### 2.2 Dependencies
{New crates, packages or services, with versions and why each is needed; "None" if none.}

### 2.3 Data Structures
```
{Types, records, schemas or configuration keys added or changed, with their fields.}
```

### 2.4 Function Signatures
```
{Each public function, method or command added or changed: its signature and one line on what it does.}
```

### 2.5 Logic Flow
```
{Pseudocode of the main path and of each failure path.}
```

### 2.6 Technical Approach
{How the pieces fit, and the decisions that matter (with the reason for each).}

## 3. Requirements
1. {A numbered, testable requirement.}
2. {Another.}

## 4. Alternatives Considered
| Option | Pros | Cons | Decision |
|--------|------|------|----------|
| {Option} | {Pros} | {Cons} | **{Chosen / Rejected}**: {why} |

## 5. Data & Fixtures
{Where the data comes from, how it flows, and the fixtures the tests need.}

## 6. Diagram
```mermaid
flowchart LR
    A[Input] --> B[Step] --> C[Output]
```

## 7. Security Considerations
{Inputs that are not trusted, secrets, permissions, what could be abused and how it is prevented.}

## 8. Performance Considerations
{Expected sizes and rates, the budgets (time, memory, calls), and how they are measured.}

## 9. Risks & Mitigations
| Risk | Impact | Likelihood | Mitigation |
|------|--------|------------|------------|
| {Risk} | {High/Med/Low} | {High/Med/Low} | {Mitigation} |

## 10. Verification & Testing

### 10.1 Test Scenarios
| ID | Scenario | Type | Input | Expected Output | Pass Criteria |
|----|----------|------|-------|-----------------|---------------|
| TS-01 | {Scenario} | {Unit/Integration/E2E} | {Input} | {Output} | {Criterion} |

### 10.2 Test Commands
```sh
{The exact commands that run the tests above.}
```

## 11. Definition of Done
- [ ] Code: {what is implemented}
- [ ] Tests: every scenario of 10.1 passes
- [ ] Documentation: {what is documented where}
- [ ] Review: the design and the code were reviewed
"#;

/// The review rubric written to `docs/skills/0702c-lld-review-prompt.md` by `gavel init`.
pub const DEFAULT_RUBRIC: &str = r#"# LLD review rubric (0702c)

You are an independent senior reviewer. Judge the low-level design below against the issue it
answers; do not rewrite it. A design is approved only if an engineer could implement and test it
without guessing.

Check each point:
1. **Traceability**: section 1 names the issue, and every requirement of the issue is covered by
   a requirement in section 3; nothing in section 3 goes beyond the issue without saying why.
2. **Files**: section 2.1 lists every file added, changed or deleted, each with a reason; no
   "etc." or "and so on".
3. **Interfaces**: data structures (2.3) and signatures (2.4) are concrete enough to compile
   against; names are consistent across sections.
4. **Logic**: the flow (2.5) covers the main path and every failure path the requirements imply
   (bad input, missing files, timeouts, crashes), and each failure has a defined outcome.
5. **Requirements**: each requirement in section 3 is numbered and testable, and has at least one
   test scenario in 10.1 with a concrete input and pass criterion.
6. **Alternatives**: section 4 shows at least one real alternative and why it was rejected.
7. **Security**: section 7 names the untrusted inputs and secrets involved and how each is
   handled; "N/A" needs a reason.
8. **Performance**: section 8 states expected sizes and budgets, and how they are measured.
9. **Risks**: section 9 lists the risks an implementer would hit, each with a mitigation.
10. **Done**: section 11 is checkable; open questions in 1 are either answered or blocking.

Verdicts:
- APPROVED: every point holds; findings must be empty.
- REVISE: fixable gaps; list each as a finding naming the section.
- BLOCK: the design should not be implemented in this form (wrong problem, unsafe, contradicts
  the issue).
"#;
