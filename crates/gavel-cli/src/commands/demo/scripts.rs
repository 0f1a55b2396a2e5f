//! The demo's sample brief and the scripts of its offline "models", one per act: long text
//! kept apart from the command's code. Each draft is complete for its template, so gavel's own
//! checks pass it and the scripted reviewer judges it.

pub(super) const BRIEF: &str = "# Dark mode\n\nPeople using the dashboard at night find it too bright. Add a dark theme that follows the\nsystem setting, with a toggle in the header. Keep contrast accessible.\n";

pub(super) const SCRIPT: &str = r#"# The demo's offline "models": one response per call, in order.
model: scripted-demo
drafter:
  - text: |
      Here is the issue you asked for.

      # Add a dark theme that follows the system setting

      **Labels:** enhancement, ui

      ## Why
      The dashboard is too bright at night.

      ## What
      A dark theme, chosen from the system setting.

      ## Acceptance criteria
      - [ ] The dashboard looks dark.

      ## Out of scope
      Nothing yet.

      ## Notes
      None.
  - text: |
      # Add a dark theme that follows the system setting

      **Labels:** enhancement, ui, accessibility

      ## Why
      People who use the dashboard at night find it too bright; some stop using it after dark.

      ## What
      A dark theme that follows the operating system's setting, with a toggle in the header
      that overrides it and is remembered per browser.

      ## Acceptance criteria
      - [ ] With the system in dark mode, the dashboard opens in the dark theme.
      - [ ] The header toggle switches themes and the choice survives a reload.
      - [ ] Text in both themes meets WCAG AA contrast (4.5:1).

      ## Out of scope
      Custom colour schemes.

      ## Notes
      The toggle is the brief's own request; contrast follows WCAG 2.1.
reviewer:
  - text: |
      The draft names the problem but cannot be tested as written.

      ```json
      {"verdict": "REVISE", "findings": ["The acceptance criteria cannot be tested as written.", "The toggle from the brief is missing.", "Accessibility (contrast) is not addressed."]}
      ```
  - text: |
      Every rubric point holds: testable criteria, bounded scope, labels present.

      ```json
      {"verdict": "APPROVED", "findings": []}
      ```
"#;

/// Act two's offline "models": the design, and an approving review.
pub(super) const LLD_SCRIPT: &str = r#"model: scripted-demo
drafter:
  - text: |
      # 1 - Feature: Dark theme that follows the system setting

      ## 1. Context & Goal
      * **Issue:** #1
      * **Objective:** Offer a dark theme, chosen from the system setting, with a header toggle.
      * **Status:** Draft

      ## 2. Proposed Changes
      ### 2.1 Files Changed
      | File | Change | Description |
      |------|--------|-------------|
      | `web/theme.css` | Modify | Colour variables for light and dark |
      | `web/header.js` | Modify | The toggle, remembered in localStorage |

      ### 2.2 Dependencies
      None.

      ### 2.3 Data Structures
      `localStorage["theme"]`: `"dark"`, `"light"` or absent (follow the system).

      ### 2.4 Function Signatures
      `applyTheme(choice)`: sets the colour variables for `"dark"` or `"light"`.

      ### 2.5 Logic Flow
      On load: the stored choice, else `prefers-color-scheme`; the toggle stores and applies.

      ### 2.6 Technical Approach
      CSS custom properties, so one class on `<html>` switches every colour.

      ## 3. Requirements
      1. With the system in dark mode, the dashboard opens dark.
      2. The toggle overrides the system setting and survives a reload.
      3. Both themes meet WCAG AA contrast (4.5:1).

      ## 4. Alternatives Considered
      A second stylesheet per theme: rejected, every colour would be kept twice.

      ## 5. Data & Fixtures
      The current palette; no user data.

      ## 6. Diagram
      system setting or stored choice -> applyTheme -> colour variables

      ## 7. Security Considerations
      The stored value is read as one of two words; anything else is ignored.

      ## 8. Performance Considerations
      One class change; no extra request.

      ## 9. Risks & Mitigations
      Low contrast in a corner of the UI: the contrast check covers every pair.

      ## 10. Verification & Testing
      ### 10.1 Test Scenarios
      | ID | Scenario | Expected |
      |----|----------|----------|
      | TS-01 | prefers-color-scheme: dark | dark theme |
      | TS-02 | toggle, reload | choice kept |
      | TS-03 | contrast check | every pair >= 4.5:1 |

      ### 10.2 Test Commands
      `sh tests/test_theme.sh`

      ## 11. Definition of Done
      - [ ] Every scenario of 10.1 passes
reviewer:
  - text: |
      Traceable to the issue, files listed, every requirement has a test scenario.

      ```json
      {"verdict": "APPROVED", "findings": []}
      ```
"#;

/// Act three's offline implementer: a failing test first, then the code.
pub(super) const IMPLEMENT_SCRIPT: &str = r#"model: scripted-demo
roles:
  implementer:
    - text: |
        === gavel:write tests/test_theme.sh
        . ./theme.sh
        [ "$(theme dark)" = "background: #111" ] || { echo "dark theme is wrong: $(theme dark)"; exit 1; }
        [ "$(theme light)" = "background: #fff" ] || { echo "light theme is wrong"; exit 1; }
        echo "2 checks passed"
        === gavel:end
    - text: |
        === gavel:write theme.sh
        theme() {
          case "$1" in
            dark) echo "background: #111" ;;
            *) echo "background: #fff" ;;
          esac
        }
        === gavel:end
"#;
