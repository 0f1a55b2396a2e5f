//! `gavel show RUN`: a run's status and timeline (nodes, gates, model calls, artifacts).

use clap::Args;
use std::collections::BTreeMap;

use gavel_core::{EventKind, RunId, RunStatus, Store, TimeSpent};
use serde::Serialize;

use super::runs::{RunRow, row};
use crate::context::Context;
use crate::driver::open_run;
use crate::error::CliError;
use crate::exit::Exit;
use crate::ledger::{self, CallRow, Totals};
use crate::ui::sanitize;

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The run's id (or slug).
    pub run: String,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Show model call N of the run: its prompt and raw answer.
    #[arg(long, value_name = "N")]
    pub call: Option<u32>,
}

#[derive(Debug, Serialize)]
struct Shown {
    run: RunRow,
    checkpoints: usize,
    head_node: Option<String>,
    next_node: Option<String>,
    status: RunStatus,
    spend: Totals,
    spend_by_role: BTreeMap<String, Totals>,
    /// Where the run's time went, summed over its drives (absent for a run no gavel kept an
    /// account of).
    time: Option<ShownTime>,
    calls: Vec<CallRow>,
    timeline: Vec<gavel_core::Event>,
}

/// The run's [`TimeSpent`], with gavel's own share worked out.
#[derive(Debug, Serialize)]
struct ShownTime {
    #[serde(flatten)]
    spent: TimeSpent,
    own_ms: u64,
}

/// `gavel show RUN --call N --json`.
#[derive(Debug, Serialize)]
struct ShownCall {
    call: CallRow,
    prompt: String,
    response: String,
}

pub fn cmd_show(args: &ShowArgs, ctx: Context) -> Result<Exit, CliError> {
    let (store, record) = open_run(&ctx, &args.run)?;
    let id = record.id;
    let timeline = store.events(id)?;
    let calls = ledger::calls(&timeline);
    if let Some(n) = args.call {
        return show_call(&ctx, &*store, id, &calls, n, args.json);
    }
    let (spend, spend_by_role) = ledger::totals(&calls);
    let time = TimeSpent::of_events(&timeline).map(|spent| ShownTime {
        own_ms: spent.own_ms(),
        spent,
    });
    let checkpoints = store.checkpoints(id)?;
    let head = checkpoints.last();
    let shown = Shown {
        run: row(&*store, &record)?,
        checkpoints: checkpoints.len(),
        head_node: head.and_then(|c| c.node.clone()),
        next_node: head.and_then(|c| c.next.clone()),
        status: record.status.clone(),
        spend,
        spend_by_role,
        time,
        calls,
        timeline,
    };
    if args.json {
        ctx.ui.out(
            &serde_json::to_string_pretty(&shown).map_err(|e| CliError::error(e.to_string()))?,
        );
        return Ok(Exit::Success);
    }
    let ui = &ctx.ui;
    ui.out(&format!(
        "run {} · {} · {}",
        id,
        shown.run.workflow,
        sanitize(&shown.run.slug)
    ));
    ui.out(&format!(
        "status:      {} — {}",
        shown.run.status,
        sanitize(&shown.run.detail)
    ));
    ui.out(&format!("created:     {}", record.created_at));
    ui.out(&format!("updated:     {}", record.updated_at));
    ui.out(&format!(
        "checkpoints: {} (next node: {})",
        shown.checkpoints,
        shown.next_node.as_deref().unwrap_or("none")
    ));
    if let RunStatus::Waiting { gate } = &record.status {
        ui.out(&format!(
            "waiting at:  gate {} — {}",
            gate.id,
            sanitize(&gate.title)
        ));
        // What the gate asks a person to read (the diff gate's report with every diff).
        for artifact in gate.artifacts.iter().filter(|a| !a.is_empty()) {
            ui.out(&format!("read:        {}", sanitize(artifact)));
        }
        // The commands `gavel resume` accepts at this gate (a typed word only in a terminal).
        for l in crate::driver::continue_lines(id, gate) {
            ui.out(&l);
        }
    }
    ui.out(&format!("spend:       {}", shown.spend.summary()));
    for (role, t) in &shown.spend_by_role {
        ui.out(&format!("  {role:<10} {}", t.summary()));
    }
    if let Some(t) = &shown.time {
        ui.out(&format!("time:        {}", t.spent.describe()));
    }
    if !shown.calls.is_empty() {
        ui.out("calls:");
        for c in &shown.calls {
            let cost = c
                .ledger
                .cost_micros
                .map_or_else(|| "unpriced".to_owned(), gavel_llm::price::usd);
            let retries = if c.ledger.attempts > 1 {
                format!(", {} attempts", c.ledger.attempts)
            } else {
                String::new()
            };
            ui.out(&format!(
                "  #{} {:<8} {} → {} · {} in / {} out · {cost} ({}){retries}",
                c.ledger.n,
                c.role,
                sanitize(&c.ledger.requested_model),
                sanitize(&c.model),
                c.ledger.input_tokens.unwrap_or(0),
                c.ledger.output_tokens.unwrap_or(0),
                c.ledger.cost_source
            ));
            if let Some(w) = &c.ledger.warning {
                ui.out(&format!(
                    "     WARNING: model verification failed: {}",
                    sanitize(w)
                ));
            }
            if c.ledger.lost {
                ui.out("     LOST: started, but gavel was killed before the answer was saved; made again (the provider may have charged for it)");
            }
            if let Some(line) = credential_line(&c.ledger) {
                ui.out(&format!("     {line}"));
            }
            if let Some(form) = form_text(&c.ledger) {
                ui.out(&format!("     answer form: {form}"));
            }
        }
        ui.out(&format!(
            "  (prompt and answer of call N: gavel show {id} --call N)"
        ));
    }
    ui.out("timeline:");
    for e in &shown.timeline {
        ui.out(&format!("  {}  {}", e.at, sanitize(&line(&e.kind))));
    }
    Ok(Exit::Success)
}

