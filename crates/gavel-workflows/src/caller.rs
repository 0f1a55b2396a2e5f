//! The model caller every workflow uses: the budget check before a call, the journaled call,
//! the answer kept out of line as blobs, model verification, pricing and the spend ledger.
//!
//! Order, and why: the budget is checked before the call (spent so far + the prompt's tokens
//! counted with o200k + the output cap, priced from the table) and a run that cannot afford the
//! call HALTs naming the numbers. Each attempt is marked in the journal first, so an attempt
//! lost to a kill is still ledgered. The call itself is a journaled step whose answer and blobs
//! are stored in one transaction, so a resumed run re-uses its answer. After it, the call goes
//! into the spend ledger (tokens, cost as reported or priced, prompt and raw answer
//! content-addressed in the store) and the answering model is compared with the requested one.
//! Attempts the provider answered and billed but that failed (retried, or ending the call) go
//! into the ledger before it, each once (`caller/attempts.rs`).
//!
//! A workflow embeds [`Spend`] in its state (`#[serde(flatten)]` keeps the field names older
//! checkpoints used) and calls [`ModelCaller::call`] from its nodes.
//!
//! A call whose answer is a verdict sets [`ModelCaller::output_schema`]: the provider asks the
//! service to follow it where it can (structured output), and says how it asked
//! ([`Response::form`]); the ledger records that form, and a refusal is kept for the rest of
//! the run (`caller/schema.rs`). The answer is judged by the workflow's parser either way.

use std::cell::RefCell;
use std::sync::Arc;

use gavel_core::{
    Blobs, CallLedger, ContentHash, EventKind, NodeCtx, NodeError, Outside, StepError, Transition,
};
use gavel_llm::price::usd;
use gavel_llm::{
    AgentProfile, BilledAttempt, Call, CallProgress, OutputSchema, Provider, ProviderError,
    Request, Response, Role,
};
use serde::{Deserialize, Serialize};

mod attempts;
mod schema;

use attempts::{BilledRecord, Ledger};
use schema::Asking;

/// Hears about model calls while they run (the CLI's spinner).
pub trait CallObserver: Send + Sync {
    fn call_started(&self, role: Role, provider: &str);
    fn call_progress(&self, progress: CallProgress);
    fn call_finished(&self);
    /// The call was answered by another model than requested (shown live, not only in the
    /// artifact).
    fn call_warning(&self, role: Role, warning: &str) {
        let _ = (role, warning);
    }
}

/// A successful call.
pub struct Answered {
    pub response: Response,
    /// The blob holding `response.text`.
    pub text_blob: ContentHash,
    /// Set when another model answered than the one requested.
    pub warning: Option<String>,
}

/// What the journal keeps of a call. The answer's text and raw form are blobs of their own, so
/// the text is stored once (a verdict's artifact is the same blob) and compressed, instead of
/// twice and JSON-escaped inside the journal entry.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum JournaledCall {
    OutOfLine {
        text_blob: ContentHash,
        /// `None` when the raw answer is the text itself (or empty).
        raw_blob: Option<ContentHash>,
        /// Attempts answered and maybe billed before this answer, which failed (retried).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        billed_failures: Vec<BilledRecord>,
        /// The response with `text` and `raw` emptied.
        #[serde(flatten)]
        meta: Response,
    },
    /// A journal entry written before the answers moved out of line (schema version 1).
    Inline(Response),
}

/// A journaled call read back: see [`JournaledCall::load`].
type Loaded = (Response, ContentHash, ContentHash, Vec<BilledRecord>);

/// Why a journaled call step failed.
#[derive(Debug, thiserror::Error)]
enum CallFailure {
    #[error(transparent)]
    Provider(ProviderError),
}

impl JournaledCall {
    /// The journal entry for `response` and the blobs it names, to be stored with it in one
    /// transaction (only hashing happens here: the answer is paid for and not yet safe).
    fn prepare(mut response: Response, billed: Vec<BilledAttempt>) -> (Self, Vec<Vec<u8>>) {
        let text = std::mem::take(&mut response.text);
        let raw = std::mem::take(&mut response.raw);
        let text_blob = ContentHash::of(text.as_bytes());
        let mut blobs = Vec::with_capacity(2);
        let raw_blob = if raw.is_empty() || raw == text {
            None
        } else {
            let hash = ContentHash::of(raw.as_bytes());
            blobs.push(raw.into_bytes());
            Some(hash)
        };
        blobs.insert(0, text.into_bytes());
        let billed_failures = billed
            .into_iter()
            .map(|attempt| {
                let (record, raw) = BilledRecord::prepare(attempt);
                blobs.extend(raw);
                record
            })
            .collect();
        let entry = Self::OutOfLine {
            text_blob,
            raw_blob,
            billed_failures,
            meta: response,
        };
        (entry, blobs)
    }

