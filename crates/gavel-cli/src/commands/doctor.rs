//! `gavel doctor`: which agent CLIs are installed (and their versions), which API keys are set,
//! which configured CLI logins can be used, what each role resolves to, and what is missing,
//! with the fix for each.

use clap::Args;
use gavel_llm::cli::logins::login_env;
use gavel_llm::tools::{self, CLI_TOOLS};
use gavel_llm::{Provider, ProviderSpec};
use serde::Serialize;

use crate::context::Context;
use crate::error::CliError;
use crate::exit::Exit;
use crate::settings::TrackerKind;
use crate::ui::sanitize;

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Serialize)]
struct CliRow {
    name: &'static str,
    program: &'static str,
    path: Option<String>,
    version: Option<String>,
    fix: Option<String>,
}

#[derive(Debug, Serialize)]
struct KeyRow {
    variable: String,
    set: bool,
    used_by: String,
}

#[derive(Debug, Serialize)]
struct LoginRow {
    /// The login's name: its folder or its key variable.
    login: String,
    usable: bool,
    /// Why it cannot be used (no such folder, variable not set).
    problem: Option<String>,
    used_by: String,
}

#[derive(Debug, Serialize)]
struct RoleRow {
    /// The workflow the role belongs to (`issue`, `lld`): each may set its own roles.
    workflow: &'static str,
    role: &'static str,
    provider: String,
    ready: bool,
    /// Whether the role must be ready for doctor to pass (a change workflow's roles only
    /// count in a repository that has changes).
    required: bool,
    problem: Option<String>,
    fix: Option<String>,
}

#[derive(Debug, Serialize)]
struct TrackerRow {
    kind: &'static str,
    /// What the tracker files to (`github (octo/app)`, `local (docs/issues)`).
    tracker: String,
    ready: bool,
    /// What is wrong, with what to do.
    problem: Option<String>,
}

#[derive(Debug, Serialize)]
struct StoreRow {
    /// Where runs are kept: the SQLite file, or the database (password hidden) and project.
    store: String,
    ready: bool,
    problem: Option<String>,
}

#[derive(Debug, Serialize)]
struct Report {
    clis: Vec<CliRow>,
    keys: Vec<KeyRow>,
    logins: Vec<LoginRow>,
    roles: Vec<RoleRow>,
    tracker: TrackerRow,
    store: StoreRow,
    /// gavel worktrees that no unfinished run uses (a finished or aborted run's leftovers).
    leftover_worktrees: Vec<String>,
    /// Things that work but defeat a purpose (a reviewer that is its own author).
    warnings: Vec<String>,
}

