//! The plan's nodes: a planner step (proposal, specs, tasks or a revision), the challenge,
//! and the person's decision.

use gavel_core::ArtifactKind;
use gavel_core::{Choice, EventKind, NodeCtx, NodeError, Presentation, Transition};
use gavel_llm::{AgentProfile, OutputSchema, Role};
use gavel_mcp::{Challenge, ChallengeVerdict};

use super::files::{self, CHALLENGE_MARKER, Expect, split_proposal};
use super::prompts::{self, PlannerInput};
use super::{PlanState, PlanWorkflow, node};
use crate::caller::ModelCaller;
use crate::change::ChangeDir;
use crate::change::archive::inputs::delta_purpose;
use crate::change::merge::{MergeError, dropped_scenarios};
use crate::change::order::dependency_order;
use crate::change::read::{read_bytes, read_text_optional};
use crate::change::spec::parse_delta_spec;
use crate::change::state::{Phase, Verdict};
use crate::change::structured::{challenge_schema, parse_json_verdict};
use crate::fsutil;

fn failed(what: &str, path: &std::path::Path, e: std::io::Error) -> NodeError {
    NodeError::Failed(format!("cannot {what} {}: {e}", path.display()))
}

fn read_optional(path: &std::path::Path) -> Result<Option<String>, NodeError> {
    read_text_optional(path).map_err(|e| NodeError::Failed(e.to_string()))
}

/// `specs` (capability, text) in dependency order, or the cycle.
fn ordered(specs: &[(String, String)]) -> Result<Vec<(String, String)>, String> {
    let pairs: Vec<(&str, &str)> = specs
        .iter()
        .map(|(c, t)| (c.as_str(), t.as_str()))
        .collect();
    let order = dependency_order(&pairs).map_err(|e| e.to_string())?;
    Ok(order
        .into_iter()
        .filter_map(|c| specs.iter().find(|(n, _)| *n == c).cloned())
        .collect())
}

/// OpenSpec's shortest accepted Purpose (`validate --strict`).
const MIN_PURPOSE_CHARS: usize = 50;

/// Every capability with a living spec, sorted, with the spec's text when the plan so far
/// names the capability (the planner modifies those, and must keep their scenarios).
fn living_specs(
    dir: &ChangeDir,
    plan: &[(String, String)],
) -> Result<Vec<(String, Option<String>)>, NodeError> {
    let specs = dir.root().join("specs");
    let Ok(entries) = std::fs::read_dir(&specs) else {
        return Ok(Vec::new());
    };
    let mut caps: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().join("spec.md").is_file())
        .filter_map(|e| e.file_name().to_str().map(str::to_owned))
        .collect();
    caps.sort();
    let mut out = Vec::new();
    for cap in caps {
        let named = plan.iter().any(|(_, text)| text.contains(cap.as_str()));
        let text = if named {
            read_optional(&dir.living_spec(&cap))?
        } else {
            None
        };
        out.push((cap, text));
    }
    Ok(out)
}

/// Why the answer's delta specs would drop scenarios of the living specs (a MODIFIED
/// requirement replaces the whole block; OpenSpec's `validate --strict` and archive refuse
/// it), or `None`.
fn scenario_losses(
    dir: &ChangeDir,
    specs: &[(String, String)],
) -> Result<Option<String>, NodeError> {
    let mut findings = Vec::new();
    for (cap, text) in specs {
        let Some(living) = read_optional(&dir.living_spec(cap))? else {
            continue;
        };
        let Ok(delta) = parse_delta_spec(text) else {
            continue;
        };
        let dropped = dropped_scenarios(&living, &delta);
        if !dropped.is_empty() {
            findings.push(format!(
                "specs/{cap}/spec.md: {}",
                MergeError::DropsScenarios { dropped }
            ));
        }
    }
    Ok((!findings.is_empty()).then(|| findings.join("\n")))
}

/// The plan as the planner and the challenger read it: the proposal's body, the specs in
/// dependency order, the tasks.
fn plan_so_far(dir: &ChangeDir) -> Result<Vec<(String, String)>, NodeError> {
    let mut plan = Vec::new();
    if let Some(p) = read_optional(&dir.proposal())? {
        plan.push(("proposal.md".to_owned(), split_proposal(&p).0.to_owned()));
    }
    let specs = files::read_specs(dir).map_err(|e| NodeError::Failed(e.to_string()))?;
    let specs = ordered(&specs).unwrap_or(specs);
    for (cap, text) in specs {
        plan.push((format!("specs/{cap}/spec.md"), text));
    }
    if let Some(t) = read_optional(&dir.tasks())? {
        plan.push(("tasks.md".to_owned(), t));
    }
    Ok(plan)
}