    /// The whole response, the blob of its text, the blob of its raw answer, and the attempts
    /// billed before it.
    fn load(self, blobs: &Blobs<'_>) -> Result<Loaded, NodeError> {
        let text = |hash: &ContentHash| -> Result<String, NodeError> {
            String::from_utf8(blobs.get(hash)?).map_err(|_| {
                NodeError::Failed(format!("the journaled answer {hash} is not UTF-8 text"))
            })
        };
        match self {
            Self::OutOfLine {
                text_blob,
                raw_blob,
                billed_failures,
                mut meta,
            } => {
                meta.text = text(&text_blob)?;
                let raw_blob = match raw_blob {
                    Some(raw_blob) => {
                        meta.raw = text(&raw_blob)?;
                        raw_blob
                    }
                    None => text_blob.clone(),
                };
                Ok((meta, text_blob, raw_blob, billed_failures))
            }
            Self::Inline(response) => {
                let text_blob = blobs.put(response.text.as_bytes())?;
                let raw_blob = if response.raw.is_empty() {
                    text_blob.clone()
                } else {
                    blobs.put(response.raw.as_bytes())?
                };
                Ok((response, text_blob, raw_blob, Vec::new()))
            }
        }
    }
}

/// What a workflow's state keeps of its model calls: their count (the ledger's numbering), what
/// they cost, and the run's budget (defined in `gavel-core`, which lets the report read it).
pub use gavel_core::Spend;

/// How calls are made and accounted, the same for every workflow.
#[derive(Debug, Clone)]
pub struct CallerSettings {
    /// A budget given for this invocation (`--budget`), replacing the run's budget.
    pub budget_override: Option<u64>,
    /// Prices for cost accounting and budget estimates.
    pub prices: gavel_llm::PriceTable,
    /// Fail a call whose answering model is not the one requested (instead of warning).
    pub strict_models: bool,
    /// The output cap of every call.
    pub max_output_tokens: u32,
    /// The team's budget for a calendar month (UTC), over every run in the store
    /// (`[storage] team_budget_usd`).
    pub team_budget_micros: Option<u64>,
}

/// Makes one workflow's model calls.
pub struct ModelCaller<'a> {
    pub settings: &'a CallerSettings,
    /// Told about calls while they run (the CLI's spinner).
    pub observer: Option<Arc<dyn CallObserver>>,
    /// What the agent may do during the call (tools, folder, turns, MCP servers); text only
    /// unless the workflow asks for more.
    pub profile: AgentProfile,
    /// The JSON schema the answer should follow (a verdict's), asked of the service where the
    /// provider can; `None` asks for plain text. A role whose service refused it earlier in the
    /// run is asked in plain text (see the module doc).
    pub output_schema: Option<OutputSchema>,
}