pub fn cmd_doctor(args: &DoctorArgs, ctx: Context) -> Result<Exit, CliError> {
    let clis: Vec<CliRow> = CLI_TOOLS
        .iter()
        .map(|t| {
            let found = tools::probe(t);
            CliRow {
                name: t.name,
                program: t.program,
                path: found.as_ref().map(|f| f.path.display().to_string()),
                version: found.as_ref().and_then(|f| f.version.clone()),
                fix: found.is_none().then(|| t.install()),
            }
        })
        .collect();
    let s = &ctx.settings;
    let keys: Vec<KeyRow> = ["anthropic", "google", "openai", "openai-compatible"]
        .into_iter()
        .flat_map(|kind| {
            let variables = s.key_env.get(kind).cloned().unwrap_or_else(|| {
                tools::default_key_env(kind)
                    .map(String::from)
                    .into_iter()
                    .collect()
            });
            variables.into_iter().map(move |variable| {
                let set = std::env::var(&variable).is_ok_and(|v| !v.trim().is_empty());
                (variable, set, kind)
            })
        })
        .fold(Vec::<KeyRow>::new(), |mut rows, (variable, set, kind)| {
            match rows.iter_mut().find(|r| r.variable == variable) {
                Some(r) => r.used_by.push_str(&format!(", {kind}:*")),
                None => rows.push(KeyRow {
                    variable,
                    set,
                    used_by: format!("{kind}:*"),
                }),
            }
            rows
        });
    let lookup = |name: &str| std::env::var(name).ok();
    let logins: Vec<LoginRow> = CLI_TOOLS
        .iter()
        .flat_map(|t| {
            let configured = s.logins.get(t.kind).cloned().unwrap_or_default();
            configured.into_iter().map(move |login| {
                let problem = login_env(t, &login, &lookup).err();
                LoginRow {
                    login: login.name(),
                    usable: problem.is_none(),
                    problem,
                    used_by: format!("{}:*", t.kind),
                }
            })
        })
        .collect();
    // Every workflow's roles ([workflows.NAME.roles] may differ from [roles]), as each kind
    // in the registry names them (an author and, for most, a judge).
    let mut roles: Vec<RoleRow> = Vec::new();
    let mut warnings: Vec<String> = Vec::new();
    for kind in crate::kinds::all() {
        let Some(wanted) = kind.doctor_roles(s) else {
            continue;
        };
        let workflow = kind.name();
        let names: Vec<&'static str> = std::iter::once(wanted.author).chain(wanted.judge).collect();
        let specs: Vec<_> = names
            .iter()
            .map(|role| (*role, s.role(workflow, role)))
            .collect();
        for (role, spec) in &specs {
            let mut row = match spec {
                Ok(spec) => role_row(workflow, role, spec, ctx.provider(spec).as_ref()),
                Err(e) => RoleRow {
                    workflow,
                    role,
                    provider: String::new(),
                    ready: false,
                    required: wanted.required,
                    problem: Some(e.message.clone()),
                    fix: Some(format!(
                        "set the role in gavel.toml ({} {role} or [workflows.{workflow}.roles])",
                        wanted.section
                    )),
                },
            };
            row.required = wanted.required;
            roles.push(row);
        }
        if let [(author, Ok(a)), (judge, Ok(j))] = specs.as_slice()
            && let Some(warning) = gavel_workflows::roles::same_model_warning(
                judge,
                &j.to_string(),
                author,
                &a.to_string(),
            )
        {
            let warning = format!("{workflow}: {warning}");
            if !warnings.contains(&warning) {
                warnings.push(warning);
            }
        }
    }
    let tracker = tracker_row(&ctx);
    let store = store_row(&ctx);
    let leftover_worktrees = leftover_worktrees(&ctx);
    let ready = roles.iter().all(|r| r.ready || !r.required) && tracker.ready && store.ready;
    let report = Report {
        clis,
        keys,
        logins,
        roles,
        tracker,
        store,
        leftover_worktrees,
        warnings,
    };
    if args.json {
        ctx.ui.out(
            &serde_json::to_string_pretty(&report).map_err(|e| CliError::error(e.to_string()))?,
        );
    } else {
        print(&ctx, &report);
    }
    Ok(if ready { Exit::Success } else { Exit::Error })
}

/// gavel's worktrees (under `.gavel/worktrees/`) that no unfinished run uses, each with the
/// commands that remove it. Reads the state database only if it exists.
fn leftover_worktrees(ctx: &Context) -> Vec<String> {
    let git = gavel_workflows::git::Git::at(&ctx.settings.repo_root);
    let Ok(worktrees) = git.worktrees() else {
        return Vec::new();
    };
    if worktrees.is_empty() {
        return Vec::new();
    }
    let in_use: Vec<String> = ctx
        .open_existing_store()
        .ok()
        .flatten()
        .and_then(|store| store.runs().ok())
        .unwrap_or_default()
        .into_iter()
        .filter(|r| !r.status.is_terminal())
        .map(|r| r.slug)
        .collect();
    worktrees
        .into_iter()
        .filter(|w| !in_use.contains(&w.name))
        .map(|w| {
            let branch = w.branch.clone().unwrap_or_default();
            format!(
                "{} ({}) belongs to no unfinished run; remove it with `git worktree remove --force {}` and `git branch -D {branch}`",
                w.path.display(),
                if branch.is_empty() { "detached" } else { &branch },
                w.path.display()
            )
        })
        .collect()
}

/// The store check: the SQLite file (made by the first run when missing), or the shared
/// PostgreSQL database reached, its schema brought up to date, and this clone's project known.
fn store_row(ctx: &Context) -> StoreRow {
    let sqlite = || ctx.settings.db_path().display().to_string();
    match ctx.open_existing_store() {
        Ok(Some(store)) => StoreRow {
            store: store.describe(),
            ready: true,
            problem: None,
        },
        Ok(None) => StoreRow {
            store: format!("{} (made by the first run)", sqlite()),
            ready: true,
            problem: None,
        },
        Err(e) => StoreRow {
            store: match &ctx.settings.backend {
                crate::settings::storage::Backend::Sqlite => sqlite(),
                crate::settings::storage::Backend::Postgres { url, .. } => {
                    gavel_store::redact_url(url)
                }
            },
            ready: false,
            problem: Some(
                std::iter::once(e.message.clone())
                    .chain(e.hints.iter().cloned())
                    .collect::<Vec<_>>()
                    .join("; "),
            ),
        },
    }
}

