//! Verdicts asked for as structured output (issue 35), driven in process: every call whose
//! answer is a verdict (the document reviewer, the change plan's challenger, a text-only change
//! reviewer) carries its schema and no other call does; a structured answer (one bare JSON
//! object) is parsed and routed like a fenced one, and an unreadable one still waits for a
//! person; the ledger records how each verdict was asked for; a service that refused the schema
//! is asked in plain text for the rest of the run, after a resume too (a new process, whose
//! provider remembers nothing).

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use gavel_core::{EventKind, Outcome, RunId, RunStore};
use gavel_llm::{AnswerForm, Call, Provider, ProviderError, Request, Response, ScriptedProvider};
use gavel_tracker::local::LocalTracker;
use gavel_workflows::document::{DocKind, DocSettings, DocState, DocWorkflow, Roles};
use gavel_workflows::issue::ISSUE;
use gavel_workflows::lld::LLD;
use gavel_workflows::verdict::{Decision, Verdict};

use crate::document_routing::start;
use crate::kit::{Kit, answer};

/// What a structured-output service does with a schema.
#[derive(Clone, Copy, PartialEq)]
enum Service {
    /// Follows it (the answer's text is the scripted one).
    Follows,
    /// Refuses it (a 400 naming `response_format`): the provider asks again in plain text.
    Refuses,
}

/// Each request's role and the name of the schema it carried, in order.
type Seen = Arc<Mutex<Vec<(String, Option<String>)>>>;

/// A provider in front of a script that reports the form a structured-output provider would:
/// `schema` when asked with one and the service follows it, `plain_after_refusal` when the
/// service refuses it, `plain` when asked without one.
struct Structured {
    inner: ScriptedProvider,
    service: Service,
    seen: Seen,
}

impl Structured {
    fn new(script: &Path, service: Service, seen: &Seen) -> Box<Self> {
        Box::new(Self {
            inner: ScriptedProvider::new(script.to_path_buf()),
            service,
            seen: Arc::clone(seen),
        })
    }
}

impl Provider for Structured {
    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn model(&self) -> String {
        self.inner.model()
    }

    fn preflight(&self) -> Result<(), ProviderError> {
        self.inner.preflight()
    }

    fn complete(&self, req: &Request, call: &Call<'_>) -> Result<Response, ProviderError> {
        let schema = req.output_schema.as_ref().map(|s| s.name.clone());
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((req.role.as_str().to_owned(), schema.clone()));
        let mut response = self.inner.complete(req, call)?;
        response.form = match (schema, self.service) {
            (None, _) => AnswerForm::Plain,
            (Some(_), Service::Follows) => AnswerForm::Schema,
            (Some(_), Service::Refuses) => AnswerForm::PlainAfterRefusal,
        };
        Ok(response)
    }
}

fn seen(seen: &Seen) -> Vec<(String, Option<String>)> {
    seen.lock().unwrap_or_else(PoisonError::into_inner).clone()
}

/// Each model call's role and the form its ledger recorded, in the timeline's order.
fn ledger_forms(kit: &Kit, run: RunId) -> Vec<(String, Option<String>)> {
    kit.store
        .events(run)
        .expect("events")
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::ModelCall {
                role,
                ledger: Some(l),
                ..
            } => Some((role, l.form)),
            _ => None,
        })
        .collect()
}

fn pair(role: &str, form: Option<&str>) -> (String, Option<String>) {
    (role.to_owned(), form.map(str::to_owned))
}

/// Draft `n`: each different, so that no check takes one for a repeat of the last.
fn draft(n: usize) -> String {
    format!("# Add dark mode v{n}\n\n**Labels:** ui\n\n## Acceptance criteria\n- [ ] dark {n}\n")
}

const APPROVED: &str = "{\"verdict\": \"APPROVED\", \"findings\": []}";
const REVISE: &str = "{\n  \"verdict\": \"REVISE\",\n  \"findings\": [\"vague\"]\n}\n";