impl ModelCaller<'_> {
    /// The halt for a call that would take the team over its monthly budget, if it would.
    fn over_team_budget(
        &self,
        cx: &NodeCtx<'_>,
        team: u64,
        model: &str,
        role: Role,
        prompt: &str,
    ) -> Result<Option<Transition>, NodeError> {
        let now = cx.clock().now_rfc3339();
        let month = now.get(..7).unwrap_or(&now);
        let spent = cx.spent_in_month(month)?;
        let prompt_tokens = gavel_llm::tokens::count(prompt);
        let max_output_tokens = self.settings.max_output_tokens;
        let Some(estimate) =
            self.settings
                .prices
                .cost_micros(model, prompt_tokens, u64::from(max_output_tokens))
        else {
            return Ok(Some(Transition::Halt {
                reason: format!(
                    "team budget {} is set but no price is known for model `{model}`; add it to [prices] in gavel.toml",
                    usd(team)
                ),
            }));
        };
        if spent.saturating_add(estimate) <= team {
            return Ok(None);
        }
        Ok(Some(Transition::Halt {
            reason: format!(
                "team budget: the {role} call would cost up to {} ({prompt_tokens} prompt tokens + {max_output_tokens} output tokens of `{model}`); the team has spent {} of {} in {month}, so it would exceed the budget; raise [storage] team_budget_usd, then `gavel resume RUN`",
                usd(estimate),
                usd(spent),
                usd(team)
            ),
        }))
    }

    /// Calls `provider` as `role`. `Ok(Err(t))`: the run halts with `t` (over budget, or the
    /// call failed after its retries); a failed call never produces an artifact. `parts` are
    /// the blobs the prompt was built from (the ledger stores it sharing them).
    #[allow(clippy::too_many_arguments)]
    pub fn call(
        &self,
        s: &mut Spend,
        cx: &mut NodeCtx<'_>,
        provider: &dyn Provider,
        role: Role,
        seq: u32,
        prompt: String,
        parts: &[ContentHash],
    ) -> Result<Result<Answered, Transition>, NodeError> {
        let model = provider.model();
        let max_output_tokens = self.settings.max_output_tokens;
        if let Some(budget) = self.settings.budget_override {
            s.budget_micros = Some(budget);
        }
        if let Some(budget) = s.budget_micros
            && !cx.has_step("call")?
        {
            let prompt_tokens = gavel_llm::tokens::count(&prompt);
            let Some(estimate) = self.settings.prices.cost_micros(
                &model,
                prompt_tokens,
                u64::from(max_output_tokens),
            ) else {
                return Ok(Err(Transition::Halt {
                    reason: format!(
                        "budget {} is set but no price is known for model `{model}`; add it to [prices] in gavel.toml",
                        usd(budget)
                    ),
                }));
            };
            if s.spent_micros + estimate > budget {
                return Ok(Err(Transition::Halt {
                    reason: format!(
                        "budget: the {role} call would cost up to {} ({prompt_tokens} prompt tokens + {max_output_tokens} output tokens of `{model}`); spent {} of {}, so it would exceed the budget; continue with `gavel resume RUN --budget USD`",
                        usd(estimate),
                        usd(s.spent_micros),
                        usd(budget)
                    ),
                }));
            }
        }
        if let Some(team) = self.settings.team_budget_micros
            && !cx.has_step("call")?
            && let Some(halt) = self.over_team_budget(cx, team, &model, role, &prompt)?
        {
            return Ok(Err(halt));
        }

        let cancel = cx.cancel().clone();
        let provider_name = provider.describe();
        let (asking, output_schema) =
            Asking::decide(s, self.output_schema.as_ref(), role, &provider_name);
        let request = Request {
            role,
            prompt: prompt.clone(),
            seq,
            step_id: cx.step_id("call"),
            max_output_tokens,
            profile: self.profile.clone(),
            output_schema,
        };
        let observer: Option<Arc<dyn CallObserver>> = self.observer.clone();
        // Attempts the provider reports as answered (and billed) but failed, for the ledger.
        let billed = RefCell::new(Vec::<BilledAttempt>::new());
        let progress = |p: CallProgress| {
            if let CallProgress::Billed(b) = &p {
                billed.borrow_mut().push((**b).clone());
            }
            if let Some(o) = &observer {
                o.call_progress(p);
            }
        };
        let cancelled = || cancel.is_cancelled();
        let replay = cx.has_step("call")?;
        if let (Some(o), false) = (&observer, replay) {
            o.call_started(role, &provider.describe());
        }
        let blobs = cx.blobs();
        // A replay returns the journaled answer: no new attempt, nothing lost.
        let attempt = if replay {
            None
        } else {
            Some(attempts::mark_attempt(cx)?)
        };
        tracing::info!(%role, provider = %provider.describe(), step = %request.step_id, replay, "model call");
        // The call's time is the model's, not gavel's (the run's account, `gavel show`).
        let stopwatch = cx.stopwatch();
        let result = cx.step_with_blobs("call", || {
            let response = stopwatch
                .time(Outside::Model, || {
                    provider.complete(
                        &request,
                        &Call {
                            cancelled: &cancelled,
                            progress: &progress,
                        },
                    )
                })
                .map_err(CallFailure::Provider)?;
            Ok::<_, CallFailure>(JournaledCall::prepare(response, billed.take()))
        });
        let mut failed_billed = 0;
        if let Err(StepError::Step(CallFailure::Provider(e))) = &result {
            tracing::warn!(%role, error = %e, "model call failed");
            if let Some(k) = attempt {
                // Failed, not lost; what was answered and billed on the way is kept with it.
                let kept = attempts::keep_billed(cx, billed.take())?;
                failed_billed = kept.len();
                attempts::mark_failed(cx, k, kept)?;
            }
        }
        if let (Some(o), false) = (&observer, replay) {
            o.call_finished();
        }
        let mut ledger = Ledger::new(self, cx, role, provider, &prompt, parts)?;
        for earlier in attempts::earlier(cx, attempt)? {
            ledger.record_earlier(s, cx, earlier)?;
        }
        let (response, text_blob, raw_blob, billed_on_the_way) = match result {
            Ok(journaled) => journaled.load(&blobs)?,
            Err(StepError::Step(CallFailure::Provider(ProviderError::Cancelled))) => {
                return Err(NodeError::Cancelled);
            }
            Err(StepError::Step(CallFailure::Provider(e @ ProviderError::Unavailable { .. }))) => {
                return Err(NodeError::Failed(format!(
                    "{role} {}: {e}",
                    provider.describe()
                )));
            }
            Err(StepError::Step(CallFailure::Provider(e))) => {
                let hint = e
                    .hint()
                    .map(|h| format!(" (hint: {h})"))
                    .unwrap_or_default();
                let billed = match failed_billed {
                    0 => String::new(),
                    n => format!(
                        "; {n} answered attempt(s) were billed and are in the ledger (`gavel show RUN`)"
                    ),
                };
                return Ok(Err(Transition::Halt {
                    reason: format!("{role} call failed: {e}{hint}{billed}"),
                }));
            }
            Err(StepError::Store(e)) => return Err(NodeError::Store(e)),
            Err(e) => return Err(NodeError::Failed(e.to_string())),
        };
        for record in billed_on_the_way {
            ledger.record_earlier(s, cx, attempts::Earlier::Billed(Box::new(record)))?;
        }

        let requested = if response.requested_model.is_empty() {
            model.clone()
        } else {
            response.requested_model.clone()
        };
        let warning = gavel_llm::verify::check(&requested, &response.model);
        if let (Some(o), Some(w), false) = (&observer, &warning, replay) {
            o.call_warning(role, w);
        }
        if let (Some(w), true) = (&warning, self.settings.strict_models) {
            return Err(NodeError::Failed(format!(
                "model verification failed for the {role} (strict_models = true): {w}"
            )));
        }
        let (cost_micros, cost_source) = self.cost(
            response.cost_usd.and_then(gavel_llm::price::usd_to_micros),
            &response.model,
            &requested,
            response.input_tokens,
            response.output_tokens,
        );
        s.call_count += 1;
        s.spent_micros += cost_micros.unwrap_or(0);
        let (form, refused_now) = asking.settle(s, response.form, role, &provider_name);
        let entry = CallLedger {
            n: s.call_count,
            requested_model: requested,
            input_tokens: response.input_tokens,
            output_tokens: response.output_tokens,
            cached_tokens: response.cached_tokens,
            cost_micros,
            cost_source: cost_source.into(),
            prompt: cx.put_blob_sharing(prompt.as_bytes(), parts)?,
            response: raw_blob,
            attempts: response.attempts,
            warning: warning.clone(),
            lost: false,
            credential: response.credential.clone(),
            quota_exhausted: response.quota_exhausted.clone(),
            form,
        };
        // Recorded once: a visit that halted after the call kept this event already.
        if !ledger.recorded(entry.n) {
            cx.event(EventKind::ModelCall {
                role: role.as_str().into(),
                provider: response.provider.clone(),
                model: response.model.clone(),
                ledger: Some(Box::new(entry)),
            });
            if refused_now {
                cx.event(EventKind::Note {
                    text: format!(
                        "the {role}'s service ({provider_name}) refused structured output: the call was asked in plain text, and so are the {role}'s later calls in this run"
                    ),
                });
            }
            if let Some(error) = &response.ended_with {
                cx.event(EventKind::Note {
                    text: format!(
                        "the {role}'s CLI ended with an error after the answer was handed in: {error}; the handed-in answer is used and the call is not made again"
                    ),
                });
            }
            // An agent's tool uses go in the timeline (journaled with the answer, so a replay
            // repeats them rather than the call).
            for used in &response.tool_uses {
                cx.event(EventKind::Note {
                    text: format!("the {role} used {}: {}", used.name, used.summary),
                });
            }
        }
        Ok(Ok(Answered {
            response,
            text_blob,
            warning,
        }))
    }

    /// What a call cost, and where the number came from: as reported, else priced from the
    /// table by the answering (or requested) model, else unknown.
    fn cost(
        &self,
        reported: Option<u64>,
        answered: &str,
        requested: &str,
        input: Option<u64>,
        output: Option<u64>,
    ) -> (Option<u64>, &'static str) {
        if let Some(c) = reported {
            return (Some(c), "reported");
        }
        let (Some(i), Some(o)) = (input, output) else {
            return (None, "unknown");
        };
        let prices = &self.settings.prices;
        match prices
            .cost_micros(answered, i, o)
            .or_else(|| prices.cost_micros(requested, i, o))
        {
            Some(c) => (Some(c), "price-table"),
            None => (None, "unknown"),
        }
    }
}
