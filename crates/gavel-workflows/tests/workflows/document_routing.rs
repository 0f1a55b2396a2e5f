//! The document workflow's routing, budget and finishing, driven in process (no binary
//! spawned) for BOTH kinds (brief → issue and issue → LLD) wherever a scenario applies: auto
//! mode revises on REVISE and finishes on a clean APPROVED, a budget halts before a call, an
//! unparseable or downgraded verdict waits for a person even in auto mode, the iteration cap
//! halts, and a revision at the draft gate never calls the reviewer.

use gavel_core::{ArtifactKind, EventKind, Outcome, RunId, RunStore};
use gavel_llm::ScriptedProvider;
use gavel_tracker::local::LocalTracker;
use gavel_workflows::caller::CallerSettings;
use gavel_workflows::document::{DocKind, DocSettings, DocState, DocWorkflow, Roles};
use gavel_workflows::issue::ISSUE;
use gavel_workflows::lld::LLD;

use crate::kit::{Kit, answer, yaml};

const DRAFT: &str = "# Add dark mode\n\n**Labels:** ui\n\n## Acceptance criteria\n- [ ] dark\n";
const APPROVED: &str = "```json\n{\"verdict\": \"APPROVED\", \"findings\": []}\n```\n";
const REVISE: &str = "```json\n{\"verdict\": \"REVISE\", \"findings\": [\"vague\"]}\n```\n";

/// Both kinds, for the scenarios that apply to both.
const KINDS: [&DocKind; 2] = [&ISSUE, &LLD];

/// A kit repository with the kind's template and rubric, a script, and the workflow over it;
/// for an LLD also the issue it designs for (issue 1 of the local tracker).
fn setup(
    kit: &Kit,
    kind: &'static DocKind,
    drafts: usize,
    verdicts: &[&str],
    budget: Option<u64>,
) -> DocWorkflow {
    kit.write(kind.template_path, "# Title\n\n**Labels:**\n");
    kit.write(kind.rubric_path, "Judge the document.\n");
    if kind.name == LLD.name {
        kit.write(
            "docs/issues/0001-dark-mode.md",
            "---\nnumber: 1\ntitle: Dark mode\nlabels: [ui]\nstate: open\n---\n\n# Dark mode\n\nToo bright.\n",
        );
        kit.git(&["add", "-A"]);
        kit.git(&["commit", "-q", "-m", "issue 1"]);
    }
    let mut script = String::from("model: gpt-4o\nroles:\n  drafter:\n");
    // Each draft differs from the one before (gavel's checks send back one that does not).
    for n in 1..=drafts {
        script.push_str(&format!(
            "    - text: {}\n",
            yaml(&format!("{DRAFT}- [ ] v{n}\n"))
        ));
    }
    script.push_str("  reviewer:\n");
    for v in verdicts {
        script.push_str(&format!("    - text: {}\n", yaml(v)));
    }
    let path = kit.write("script.yaml", &script);
    DocWorkflow {
        kind,
        settings: DocSettings {
            repo_root: kit.root().to_path_buf(),
            lineage_dir: "docs/lineage".into(),
            ideas_dir: "ideas".into(),
            template_path: kind.template_path.into(),
            max_iterations: 20,
            editor_program: None,
            calls: CallerSettings {
                budget_override: budget,
                ..crate::kit::calls()
            },
            roles: Roles {
                drafter: "scripted:script.yaml".into(),
                reviewer: "scripted:script.yaml".into(),
            },
            drafter_reads_repo: false,
        },
        drafter: Box::new(ScriptedProvider::new(path.clone())),
        reviewer: Box::new(ScriptedProvider::new(path)),
        tracker: Box::new(LocalTracker::new(kit.root(), "docs/issues".as_ref())),
        observer: None,
        preflight: Default::default(),
    }
}

