//! `gavel show RUN`: a run's status and timeline (nodes, gates, model calls, artifacts).

use std::path::PathBuf;

use clap::Args;
use gavel_core::{EventKind, RunStatus, Store};
use serde::Serialize;

use super::runs::{RunRow, row};
use crate::context::Context;
use crate::driver::open_run;
use crate::error::CliError;
use crate::exit::Exit;
use crate::settings::Overrides;
use crate::ui::sanitize;

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The run's id (or slug).
    pub run: String,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Serialize)]
struct Shown {
    run: RunRow,
    checkpoints: usize,
    head_node: Option<String>,
    next_node: Option<String>,
    status: RunStatus,
    timeline: Vec<gavel_core::Event>,
}

pub fn cmd_show(args: &ShowArgs, state_dir: Option<PathBuf>) -> Result<Exit, CliError> {
    let ctx = Context::load(&Overrides {
        state_dir,
        ..Overrides::default()
    })?;
    let (store, record) = open_run(&ctx, &args.run)?;
    let id = record.id;
    let checkpoints = store.checkpoints(id)?;
    let head = checkpoints.last();
    let shown = Shown {
        run: row(&store, &ctx, &record)?,
        checkpoints: checkpoints.len(),
        head_node: head.and_then(|c| c.node.clone()),
        next_node: head.and_then(|c| c.next.clone()),
        status: record.status.clone(),
        timeline: store.events(id)?,
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
        ui.out(&format!(
            "continue:    gavel resume {id} --choice {}",
            gate.choice_names().join("|")
        ));
    }
    ui.out("timeline:");
    for e in &shown.timeline {
        ui.out(&format!("  {}  {}", e.at, sanitize(&line(&e.kind))));
    }
    Ok(Exit::Success)
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
        EventKind::Artifact { path } => format!("file    {path}"),
        EventKind::ModelCall {
            role,
            provider,
            model,
            ..
        } => format!("model   {role}: {provider} answered as {model}"),
        EventKind::Note { text } => format!("note    {text}"),
        EventKind::Halted { reason } => format!("halted  {reason}"),
        EventKind::Failed { error } => format!("failed  {error}"),
        EventKind::Done { summary } => format!("done    {summary}"),
        EventKind::Aborted { reason } => format!("aborted {reason}"),
    }
}