fn show_call(
    ctx: &Context,
    store: &dyn Store,
    id: RunId,
    calls: &[CallRow],
    n: u32,
    json: bool,
) -> Result<Exit, CliError> {
    let Some(call) = calls.iter().find(|c| c.ledger.n == n) else {
        return Err(CliError::error(format!(
            "run {id} has no model call #{n} (it has {})",
            calls.len()
        ))
        .hint(format!("`gavel show {id}` lists its calls")));
    };
    let text = |h: &gavel_core::ContentHash| -> Result<String, CliError> {
        let bytes = store.get_blob(h)?.ok_or_else(|| {
            CliError::error(format!("blob {h} of call #{n} is missing from the store"))
        })?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    };
    let shown = ShownCall {
        call: call.clone(),
        prompt: text(&call.ledger.prompt)?,
        response: text(&call.ledger.response)?,
    };
    if json {
        ctx.ui.out(
            &serde_json::to_string_pretty(&shown).map_err(|e| CliError::error(e.to_string()))?,
        );
        return Ok(Exit::Success);
    }
    let ui = &ctx.ui;
    ui.out(&format!(
        "run {id} · call #{n} · {} · {} → {}",
        call.role,
        sanitize(&call.ledger.requested_model),
        sanitize(&call.model)
    ));
    if let Some(w) = &call.ledger.warning {
        ui.out(&format!(
            "WARNING: model verification failed: {}",
            sanitize(w)
        ));
    }
    if let Some(line) = credential_line(&call.ledger) {
        ui.out(&line);
    }
    if let Some(form) = form_text(&call.ledger) {
        ui.out(&format!("answer form: {form}"));
    }
    ui.out(&format!("==== prompt ({}) ====", call.ledger.prompt));
    ui.out(&sanitize(&shown.prompt));
    ui.out(&format!("==== raw answer ({}) ====", call.ledger.response));
    ui.out(&sanitize(&shown.response));
    Ok(Exit::Success)
}

/// `credential NAME`, and the credentials whose quota ran out before it answered.
fn credential_line(ledger: &gavel_core::CallLedger) -> Option<String> {
    let name = ledger.credential.as_deref()?;
    let rotated = if ledger.quota_exhausted.is_empty() {
        String::new()
    } else {
        format!(
            " (after quota exhausted: {})",
            sanitize(&ledger.quota_exhausted.join(", "))
        )
    };
    Some(format!("credential {}{rotated}", sanitize(name)))
}

/// How a call that wanted a structured answer (a verdict) asked for it: `schema`, `plain` (the
/// provider has no way to ask) or `plain after the server refused structured output`; `None`
/// for a call that wanted plain text.
fn form_text(ledger: &gavel_core::CallLedger) -> Option<String> {
    let name = ledger.form.as_deref()?;
    let form = serde_json::from_value::<gavel_llm::AnswerForm>(serde_json::Value::from(name));
    Some(match form {
        Ok(form) => form.as_str().to_owned(),
        // Written by a newer gavel.
        Err(_) => sanitize(name),
    })
}

fn line(kind: &EventKind) -> String {
    match kind {
        EventKind::Node {
            node,
            next: Some(next),
            seq,
        } => format!("node    {node} → {next} (checkpoint {seq})"),
        EventKind::Node {
            node,
            next: None,
            seq,
        } => format!("node    {node} → end (checkpoint {seq})"),
        EventKind::GateWaiting { gate, kind } => format!("gate    {gate} waiting ({kind})"),
        EventKind::GateAnswered { gate, choice, by } => {
            format!("gate    {gate} answered `{choice}` by {by}")
        }
        EventKind::Artifact { path, .. } => format!("file    {path}"),
        EventKind::ModelCall {
            role,
            provider,
            model,
            ledger,
        } => {
            let form = ledger
                .as_deref()
                .and_then(form_text)
                .map(|f| format!(" · answer form: {f}"))
                .unwrap_or_default();
            format!("model   {role}: {provider} answered as {model}{form}")
        }
        EventKind::Note { text } => format!("note    {text}"),
        EventKind::Halted { reason } => format!("halted  {reason}"),
        EventKind::Failed { error } => format!("failed  {error}"),
        EventKind::Done { summary } => format!("done    {summary}"),
        EventKind::Aborted { reason } => format!("aborted {reason}"),
        EventKind::Time(t) => format!("time    this drive: {}", t.describe()),
        EventKind::Unknown { event, .. } => format!("unknown `{event}` (from a newer gavel)"),
        other => format!("event   {other:?}"),
    }
}