/// Starts a run of `wf`'s kind (an issue from `brief.md`, an LLD of issue 1).
pub(crate) fn start(kit: &Kit, wf: &DocWorkflow, auto: bool) -> RunId {
    let (input, slug) = if wf.kind.name == LLD.name {
        ("1", "1-lld")
    } else {
        ("brief.md", "dark-mode")
    };
    let state = DocState::new(
        "k1".into(),
        input.into(),
        "# Dark mode\n\nToo bright.\n".into(),
        slug.into(),
        None,
        auto,
        "2026-01-30T14:33:20Z".into(),
    );
    kit.engine(wf)
        .start_claiming_slug(slug, &state, wf.kind.load_node)
        .expect("start")
}

/// What a finished run of the kind left: the lineage folder (asserting the kind's result).
fn finished(kit: &Kit, wf: &DocWorkflow, run: RunId) -> String {
    let s = state(kit, run);
    let log = kit.git(&["log", "--format=%s"]);
    if wf.kind.name == LLD.name {
        let approved = s.approved.expect("approved");
        assert_eq!(approved.path, "docs/lld/active/LLD-1.md");
        assert!(kit.read(&approved.path).starts_with("# Add dark mode"));
        assert_eq!(approved.lineage, "docs/lineage/done/1-lld");
        assert!(log.contains("gavel: approve LLD for #1 Dark mode"), "{log}");
        approved.lineage
    } else {
        let filed = s.filed.expect("filed");
        assert_eq!(filed.number, 1);
        assert!(log.contains("gavel: file issue #1"), "{log}");
        filed.lineage
    }
}

fn state(kit: &Kit, run: RunId) -> DocState {
    let head = kit.store.head(run).expect("head").expect("checkpoint");
    serde_json::from_slice(&head.state).expect("state")
}

#[test]
fn auto_mode_revises_on_revise_and_finishes_on_a_clean_approval() {
    for kind in KINDS {
        let kit = Kit::new();
        let wf = setup(&kit, kind, 2, &[REVISE, APPROVED], None);
        let run = start(&kit, &wf, true);
        let out = kit.drive(&wf, run, None).expect("drive");
        assert!(
            matches!(out, Outcome::Done { .. }),
            "{}: {out:?}",
            kind.name
        );
        let s = state(&kit, run);
        assert_eq!((s.draft_count, s.verdict_count), (2, 2));
        assert_eq!(
            s.spend.call_count, 4,
            "two drafts and two verdicts in the ledger"
        );
        let lineage = finished(&kit, &wf, run);
        let mut names: Vec<String> = std::fs::read_dir(kit.path(&lineage))
            .expect("lineage")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let last = if kind.name == LLD.name {
            "006-approved.json"
        } else {
            "006-filed.json"
        };
        let first = if kind.name == LLD.name {
            "001-issue.md"
        } else {
            "001-brief.md"
        };
        assert_eq!(
            names,
            [
                first,
                "002-draft.md",
                "003-verdict.md",
                "004-draft.md",
                "005-verdict.md",
                last
            ],
            "{}",
            kind.name
        );
        // Each file's kind is declared where it is recorded, for the report to go by.
        let kinds: Vec<Option<ArtifactKind>> = kit
            .store
            .events(run)
            .expect("events")
            .into_iter()
            .filter_map(|e| match e.kind {
                EventKind::Artifact {
                    content: Some(_),
                    kind,
                    ..
                } => Some(kind),
                _ => None,
            })
            .collect();
        use ArtifactKind::{Brief, Draft, Verdict};
        assert_eq!(
            kinds,
            [Brief, Draft, Verdict, Draft, Verdict].map(Some),
            "{}",
            kind.name
        );
        let status = kit.git(&["status", "--porcelain"]);
        for committed in ["docs/lineage", "docs/lld", "docs/issues"] {
            assert!(
                !status.contains(committed),
                "one commit holds everything: {status}"
            );
        }
    }
}

