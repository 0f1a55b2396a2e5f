//! The attempts behind one call, for the spend ledger: every attempt a provider answered goes
//! into it, whether gavel accepted it, retried it or failed the call.
//!
//! Each attempt of a node visit's call is marked in the journal before it starts
//! (`call-attempt-K`). One that fails is marked `call-failed-K`, with the attempts the provider
//! reported as answered and billed on the way ([`BilledAttempt`]: a CLI's error result with its
//! usage, such as Claude Code's `error_max_turns`); an answered call keeps them with its
//! journaled answer. An attempt marked but neither failed nor answered was lost to a kill.
//! Every visit derives the ledger entries from the journal in the same order, so each gets the
//! same number every time; a visit that halted kept its events, so a number already recorded
//! for the run is counted (in the state's call count and spend) but not recorded again.

use std::collections::BTreeSet;

use gavel_core::{CallLedger, ContentHash, EventKind, NodeCtx, NodeError};
use gavel_llm::{BilledAttempt, Provider, Role};
use serde::{Deserialize, Serialize};

use super::{ModelCaller, Spend};

/// A billed attempt as the journal keeps it: its raw answer is a blob of its own.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct BilledRecord {
    /// The attempt with `raw` emptied.
    #[serde(flatten)]
    pub attempt: BilledAttempt,
    pub raw_blob: Option<ContentHash>,
}

impl BilledRecord {
    /// The record for `attempt`, and the raw answer's bytes to store (if any).
    pub fn prepare(mut attempt: BilledAttempt) -> (Self, Option<Vec<u8>>) {
        let raw = std::mem::take(&mut attempt.raw);
        if raw.is_empty() {
            return (
                Self {
                    attempt,
                    raw_blob: None,
                },
                None,
            );
        }
        let hash = ContentHash::of(raw.as_bytes());
        let record = Self {
            attempt,
            raw_blob: Some(hash),
        };
        (record, Some(raw.into_bytes()))
    }
}

/// What `call-failed-K` holds (an older journal holds `null`: no billed attempts).
#[derive(Debug, Default, Serialize, Deserialize)]
struct Failed {
    #[serde(default)]
    billed: Vec<BilledRecord>,
}

/// An attempt before the call's answer that belongs in the ledger.
pub(super) enum Earlier {
    /// Started, never answered nor failed: gavel was killed meanwhile (attempt K, 0-based).
    Lost(u32),
    /// Answered and maybe billed, but failed.
    Billed(Box<BilledRecord>),
}

/// Journals that an attempt at this node visit's call starts (`call-attempt-K`), and returns K.
pub(super) fn mark_attempt(cx: &mut NodeCtx<'_>) -> Result<u32, NodeError> {
    let mut k = 0u32;
    while cx.has_step(&format!("call-attempt-{k}"))? {
        k += 1;
    }
    cx.mark(&format!("call-attempt-{k}"))?;
    Ok(k)
}

/// Stores the raw answers of `billed` as blobs (with the next journal write) and returns the
/// records naming them.
pub(super) fn keep_billed(
    cx: &NodeCtx<'_>,
    billed: Vec<BilledAttempt>,
) -> Result<Vec<BilledRecord>, NodeError> {
    billed
        .into_iter()
        .map(|attempt| {
            let (record, raw) = BilledRecord::prepare(attempt);
            if let Some(raw) = raw {
                cx.put_blob(&raw)?;
            }
            Ok(record)
        })
        .collect()
}

/// Journals that attempt `k` failed, with what it was billed for.
pub(super) fn mark_failed(
    cx: &mut NodeCtx<'_>,
    k: u32,
    billed: Vec<BilledRecord>,
) -> Result<(), NodeError> {
    let name = format!("call-failed-{k}");
    let kept: Result<Failed, _> = cx.step(&name, || {
        Ok::<_, std::convert::Infallible>(Failed { billed })
    });
    kept.map(drop).map_err(|e| match e {
        gavel_core::StepError::Store(s) => NodeError::Store(s),
        other => NodeError::Failed(other.to_string()),
    })
}

/// The attempts of this node visit's call that belong in the ledger before its answer, in
/// order: every failed one's billed attempts, and every lost one. `current` is the attempt
/// made now (`None` on a replay); it and, on a replay, the last attempt (the one that
/// answered) are not earlier attempts unless they failed.
pub(super) fn earlier(cx: &NodeCtx<'_>, current: Option<u32>) -> Result<Vec<Earlier>, NodeError> {
    let mut marked = 0u32;
    while cx.has_step(&format!("call-attempt-{marked}"))? {
        marked += 1;
    }
    let mut out = Vec::new();
    for k in 0..marked {
        match cx.journaled::<Option<Failed>>(&format!("call-failed-{k}"))? {
            Some(failed) => out.extend(
                failed
                    .unwrap_or_default()
                    .billed
                    .into_iter()
                    .map(|r| Earlier::Billed(Box::new(r))),
            ),
            // The attempt made now, or the one whose answer a replay re-uses.
            None if current == Some(k) || (current.is_none() && k + 1 == marked) => {}
            None => out.push(Earlier::Lost(k)),
        }
    }
    Ok(out)
}