/// A document workflow of `kind` whose drafter writes `drafts` drafts and whose reviewer
/// answers `verdicts`, both through [`Structured`] in front of one script.
fn doc_workflow(
    kit: &Kit,
    kind: &'static DocKind,
    drafts: usize,
    verdicts: &[&str],
    service: Service,
    seen: &Seen,
) -> DocWorkflow {
    kit.write(kind.template_path, "# Title\n\n**Labels:**\n");
    kit.write(kind.rubric_path, "Judge the document.\n");
    if kind.name == LLD.name && !kit.path("docs/issues/0001-dark-mode.md").exists() {
        kit.write(
            "docs/issues/0001-dark-mode.md",
            "---\nnumber: 1\ntitle: Dark mode\nlabels: [ui]\nstate: open\n---\n\n# Dark mode\n\nToo bright.\n",
        );
        kit.git(&["add", "-A"]);
        kit.git(&["commit", "-q", "-m", "issue 1"]);
    }
    let drafts: Vec<String> = (1..=drafts).map(draft).collect();
    let drafts: Vec<&str> = drafts.iter().map(String::as_str).collect();
    let script = kit.script(&[("drafter", &drafts), ("reviewer", verdicts)]);
    DocWorkflow {
        kind,
        settings: DocSettings {
            repo_root: kit.root().to_path_buf(),
            lineage_dir: "docs/lineage".into(),
            ideas_dir: "ideas".into(),
            template_path: kind.template_path.into(),
            max_iterations: 20,
            editor_program: None,
            calls: crate::kit::calls(),
            roles: Roles {
                drafter: "scripted:script.yaml".into(),
                reviewer: "scripted:script.yaml".into(),
            },
            drafter_reads_repo: false,
        },
        drafter: Structured::new(&script, service, seen),
        reviewer: Structured::new(&script, service, seen),
        tracker: Box::new(LocalTracker::new(kit.root(), "docs/issues".as_ref())),
        observer: None,
        preflight: Default::default(),
    }
}

#[test]
fn the_reviewer_is_asked_for_the_verdict_schema_and_its_structured_answers_route() {
    for kind in [&ISSUE, &LLD] {
        let kit = Kit::new();
        let asked = Seen::default();
        let wf = doc_workflow(&kit, kind, 2, &[REVISE, APPROVED], Service::Follows, &asked);
        let run = start(&kit, &wf, true);
        let out = kit.drive(&wf, run, None).expect("drive");
        assert!(
            matches!(out, Outcome::Done { .. }),
            "{}: {out:?}",
            kind.name
        );
        let verdict = Some("gavel_verdict".to_owned());
        assert_eq!(
            seen(&asked),
            [
                pair("drafter", None),
                ("reviewer".into(), verdict.clone()),
                pair("drafter", None),
                ("reviewer".into(), verdict),
            ],
            "{}: only the reviewer's calls carry the schema",
            kind.name
        );
        assert_eq!(
            ledger_forms(&kit, run),
            [
                pair("drafter", None),
                pair("reviewer", Some("schema")),
                pair("drafter", None),
                pair("reviewer", Some("schema")),
            ],
            "{}",
            kind.name
        );
        let s: DocState = kit.state(run);
        assert_eq!((s.draft_count, s.verdict_count), (2, 2));
        let last = s.verdict.expect("a verdict");
        assert_eq!(
            last.verdict,
            Verdict::Parsed {
                decision: Decision::Approved,
                findings: vec![],
                form: "schema".into()
            }
        );
        // The verdict file, in the finished lineage folder, records the parsed verdict over
        // the raw structured answer.
        let folder = match (s.filed, s.approved) {
            (Some(f), _) => f.lineage,
            (None, Some(a)) => a.lineage,
            (None, None) => panic!("{}: neither filed nor approved", kind.name),
        };
        let name = Path::new(&last.artifact.path)
            .file_name()
            .expect("a file name")
            .to_string_lossy()
            .into_owned();
        let text = kit.read(&format!("{folder}/{name}"));
        assert!(text.contains("verdict: APPROVED"), "{text}");
        assert!(text.ends_with(APPROVED), "{text}");
    }
}

#[test]
fn an_unreadable_structured_answer_waits_for_a_person_even_in_auto_mode() {
    for (kind, bad) in [
        (&ISSUE, "{\"verdict\": \"LGTM\", \"findings\": []}"),
        (
            &LLD,
            "{\"verdict\": \"APPROVED\", \"findings\": []}\n{\"verdict\": \"APPROVED\", \"findings\": []}",
        ),
        (&ISSUE, "{\"findings\": []}"),
    ] {
        let kit = Kit::new();
        let asked = Seen::default();
        let wf = doc_workflow(&kit, kind, 1, &[bad], Service::Follows, &asked);
        let run = start(&kit, &wf, true);
        let gate = kit.to_gate(&wf, run, None);
        assert_eq!(gate.kind, "verdict", "{bad}");
        assert_eq!(gate.recommended, None, "{bad}");
        let s: DocState = kit.state(run);
        let verdict = s.verdict.expect("a verdict").verdict;
        assert!(
            matches!(verdict, Verdict::Unparseable { .. }),
            "{bad}: {verdict:?}"
        );
        assert!(s.filed.is_none() && s.approved.is_none(), "{bad}");
        assert_eq!(
            ledger_forms(&kit, run).last(),
            Some(&pair("reviewer", Some("schema")))
        );
    }
}