#[test]
fn a_budget_too_small_halts_before_the_first_call() {
    for kind in KINDS {
        let kit = Kit::new();
        let wf = setup(&kit, kind, 1, &[APPROVED], Some(1));
        let run = start(&kit, &wf, true);
        let out = kit.drive(&wf, run, None).expect("drive");
        match out {
            Outcome::Halted { reason } => assert!(reason.contains("budget"), "{reason}"),
            other => panic!("expected a halt, got {other:?}"),
        }
        assert_eq!(state(&kit, run).spend.call_count, 0, "no call was made");
        assert!(
            gavel_llm::read_call_log(&kit.path("script.yaml"))
                .expect("log")
                .is_empty()
        );
    }
}

#[test]
fn an_unparseable_verdict_waits_for_a_person_even_in_auto_mode() {
    for kind in KINDS {
        let kit = Kit::new();
        let wf = setup(&kit, kind, 1, &["Looks great, APPROVED!"], None);
        let run = start(&kit, &wf, true);
        let gate = kit.to_gate(&wf, run, None);
        assert_eq!(gate.kind, "verdict");
        assert_eq!(
            gate.recommended, None,
            "nothing is recommended over an unparseable verdict"
        );
        assert_eq!(
            gate.present.preview.as_deref(),
            gate.artifacts.get(1).map(String::as_str)
        );
        let out = kit
            .drive(&wf, run, answer(&gate, "approve"))
            .expect("drive");
        assert!(matches!(out, Outcome::Done { .. }), "{out:?}");
        assert!(
            kit.timeline(run)
                .contains("a person approved over a UNPARSEABLE")
        );
    }
}

#[test]
fn the_iteration_cap_halts_and_never_files() {
    for kind in KINDS {
        let kit = Kit::new();
        let mut wf = setup(&kit, kind, 3, &[REVISE, REVISE, REVISE], None);
        wf.settings.max_iterations = 2;
        let run = start(&kit, &wf, true);
        match kit.drive(&wf, run, None).expect("drive") {
            Outcome::Halted { reason } => assert!(reason.contains("max iterations"), "{reason}"),
            other => panic!("expected a halt, got {other:?}"),
        }
        let s = state(&kit, run);
        assert_eq!((s.draft_count, s.verdict_count), (2, 2));
        assert!(s.filed.is_none() && s.approved.is_none());
    }
}

#[test]
fn a_person_revises_at_the_draft_gate_and_the_reviewer_is_not_called() {
    for kind in KINDS {
        let kit = Kit::new();
        let wf = setup(&kit, kind, 2, &[APPROVED], None);
        let run = start(&kit, &wf, false);
        let gate = kit.to_gate(&wf, run, None);
        assert_eq!(gate.kind, "draft");
        assert_eq!(
            gate.present.open, gate.artifacts,
            "the draft opens in the editor"
        );
        let mut revise = answer(&gate, "revise");
        if let Some(a) = revise.as_mut() {
            a.feedback = Some("Name the toggle.".into());
        }
        let second = kit.to_gate(&wf, run, revise);
        assert_eq!(second.kind, "draft");
        let s = state(&kit, run);
        assert_eq!(
            (s.draft_count, s.verdict_count),
            (2, 0),
            "seed scenario 060"
        );
        let verdict = kit.to_gate(&wf, run, answer(&second, "send"));
        assert_eq!(verdict.kind, "verdict");
        assert_eq!(verdict.recommended.as_deref(), Some("approve"));
        let out = kit
            .drive(&wf, run, answer(&verdict, "approve"))
            .expect("drive");
        assert!(matches!(out, Outcome::Done { .. }), "{out:?}");
    }
}