/// Records one call's ledger entries, each once.
pub(super) struct Ledger<'c> {
    caller: &'c ModelCaller<'c>,
    role: Role,
    provider: String,
    model: String,
    prompt: String,
    parts: Vec<ContentHash>,
    /// The run's recorded call numbers (read only on a visit that may have recorded some).
    recorded: BTreeSet<u32>,
}

impl<'c> Ledger<'c> {
    pub fn new(
        caller: &'c ModelCaller<'c>,
        cx: &NodeCtx<'_>,
        role: Role,
        provider: &dyn Provider,
        prompt: &str,
        parts: &[ContentHash],
    ) -> Result<Self, NodeError> {
        // A first visit (one attempt, not a replay) cannot have recorded anything yet.
        let revisit = cx.has_step("call-attempt-1")? || cx.has_step("call")?;
        let recorded = if revisit {
            cx.recorded_calls()?
        } else {
            BTreeSet::new()
        };
        Ok(Self {
            caller,
            role,
            provider: provider.describe(),
            model: provider.model(),
            prompt: prompt.to_owned(),
            parts: parts.to_vec(),
            recorded,
        })
    }

    /// Whether call number `n` is in the run's ledger already.
    pub fn recorded(&self, n: u32) -> bool {
        self.recorded.contains(&n)
    }

    /// Counts `earlier` in the state and records it in the ledger unless it is there already.
    pub fn record_earlier(
        &mut self,
        s: &mut Spend,
        cx: &mut NodeCtx<'_>,
        earlier: Earlier,
    ) -> Result<(), NodeError> {
        let role = self.role;
        s.call_count += 1;
        let n = s.call_count;
        let (model, entry, note) = match earlier {
            Earlier::Lost(k) => (
                self.model.clone(),
                CallLedger {
                    n,
                    requested_model: self.model.clone(),
                    input_tokens: None,
                    output_tokens: None,
                    cached_tokens: None,
                    cost_micros: None,
                    cost_source: "unknown".into(),
                    prompt: cx.put_blob_sharing(self.prompt.as_bytes(), &self.parts)?,
                    response: cx.put_blob(b"")?,
                    attempts: 1,
                    warning: None,
                    lost: true,
                    credential: None,
                    quota_exhausted: Vec::new(),
                    form: None,
                },
                format!(
                    "the {role} call is made again: attempt {} was started, but gavel was killed before its answer was saved (the provider may have charged for it)",
                    k + 1
                ),
            ),
            Earlier::Billed(record) => {
                let BilledRecord {
                    attempt: a,
                    raw_blob,
                } = *record;
                let requested = if a.requested_model.is_empty() {
                    self.model.clone()
                } else {
                    a.requested_model.clone()
                };
                let answered = if a.model.is_empty() {
                    requested.clone()
                } else {
                    a.model.clone()
                };
                let (cost_micros, source) = self.caller.cost(
                    a.cost_micros,
                    &answered,
                    &requested,
                    a.input_tokens,
                    a.output_tokens,
                );
                s.spent_micros += cost_micros.unwrap_or(0);
                let response = match raw_blob {
                    Some(hash) => hash,
                    None => cx.put_blob(b"")?,
                };
                (
                    answered,
                    CallLedger {
                        n,
                        requested_model: requested,
                        input_tokens: a.input_tokens,
                        output_tokens: a.output_tokens,
                        cached_tokens: a.cached_tokens,
                        cost_micros,
                        cost_source: source.into(),
                        prompt: cx.put_blob_sharing(self.prompt.as_bytes(), &self.parts)?,
                        response,
                        attempts: 1,
                        warning: None,
                        lost: false,
                        credential: None,
                        quota_exhausted: Vec::new(),
                        form: None,
                    },
                    format!(
                        "the {role}'s call #{n} was answered but failed, and may be billed: {}",
                        a.error
                    ),
                )
            }
        };
        if self.recorded(n) {
            return Ok(());
        }
        cx.event(EventKind::ModelCall {
            role: role.as_str().into(),
            provider: self.provider.clone(),
            model,
            ledger: Some(Box::new(entry)),
        });
        cx.event(EventKind::Note { text: note });
        self.recorded.insert(n);
        Ok(())
    }
}