/// The tracker check: GitHub's pre-flight (token, repository, permission to file), run as
/// the issue workflow runs it; the local tracker needs nothing (its folder is made when the
/// first issue is filed), so doctor changes nothing in the repository.
fn tracker_row(ctx: &Context) -> TrackerRow {
    let kind = ctx.settings.tracker.kind;
    let tracker = match crate::tracker::build(&ctx.settings, None) {
        Ok(t) => t,
        Err(e) => {
            return TrackerRow {
                kind: kind.name(),
                tracker: kind.name().into(),
                ready: false,
                problem: Some(
                    std::iter::once(e.message.clone())
                        .chain(e.hints.iter().cloned())
                        .collect::<Vec<_>>()
                        .join("; "),
                ),
            };
        }
    };
    let problem = match kind {
        TrackerKind::Local => None,
        _ => tracker.check().err().map(|e| e.to_string()),
    };
    TrackerRow {
        kind: kind.name(),
        tracker: tracker.describe(),
        ready: problem.is_none(),
        problem,
    }
}

fn role_row(
    workflow: &'static str,
    role: &'static str,
    spec: &ProviderSpec,
    provider: &dyn Provider,
) -> RoleRow {
    match provider.preflight() {
        Ok(()) => RoleRow {
            workflow,
            role,
            provider: spec.to_string(),
            ready: true,
            required: true,
            problem: None,
            fix: None,
        },
        Err(e) => RoleRow {
            workflow,
            role,
            provider: spec.to_string(),
            ready: false,
            required: true,
            problem: Some(e.to_string()),
            fix: e.hint().map(String::from).or_else(|| {
                tools::cli_tool(spec.kind()).map(|t| format!("{}; {}", t.install(), t.login))
            }),
        },
    }
}

fn print(ctx: &Context, r: &Report) {
    let ui = &ctx.ui;
    ui.out("Agent CLIs:");
    for c in &r.clis {
        match (&c.path, &c.version) {
            (Some(p), v) => ui.out(&format!(
                "  ok       {:<12} {} ({p})",
                c.name,
                sanitize(v.as_deref().unwrap_or("version unknown"))
            )),
            (None, _) => ui.out(&format!(
                "  missing  {:<12} fix: {}",
                c.name,
                c.fix.as_deref().unwrap_or_default()
            )),
        }
    }
    ui.out("API keys:");
    for k in &r.keys {
        let state = if k.set { "set    " } else { "not set" };
        ui.out(&format!(
            "  {state}  {:<20} used by {}",
            k.variable, k.used_by
        ));
    }
    if !r.logins.is_empty() {
        ui.out("CLI logins:");
        for l in &r.logins {
            let state = if l.usable { "usable  " } else { "unusable" };
            let problem = l
                .problem
                .as_ref()
                .map(|p| format!(" ({p})"))
                .unwrap_or_default();
            ui.out(&format!(
                "  {state} {} used by {}{problem}",
                sanitize(&l.login),
                l.used_by
            ));
        }
    }
    ui.out("Roles:");
    for role in &r.roles {
        if role.ready {
            ui.out(&format!(
                "  ready    {:<14} = {}",
                format!("{} {}", role.workflow, role.role),
                role.provider
            ));
        } else {
            let label = if role.required {
                "NOT READY"
            } else {
                "not ready"
            };
            ui.out(&format!(
                "  {label} {:<13} = {}: {}{}",
                format!("{} {}", role.workflow, role.role),
                role.provider,
                sanitize(role.problem.as_deref().unwrap_or_default()),
                if role.required {
                    ""
                } else {
                    " (no changes in this repository yet, so not counted)"
                }
            ));
            if let Some(fix) = &role.fix {
                ui.out(&format!("           fix: {fix}"));
            }
        }
    }
    ui.out("Tracker:");
    match &r.tracker.problem {
        None => ui.out(&format!("  ready    {}", sanitize(&r.tracker.tracker))),
        Some(p) => ui.out(&format!(
            "  NOT READY {}: {}",
            sanitize(&r.tracker.tracker),
            sanitize(p)
        )),
    }
    ui.out("Store:");
    match &r.store.problem {
        None => ui.out(&format!("  ready    {}", sanitize(&r.store.store))),
        Some(p) => ui.out(&format!(
            "  NOT READY {}: {}",
            sanitize(&r.store.store),
            sanitize(p)
        )),
    }
    for w in &r.leftover_worktrees {
        ui.out(&format!("leftover worktree: {}", sanitize(w)));
    }
    for w in &r.warnings {
        ui.out(&format!("warning: {w}"));
    }
}