#[test]
fn a_tracker_failure_offers_retry_edit_abort_and_retry_files_once() {
    // Filing is the issue kind's own N6.
    let kit = Kit::new();
    let wf = setup(&kit, &ISSUE, 1, &[APPROVED], None);
    let run = start(&kit, &wf, false);
    let draft = kit.to_gate(&wf, run, None);
    let verdict = kit.to_gate(&wf, run, answer(&draft, "send"));
    // The tracker breaks after pre-flight passed (seed scenario 110).
    std::fs::remove_dir_all(kit.path("docs/issues")).ok();
    kit.write("docs/issues", "not a folder");
    let gate = kit.to_gate(&wf, run, answer(&verdict, "approve"));
    assert_eq!(gate.kind, "file-error");
    assert_eq!(gate.choice_names(), ["retry", "edit", "abort"]);
    std::fs::remove_file(kit.path("docs/issues")).expect("repair");
    let out = kit.drive(&wf, run, answer(&gate, "retry")).expect("drive");
    assert!(matches!(out, Outcome::Done { .. }), "{out:?}");
    let issues: Vec<_> = std::fs::read_dir(kit.path("docs/issues"))
        .expect("issues")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".md"))
        .collect();
    assert_eq!(issues.len(), 1);
}

#[test]
fn a_verdict_from_a_downgraded_model_waits_for_a_person_in_auto_mode() {
    for kind in KINDS {
        let kit = Kit::new();
        let wf = setup(&kit, kind, 1, &[APPROVED], None);
        // The reviewer's answer claims a smaller model than the one asked for.
        let script = kit.read("script.yaml").replace(
            &format!("    - text: {}\n", yaml(APPROVED)),
            &format!("    - text: {}\n      model: gpt-4o-mini\n", yaml(APPROVED)),
        );
        kit.write("script.yaml", &script);
        let run = start(&kit, &wf, true);
        let gate = kit.to_gate(&wf, run, None);
        assert_eq!(gate.kind, "verdict");
        assert_eq!(gate.recommended, None);
        assert!(
            gate.detail
                .as_deref()
                .unwrap_or_default()
                .contains("WARNING"),
            "{gate:?}"
        );
    }
}

#[test]
fn preflight_runs_at_n1_unless_the_caller_just_passed_it_and_then_only_once() {
    let kit = Kit::new();
    let wf = setup(&kit, &ISSUE, 1, &[APPROVED], None);
    std::fs::remove_file(kit.path(ISSUE.rubric_path)).expect("remove the rubric");
    // Nothing was checked before the run: N1 checks, and stops it.
    let run = start(&kit, &wf, true);
    let out = kit.drive(&wf, run, None).expect("drive");
    assert!(preflight_failed(&out), "N1 must check: {out:?}");
    // A check that passed just before the run lets N1 skip its own, once: the CLI's pre-flight
    // and N1 are moments apart in one process.
    kit.write(ISSUE.rubric_path, "Judge the document.\n");
    assert!(wf.preflight_problems().is_empty());
    std::fs::remove_file(kit.path(ISSUE.rubric_path)).expect("remove the rubric");
    let again = start_as(&kit, &wf, "dark-mode-2");
    let out = kit.drive(&wf, again, None).expect("drive");
    assert!(
        !preflight_failed(&out),
        "N1 checked again right after a passing check: {out:?}"
    );
    let third = start_as(&kit, &wf, "dark-mode-3");
    let out = kit.drive(&wf, third, None).expect("drive");
    assert!(preflight_failed(&out), "the skip is used once: {out:?}");
}

/// Whether N1 stopped the run for the missing rubric.
fn preflight_failed(out: &Outcome) -> bool {
    matches!(out, Outcome::Failed { error }
        if error.starts_with("pre-flight failed") && error.contains(ISSUE.rubric_path))
}

fn start_as(kit: &Kit, wf: &DocWorkflow, slug: &str) -> RunId {
    let state = DocState::new(
        format!("k-{slug}"),
        "brief.md".into(),
        "# Dark mode\n\nToo bright.\n".into(),
        slug.into(),
        None,
        true,
        "2026-01-30T14:33:20Z".into(),
    );
    kit.engine(wf)
        .start_claiming_slug(slug, &state, wf.kind.load_node)
        .expect("start")
}