#[test]
fn a_refused_schema_is_asked_plain_for_the_rest_of_the_run_after_a_resume_too() {
    let kit = Kit::new();
    let asked = Seen::default();
    let fenced = "```json\n{\"verdict\": \"REVISE\", \"findings\": [\"vague\"]}\n```\n";
    let verdicts = [fenced, APPROVED];
    let wf = doc_workflow(&kit, &ISSUE, 2, &verdicts, Service::Refuses, &asked);
    let run = start(&kit, &wf, false);
    let draft = kit.to_gate(&wf, run, None);
    let verdict = kit.to_gate(&wf, run, answer(&draft, "send"));
    assert_eq!(verdict.kind, "verdict");
    // The first call asked with the schema, and the service refused it.
    assert_eq!(
        seen(&asked).last(),
        Some(&("reviewer".into(), Some("gavel_verdict".into())))
    );
    let s: DocState = kit.state(run);
    assert_eq!(s.spend.schema_refused.len(), 1, "{:?}", s.spend);
    assert_eq!(s.spend.schema_refused[0].role, "reviewer");
    // A new process: new providers that remember nothing; the run does.
    let again = Seen::default();
    let wf = doc_workflow(&kit, &ISSUE, 2, &verdicts, Service::Refuses, &again);
    let draft = kit.to_gate(&wf, run, answer(&verdict, "revise"));
    let verdict = kit.to_gate(&wf, run, answer(&draft, "send"));
    assert_eq!(
        seen(&again),
        [pair("drafter", None), pair("reviewer", None)],
        "the reviewer is asked in plain text"
    );
    assert_eq!(verdict.recommended.as_deref(), Some("approve"));
    let out = kit
        .drive(&wf, run, answer(&verdict, "approve"))
        .expect("drive");
    assert!(matches!(out, Outcome::Done { .. }), "{out:?}");
    assert_eq!(
        ledger_forms(&kit, run),
        [
            pair("drafter", None),
            pair("reviewer", Some("plain_after_refusal")),
            pair("drafter", None),
            pair("reviewer", Some("plain_after_refusal")),
        ]
    );
    let timeline = kit.timeline(run);
    assert_eq!(
        timeline.matches("refused structured output").count(),
        1,
        "the refusal is noted once: {timeline}"
    );
}

#[test]
fn the_challenger_is_asked_for_its_schema_and_a_structured_challenge_routes() {
    use gavel_workflows::change::plan::PlanState;
    let kit = Kit::new();
    let asked = Seen::default();
    let approved = "{\"verdict\": \"APPROVED\", \"findings\": []}".to_owned();
    let (mut wf, run) = crate::change_plan_routing::plan_run(&kit, &[], &[approved], 0, 3);
    let script = kit.root().with_file_name("script.yaml");
    wf.challenger = Structured::new(&script, Service::Follows, &asked);
    let gate = kit.to_gate(&wf, run, None);
    assert_eq!(
        crate::kit::choices(&gate),
        ["implement", "view"],
        "{gate:?}"
    );
    assert_eq!(
        seen(&asked),
        [("challenger".into(), Some("gavel_challenge".into()))]
    );
    assert_eq!(
        ledger_forms(&kit, run),
        [pair("challenger", Some("schema"))]
    );
    let s: PlanState = kit.state(run);
    assert_eq!(s.challenger_calls, 1);
}

#[test]
fn a_text_only_change_reviewer_is_asked_for_the_review_schema() {
    use crate::implement_routing::{CODE, TESTS};
    let kit = Kit::new();
    let asked = Seen::default();
    let review =
        "{\"verdict\": \"APPROVED\", \"summary\": \"fine\", \"issues\": [], \"next_steps\": []}";
    let (wf, run) = crate::change_impl_routing::change_run_with(
        &kit,
        &[TESTS, CODE],
        &[review.to_owned()],
        0,
        |script| Structured::new(script, Service::Follows, &asked),
    );
    let gate = kit.to_gate(&wf, run, None);
    assert_eq!(gate.kind, gavel_workflows::review::KIND, "{gate:?}");
    assert_eq!(
        seen(&asked),
        [("reviewer".into(), Some("gavel_review".into()))]
    );
    let forms = ledger_forms(&kit, run);
    assert_eq!(forms.last(), Some(&pair("reviewer", Some("schema"))));
    assert!(
        forms
            .iter()
            .filter(|(r, _)| r == "implementer")
            .all(|(_, f)| f.is_none()),
        "{forms:?}"
    );
    let done = kit
        .drive(&wf, run, answer(&gate, "approve"))
        .expect("drive");
    assert!(matches!(done, Outcome::Done { .. }), "{done:?}");
    let review_md = kit.read(&format!("{}/REVIEW.md", crate::change_impl_routing::CHANGE));
    assert!(review_md.contains("**Verdict:** APPROVED"), "{review_md}");
    assert!(
        !review_md.contains("## Next steps"),
        "empty next steps are none: {review_md}"
    );
}