impl PlanWorkflow {
    /// The caller for a planner (plain text) or challenger call (its verdict asked for as
    /// structured output where the provider can).
    fn caller(&self, output_schema: Option<OutputSchema>) -> ModelCaller<'_> {
        ModelCaller {
            settings: &self.settings.calls,
            observer: self.observer.clone(),
            profile: AgentProfile::text_only(),
            output_schema,
        }
    }

    /// A planner step: ask, check every file, write them all (specs in dependency order).
    pub(super) fn generate(
        &self,
        s: &mut PlanState,
        cx: &mut NodeCtx<'_>,
        expect: Expect,
    ) -> Result<Transition, NodeError> {
        let (here, next) = match expect {
            Expect::Proposal => (node::PROPOSAL, node::SPECS),
            Expect::Specs => (node::SPECS, node::TASKS),
            Expect::Tasks => (node::TASKS, node::CHALLENGE),
            Expect::Revision => (node::REPROPOSAL, node::CHALLENGE),
        };
        let dir = self.dir(s)?;
        let plan = plan_so_far(&dir)?;
        let no_findings: Vec<String> = Vec::new();
        let prompt = prompts::planner(&PlannerInput {
            expect,
            change_id: &s.change_id,
            description: s.description.as_deref(),
            plan: &plan,
            findings: if expect == Expect::Revision {
                &s.findings
            } else {
                &no_findings
            },
            feedback: s.feedback.as_deref(),
            living: &living_specs(&dir, &plan)?,
        });
        let seq = s.planner_calls;
        let answered = match self.caller(None).call(
            &mut s.spend,
            cx,
            self.planner.as_ref(),
            Role::named("planner"),
            seq,
            prompt,
            &[],
        )? {
            Ok(a) => a,
            Err(stop) => return Ok(stop),
        };
        s.planner_calls += 1;
        let checked = match files::check(&answered.response.text, expect, &s.change_id) {
            Ok(f) => f,
            Err(why) => return Ok(self.refuse(s, cx, here, why)),
        };
        if expect == Expect::Revision
            && files::unchanged(&checked, &dir).map_err(|e| NodeError::Failed(e.to_string()))?
        {
            let why = "the revision changes no file of the plan: answer each of the challenger's findings by changing the files".to_owned();
            return Ok(self.refuse(s, cx, here, why));
        }
        // The specs in dependency order, counting the ones already on disk.
        let mut all = files::read_specs(&dir).map_err(|e| NodeError::Failed(e.to_string()))?;
        for (cap, text) in &checked.specs {
            all.retain(|(c, _)| c != cap);
            all.push((cap.clone(), text.clone()));
        }
        let order = match ordered(&all) {
            Ok(o) => o,
            Err(why) => return Ok(self.refuse(s, cx, here, why)),
        };
        if let Some(why) = scenario_losses(&dir, &checked.specs)? {
            return Ok(self.refuse(s, cx, here, why));
        }
        for (cap, text) in &checked.specs {
            if read_optional(&dir.living_spec(cap))?.is_none()
                && delta_purpose(text).is_none_or(|p| p.chars().count() < MIN_PURPOSE_CHARS)
            {
                cx.event(EventKind::Note {
                    text: format!(
                        "specs/{cap}/spec.md creates the capability `{cap}` without a `## Purpose` of at least {MIN_PURPOSE_CHARS} characters: write one before archiving, or the archive writes a placeholder that `openspec validate --strict` refuses"
                    ),
                });
            }
        }
        if let Some(body) = &checked.proposal {
            let current = read_optional(&dir.proposal())?.unwrap_or_default();
            let sections = split_proposal(&current).1;
            let mut text = body.trim_end().to_owned();
            text.push('\n');
            if !sections.is_empty() {
                text.push('\n');
                text.push_str(sections);
            }
            fsutil::write_atomic(&dir.proposal(), text.as_bytes())
                .map_err(|e| failed("write", &dir.proposal(), e))?;
            self.artifact(
                s,
                cx,
                ArtifactKind::Proposal,
                "proposal.md",
                body.as_bytes(),
            )?;
        }
        for (cap, text) in order
            .iter()
            .filter(|(c, _)| checked.specs.iter().any(|(n, _)| n == c))
        {
            let path = dir.delta_spec(cap);
            fsutil::write_atomic(&path, text.as_bytes()).map_err(|e| failed("write", &path, e))?;
            self.artifact(
                s,
                cx,
                ArtifactKind::Spec,
                &format!("spec-{cap}.md"),
                text.as_bytes(),
            )?;
        }
        if let Some(tasks) = &checked.tasks {
            fsutil::write_atomic(&dir.tasks(), tasks.as_bytes())
                .map_err(|e| failed("write", &dir.tasks(), e))?;
            self.artifact(s, cx, ArtifactKind::Tasks, "tasks.md", tasks.as_bytes())?;
            if let Ok(list) = crate::change::tasks::parse_tasks(tasks, &s.change_id) {
                for i in &list.unclassified {
                    if let Some(t) = list.tasks.get(*i) {
                        cx.event(EventKind::Note {
                            text: format!(
                                "tasks.md line {}: task `{}` has no layer (Data, Logic, Integration, Testing)",
                                t.line, t.text
                            ),
                        });
                    }
                }
            }
        }
        s.attempts = 0;
        s.feedback = None;
        s.phase = Phase::Proposed;
        self.write_state(s, cx)?;
        Ok(Transition::Goto(next.to_owned()))
    }

    /// gavel's own checks refused the planner's answer: noted in the timeline as gavel's
    /// findings (no challenger sees the plan), then tried again or halted ([`Self::retry`]).
    fn refuse(
        &self,
        s: &mut PlanState,
        cx: &mut NodeCtx<'_>,
        here: &str,
        why: String,
    ) -> Transition {
        cx.event(EventKind::Note {
            text: format!(
                "gavel's checks refused the planner's answer (attempt {}): {}",
                s.attempts + 1,
                why.replace('\n', "; ")
            ),
        });
        self.retry(s, here, "planner's answer", why)
    }

    /// The challenger judges the whole plan; its verdict is appended to the proposal and moves
    /// the phase.
    pub(super) fn challenge(
        &self,
        s: &mut PlanState,
        cx: &mut NodeCtx<'_>,
    ) -> Result<Transition, NodeError> {
        let dir = self.dir(s)?;
        let plan = plan_so_far(&dir)?;
        let prompt = prompts::challenger(&s.change_id, &plan, s.feedback.as_deref());
        let seq = s.challenger_calls;
        let answered = match self.caller(Some(challenge_schema())).call(
            &mut s.spend,
            cx,
            self.challenger.as_ref(),
            Role::named("challenger"),
            seq,
            prompt,
            &[],
        )? {
            Ok(a) => a,
            Err(stop) => return Ok(stop),
        };
        s.challenger_calls += 1;
        let challenge: Challenge = match parse_json_verdict(&answered.response.text) {
            Ok(c) => c,
            Err(e) => {
                return Ok(self.retry(s, node::CHALLENGE, "challenger's verdict", e.to_string()));
            }
        };
        let round = s.planning_iterations + 1;
        let heading = format!("## Challenge (round {round})");
        let current = read_optional(&dir.proposal())?.unwrap_or_default();
        // A replay after a crash finds its section already there.
        if !current.contains(&format!("{CHALLENGE_MARKER}\n{heading}\n")) {
            let mut text = current.trim_end().to_owned();
            text.push_str(&format!(
                "\n\n{CHALLENGE_MARKER}\n{}",
                challenge
                    .to_markdown()
                    .replacen("## Challenge", &heading, 1)
            ));
            fsutil::write_atomic(&dir.proposal(), text.as_bytes())
                .map_err(|e| failed("write", &dir.proposal(), e))?;
        }
        let artifact = self.artifact(
            s,
            cx,
            ArtifactKind::Challenge,
            "challenge.md",
            answered.response.text.as_bytes(),
        )?;
        s.challenge_artifact = Some(artifact);
        s.planning_iterations = round;
        s.findings = challenge.findings.clone();
        s.attempts = 0;
        s.feedback = None;
        // An approval that carries findings is not clean (as in the issue workflow): the
        // phase stays `proposed` until a person accepts the plan at P5.
        let (verdict, phase) = match challenge.verdict {
            ChallengeVerdict::Approved if challenge.findings.is_empty() => {
                (Verdict::Approved, Phase::Challenged)
            }
            ChallengeVerdict::Approved => (Verdict::Approved, Phase::Proposed),
            ChallengeVerdict::NeedsRevision => (Verdict::NeedsRevision, Phase::Proposed),
            ChallengeVerdict::Rejected => (Verdict::Rejected, Phase::Rejected),
        };
        s.last_verdict = Some(verdict);
        s.phase = phase;
        if phase == Phase::Rejected {
            // What was rejected, so that `plan` can tell when a person has edited it.
            let proposal =
                read_bytes(&dir.proposal()).map_err(|e| NodeError::Failed(e.to_string()))?;
            let record = serde_json::json!({
                "proposal_sha256": gavel_core::ContentHash::of(&proposal).to_string(),
                "round": round,
            });
            self.artifact(
                s,
                cx,
                ArtifactKind::Rejection,
                super::REJECTED_SUFFIX,
                format!("{record:#}\n").as_bytes(),
            )?;
        }
        self.write_state(s, cx)?;
        Ok(match challenge.verdict {
            ChallengeVerdict::Approved => Transition::Goto(node::DECIDE.to_owned()),
            ChallengeVerdict::NeedsRevision if round < s.max_iterations => {
                Transition::Goto(node::REPROPOSAL.to_owned())
            }
            ChallengeVerdict::NeedsRevision => Transition::Goto(node::DECIDE.to_owned()),
            ChallengeVerdict::Rejected => Transition::Abort {
                reason: format!(
                    "the challenger rejected the plan of `{}` in round {round} (its findings are at the end of {}); edit the proposal, then run `gavel change plan {}` again",
                    s.change_id,
                    self.rel(&dir.proposal()),
                    s.change_id
                ),
            },
        })
    }

    /// After a clean APPROVED: implement / view. After an APPROVED with findings, or when the
    /// rounds ran out: implement / view / continue.
    pub(super) fn decide(
        &self,
        s: &mut PlanState,
        cx: &mut NodeCtx<'_>,
    ) -> Result<Transition, NodeError> {
        let approved_with_findings =
            s.last_verdict == Some(Verdict::Approved) && !s.findings.is_empty();
        let approved = s.last_verdict == Some(Verdict::Approved) && !approved_with_findings;
        let dir = self.dir(s)?;
        let id = s.change_id.clone();
        let Some(answer) = cx.answer()? else {
            let title = if approved {
                format!("The plan of `{id}` was approved: implement it, or view it first")
            } else if approved_with_findings {
                format!(
                    "The challenger approved the plan of `{id}` but with {} finding(s): implement it as it is, view it, or continue revising",
                    s.findings.len()
                )
            } else {
                format!(
                    "The plan of `{id}` still needs revision after {} round(s): implement it as it is, view it, or continue revising",
                    s.planning_iterations
                )
            };
            let mut choices = vec![
                Choice::new("implement", 'I', "accept the plan; next: gavel change impl"),
                Choice::new("view", 'V', "stop here and read the plan first"),
            ];
            if !approved {
                choices.push(Choice::new(
                    "continue",
                    'C',
                    "one more revision and challenge",
                ));
            }
            let mut gate = cx.gate("plan-decision", title, choices);
            if !s.findings.is_empty() {
                gate.detail = Some(format!("findings:\n- {}", s.findings.join("\n- ")));
            }
            gate.artifacts = vec![self.rel(&dir.proposal()), self.rel(&dir.tasks())];
            gate.recommended = if approved {
                Some("implement".to_owned())
            } else if approved_with_findings {
                Some("continue".to_owned())
            } else {
                None
            };
            gate.present = Box::new(Presentation {
                preview: s.challenge_artifact.clone(),
                ..Presentation::default()
            });
            return Ok(Transition::Gate(gate));
        };
        match answer.choice.as_str() {
            "implement" => {
                if !approved {
                    s.phase = Phase::Challenged;
                    cx.event(EventKind::Note {
                        text: if approved_with_findings {
                            format!(
                                "a person accepted the plan over the challenger's APPROVED with {} finding(s)",
                                s.findings.len()
                            )
                        } else {
                            format!(
                                "a person accepted the plan with open findings after {} round(s)",
                                s.planning_iterations
                            )
                        },
                    });
                    self.write_state(s, cx)?;
                }
                Ok(Transition::Done {
                    summary: format!(
                        "the plan of `{id}` is accepted (phase challenged); next: gavel change impl {id}"
                    ),
                })
            }
            "view" => Ok(Transition::Done {
                summary: format!(
                    "the plan of `{id}` is in {} (proposal.md, specs/, tasks.md); then {}",
                    self.rel(&dir.dir()),
                    if approved {
                        format!("gavel change impl {id}")
                    } else {
                        format!("gavel change plan {id} challenges it again")
                    }
                ),
            }),
            "continue" if !approved => {
                s.max_iterations = s.planning_iterations + 1;
                Ok(Transition::Goto(node::REPROPOSAL.to_owned()))
            }
            other => Err(NodeError::Failed(format!(
                "`{other}` is not an answer to the plan decision"
            ))),
        }
    }

    fn rel(&self, p: &std::path::Path) -> String {
        p.strip_prefix(&self.settings.repo_root)
            .unwrap_or(p)
            .to_string_lossy()
            .into_owned()
    }
}