/// A template with a placeholder and a section, and the two drafts: the first leaves the
/// placeholder, the second fills it.
fn with_checked_template(kit: &Kit, wf: &mut DocWorkflow) {
    kit.write(
        wf.kind.template_path,
        "# {Title}\n\n**Labels:** {labels}\n\n## Why\n{The problem}\n",
    );
    let left = "# Add dark mode\n\n**Labels:** ui\n\n## Why\n{The problem}\n";
    let filled = "# Add dark mode\n\n**Labels:** ui\n\n## Why\nToo bright.\n";
    let script = kit.script(&[("drafter", &[left, filled]), ("reviewer", &[APPROVED])]);
    wf.drafter = Box::new(ScriptedProvider::new(script.clone()));
    wf.reviewer = Box::new(ScriptedProvider::new(script));
}

#[test]
fn a_draft_failing_gavels_checks_goes_back_to_the_drafter_without_a_review() {
    for kind in KINDS {
        let kit = Kit::new();
        let mut wf = setup(&kit, kind, 0, &[], None);
        with_checked_template(&kit, &mut wf);
        let run = start(&kit, &wf, true);
        let out = kit.drive(&wf, run, None).expect("drive");
        assert!(
            matches!(out, Outcome::Done { .. }),
            "{}: {out:?}",
            kind.name
        );
        let s = state(&kit, run);
        assert_eq!((s.draft_count, s.verdict_count), (2, 1), "{}", kind.name);
        assert_eq!(s.spend.call_count, 3, "two drafts, one review");
        let checks = s.checks.expect("checks");
        assert!(checks.findings.is_empty(), "the second draft passed");
        let events = kit.store.events(run).expect("events");
        let recorded: Vec<&str> = events
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::Artifact {
                    path,
                    kind: Some(ArtifactKind::Feedback),
                    ..
                } => Some(path.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(recorded.len(), 1, "{recorded:?}");
        let name = recorded[0].rsplit('/').next().unwrap_or_default();
        assert_eq!(name, "003-checks.md", "{recorded:?}");
        let lineage = finished(&kit, &wf, run);
        assert!(
            kit.read(&format!("{lineage}/{name}"))
                .contains("`{The problem}`")
        );
    }
}

#[test]
fn at_the_draft_gate_the_findings_are_shown_and_revise_is_recommended() {
    for kind in KINDS {
        let kit = Kit::new();
        let mut wf = setup(&kit, kind, 0, &[], None);
        with_checked_template(&kit, &mut wf);
        let run = start(&kit, &wf, false);
        let gate = kit.to_gate(&wf, run, None);
        assert_eq!(gate.kind, "draft");
        assert_eq!(gate.recommended.as_deref(), Some("revise"));
        let detail = gate.detail.clone().unwrap_or_default();
        assert!(
            detail.contains("gavel's checks found 1 problem(s)")
                && detail.contains("{The problem}"),
            "{detail}"
        );
        assert!(
            gate.artifacts.iter().any(|a| a.ends_with("-checks.md")),
            "{:?}",
            gate.artifacts
        );
        // Shown again (a resumed process) and answered, the findings are recorded once.
        let again = kit.to_gate(&wf, run, None);
        assert_eq!(again.detail, gate.detail);
        let verdict = kit.to_gate(&wf, run, answer(&gate, "send"));
        assert_eq!(verdict.kind, "verdict", "a person may send it on");
        let timeline = kit.timeline(run);
        assert_eq!(
            timeline.matches("gavel's checks: 1 finding(s)").count(),
            1,
            "{timeline}"
        );
        assert_eq!(
            timeline.matches("003-checks.md\",\"content").count(),
            1,
            "{timeline}"
        );
        assert!(timeline.contains("over 1 finding(s) of gavel's checks"));
        let s = state(&kit, run);
        assert_eq!(s.file_counter, 4, "input, draft, checks, verdict");
        assert!(
            s.checks
                .is_some_and(|c| c.path.is_some_and(|p| p.ends_with("003-checks.md")))
        );
    }
}
