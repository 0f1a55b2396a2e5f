//! The `gavel.toml` reference (docs/reference/configuration.md), generated from a description
//! of every section and key kept here, beside the types serde reads them into. The tests below
//! ask serde itself which fields each type has, so a key added to a type without a description
//! (or a description left behind by a removed key) fails `cargo test`; the reference test in
//! tests/cli/reference.rs then fails when the committed page differs from what this generates.

use std::fmt::Write as _;

use super::changes::ChangesConfig;
use super::context::ContextConfig;
use super::credentials::{KeysConfig, LoginsConfig};
use super::implement::ImplementConfig;
use super::storage::StorageConfig;
use super::tracker::TrackerConfig;
use super::workflows::WorkflowConfig;
use super::{
    ConfigFile, DEFAULT_DRAFTER, DEFAULT_MAX_ITERATIONS, DEFAULT_REVIEWER, DiffGateConfig,
    LimitsConfig, PathsConfig, TimeoutsConfig,
};

/// One key of a section.
pub(crate) struct Key {
    /// The key as written (`NAME` where any name goes: a table's entries).
    pub name: &'static str,
    /// Its TOML type.
    pub ty: &'static str,
    /// What applies when it is absent.
    pub default: String,
    pub doc: &'static str,
}

/// One `[section]` (the top level's header is empty).
pub(crate) struct Section {
    /// Dotted path of the header without brackets (`workflows.NAME.roles`); empty: top level.
    pub header: &'static str,
    pub doc: &'static str,
    /// The fields serde reads this section into, for a section that is a struct (the test
    /// compares them with [`Section::keys`] and the sections nested under it); `None`: a table
    /// of any names.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fields: Option<fn() -> &'static [&'static str]>,
    pub keys: Vec<Key>,
}

fn key(name: &'static str, ty: &'static str, default: impl Into<String>, doc: &'static str) -> Key {
    Key {
        name,
        ty,
        default: default.into(),
        doc,
    }
}

/// The fields of the struct `T` deserializes as, as serde's derive lists them.
pub(crate) fn fields_of<'de, T: serde::Deserialize<'de>>() -> &'static [&'static str] {
    use serde::de::{self, Visitor};

    struct Grab<'a>(&'a mut &'static [&'static str]);
    impl<'de> de::Deserializer<'de> for Grab<'_> {
        type Error = de::value::Error;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(de::Error::custom("not a struct"))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _name: &'static str,
            fields: &'static [&'static str],
            _visitor: V,
        ) -> Result<V::Value, Self::Error> {
            *self.0 = fields;
            Err(de::Error::custom("fields read"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
            option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
            ignored_any
        }
    }
    let mut fields: &'static [&'static str] = &[];
    let _ = T::deserialize(Grab(&mut fields));
    fields
}

/// Every section of `gavel.toml`, in the order the reference lists them.
pub(crate) fn sections() -> Vec<Section> {
    let llm_retry = gavel_llm::RetryPolicy::default();
    let tracker_retry = gavel_tracker::github::RetryPolicy::default();
    let context = gavel_context::ContextSettings::default();
    vec![
        Section {
            header: "",
            doc: "Keys outside any section.",
            fields: Some(fields_of::<ConfigFile>),
            keys: vec![key(
                "strict_models",
                "bool",
                "false",
                "`true`: a model other than the one asked for answering fails the call. Otherwise it is a WARNING in the artifact and in `gavel show`.",
            )],
        },
        Section {
            header: "roles",
            doc: "Role name → provider string, for every workflow that has the role (issue, lld, implement). The change workflows take theirs from `[changes.roles]`. A command's `--role ROLE=PROVIDER` wins over both.",
            fields: None,
            keys: vec![
                key(
                    "drafter",
                    "string",
                    DEFAULT_DRAFTER,
                    "Who writes the drafts.",
                ),
                key(
                    "reviewer",
                    "string",
                    DEFAULT_REVIEWER,
                    "Who judges them against the rubric.",
                ),
                key(
                    "implementer",
                    "string",
                    "the drafter's",
                    "`gavel implement`'s agent.",
                ),
                key(
                    "NAME",
                    "string",
                    "none",
                    "Any other role a workflow asks for.",
                ),
            ],
        },
        Section {
            header: "workflows.NAME",
            doc: "One workflow's own settings (`issue`, `lld`, `implement`, `change-plan`, `change-impl`), over the global ones.",
            fields: Some(fields_of::<WorkflowConfig>),
            keys: vec![
                key(
                    "max_iterations",
                    "integer",
                    "`[limits] max_iterations`",
                    "The most drafts (or iterations) a run of this workflow makes before it halts; at least 1.",
                ),
                key(
                    "lineage",
                    "string",
                    "`[paths] lineage`",
                    "Its lineage folder, repository-relative.",
                ),
                key(
                    "ideas",
                    "string",
                    "`[paths] ideas`",
                    "Its ideas folder, repository-relative.",
                ),
                key(
                    "template",
                    "string",
                    "the workflow's built-in path",
                    "The template its drafter fills in.",
                ),
                key(
                    "drafter_reads_repo",
                    "bool",
                    "false",
                    "`true`: an agent-CLI drafter runs in the repository with read-only tools.",
                ),
            ],
        },
        Section {
            header: "workflows.NAME.roles",
            doc: "Role name → provider string for this workflow only, over `[roles]` (and `[changes.roles]`).",
            fields: None,
            keys: vec![key(
                "NAME",
                "string",
                "`[roles]`'s",
                "The provider of role NAME.",
            )],
        },
        Section {
            header: "implement",
            doc: "`gavel implement` and `gavel change impl`: the test and lint commands and the box they run in.",
            fields: Some(fields_of::<ImplementConfig>),
            keys: vec![
                key(
                    "test",
                    "string",
                    "none (`--test-cmd` gives it)",
                    "The test command: shell words, run without a shell.",
                ),
                key(
                    "lint",
                    "string",
                    "none: the lint step is skipped (and recorded as skipped)",
                    "The lint command.",
                ),
                key(
                    "runner",
                    "string",
                    "detected from the test command",
                    "How the test command's exit is read: `pytest`, `cargo`, `node`, `go` or `generic`.",
                ),
                key(
                    "test_files",
                    "list of strings",
                    "the runner's conventions",
                    "Test files, as gitignore-style globs, over the runner's conventions.",
                ),
                key(
                    "timeout_secs",
                    "integer",
                    "300",
                    "The longest a test or lint run may take (then its whole process group is killed); at least 1.",
                ),
                key(
                    "retries",
                    "integer",
                    "3",
                    "Retries of the scaffold step and of the implementation step, each.",
                ),
                key(
                    "sandbox",
                    "string",
                    "\"landlock\"",
                    "`landlock`: agents, tests and lint run in the box; `none` only if you accept the risk.",
                ),
                key(
                    "pass_env",
                    "list of strings",
                    "none: the box's allowlist alone",
                    "More variables the tests, lint and agent CLIs may see: names, or prefixes ending in `*`. gavel's own secrets are refused; a key, token or password variable reaches an agent CLI only, never a test.",
                ),
                key(
                    "test_network",
                    "bool",
                    "false",
                    "`true`: tests and lint may use the network (the timeline says so); otherwise only their own loopback.",
                ),
            ],
        },
        Section {
            header: "context",
            doc: "What `--context` may give a model.",
            fields: Some(fields_of::<ContextConfig>),
            keys: vec![
                key(
                    "max_tokens",
                    "integer",
                    context.max_tokens.to_string(),
                    "The most tokens (o200k) all context files together may have; at least 1.",
                ),
                key(
                    "deny",
                    "list of strings",
                    "none: the built-in secret names alone",
                    "`.gitignore`-style patterns of files never to send, over the built-in secret names.",
                ),
            ],
        },
        Section {
            header: "limits",
            doc: "Iterations, spend and retries of model calls.",
            fields: Some(fields_of::<LimitsConfig>),
            keys: vec![
                key(
                    "max_iterations",
                    "integer",
                    DEFAULT_MAX_ITERATIONS.to_string(),
                    "The most drafts per run before it halts; at least 1.",
                ),
                key(
                    "budget_usd",
                    "float",
                    "none: no budget",
                    "The default budget of a run, in USD; `--budget` overrides it.",
                ),
                key(
                    "max_output_tokens",
                    "integer",
                    gavel_llm::DEFAULT_MAX_OUTPUT_TOKENS.to_string(),
                    "The output cap of every model call (also used by the budget estimate).",
                ),
                key(
                    "retries",
                    "integer",
                    llm_retry.max_retries.to_string(),
                    "Retries of a transiently failed call.",
                ),
                key(
                    "retry_delay_ms",
                    "integer",
                    llm_retry.base_delay.as_millis().to_string(),
                    "The first backoff; it doubles, with jitter, and a `retry-after` wins.",
                ),
            ],
        },
        Section {
            header: "timeouts",
            doc: "How long a model call may take.",
            fields: Some(fields_of::<TimeoutsConfig>),
            keys: vec![
                key(
                    "idle_secs",
                    "integer",
                    "120",
                    "No output from a call for this long: it is killed (its process group) and retried; at least 1.",
                ),
                key(
                    "total_secs",
                    "integer",
                    "600",
                    "The longest a call may take; at least 1.",
                ),
            ],
        },
        Section {
            header: "diff_gate",
            doc: "The diff review gate (`gavel diff-gate`, and every code-committing workflow's).",
            fields: Some(fields_of::<DiffGateConfig>),
            keys: vec![
                key(
                    "approval_timeout_secs",
                    "integer",
                    "1800",
                    "No `approve` within this long: the diff gate rejects; at least 1.",
                ),
                key(
                    "audit_log",
                    "string",
                    format!("\"{}\"", gavel_diffgate::DEFAULT_AUDIT_LOG),
                    "Every decision, one JSON line each, repository-relative; commit it.",
                ),
            ],
        },
        Section {
            header: "keys",
            doc: "Variables holding API keys, per HTTP provider kind. Several variables rotate when one's quota runs out. Only names go here, never keys.",
            fields: Some(fields_of::<KeysConfig>),
            keys: vec![
                key(
                    "anthropic",
                    "string or list of strings",
                    "\"ANTHROPIC_API_KEY\"",
                    "For `anthropic:` providers.",
                ),
                key(
                    "google",
                    "string or list of strings",
                    "\"GEMINI_API_KEY\"",
                    "For `google:` providers.",
                ),
                key(
                    "openai",
                    "string or list of strings",
                    "\"OPENAI_API_KEY\"",
                    "For `openai:` providers.",
                ),
                key(
                    "openai_compatible",
                    "string or list of strings",
                    "none: no key is sent",
                    "For `openai-compatible:` providers (a compatible server only gets a key named here).",
                ),
            ],
        },
        Section {
            header: "logins",
            doc: "Agent-CLI logins to rotate through: config folders (absolute or `~/…`) or variables holding an API key.",
            fields: Some(fields_of::<LoginsConfig>),
            keys: vec![
                key(
                    "claude",
                    "string or list of strings",
                    "the CLI's own sign-in",
                    "Claude Code: `CLAUDE_CONFIG_DIR` folders, or key variables.",
                ),
                key(
                    "gemini",
                    "string or list of strings",
                    "the CLI's own sign-in",
                    "Gemini CLI: `GEMINI_CLI_HOME` folders, or key variables.",
                ),
                key(
                    "codex",
                    "string or list of strings",
                    "the CLI's own sign-in",
                    "Codex: `CODEX_HOME` folders, or key variables.",
                ),
            ],
        },
        Section {
            header: "prices",
            doc: "USD per million tokens by model name, added to (or overriding) the built-in table: `\"llama3.1\" = { input = 0.0, output = 0.0 }`.",
            fields: None,
            keys: vec![key(
                "NAME",
                "table: `input`, `output` (floats)",
                "the built-in list prices",
                "The price of the models NAME matches.",
            )],
        },
        Section {
            header: "tracker",
            doc: "Where approved issues are filed (see the configuration chapter's \"Trackers\").",
            fields: Some(fields_of::<TrackerConfig>),
            keys: vec![
                key(
                    "kind",
                    "string",
                    "\"local\"",
                    "`local` or `github`; `gavel issue --tracker KIND` overrides it.",
                ),
                key(
                    "dir",
                    "string",
                    "\"docs/issues\"",
                    "local: where issues are kept, repository-relative.",
                ),
                key(
                    "repo",
                    "string",
                    "from the `origin` remote",
                    "github: `owner/name`.",
                ),
                key(
                    "api_url",
                    "string",
                    "the remote host's API",
                    "github: the REST API base (GitHub Enterprise Server: `https://HOST/api/v3`).",
                ),
                key(
                    "timeout_secs",
                    "integer",
                    tracker_retry.timeout.as_secs().to_string(),
                    "github: the longest one request may take; at least 1.",
                ),
                key(
                    "retries",
                    "integer",
                    tracker_retry.retries.to_string(),
                    "github: retries of a request that failed in a way that may pass.",
                ),
                key(
                    "retry_delay_ms",
                    "integer",
                    tracker_retry.base_delay.as_millis().to_string(),
                    "github: the first backoff (doubles).",
                ),
            ],
        },
        Section {
            header: "changes",
            doc: "Spec-driven changes (`gavel change`, `gavel mcp`).",
            fields: Some(fields_of::<ChangesConfig>),
            keys: vec![
                key(
                    "root",
                    "string",
                    format!("\"{}\"", gavel_workflows::change::DEFAULT_ROOT),
                    "Where `changes/ID/`, `changes/archive/` and `specs/` live (OpenSpec's layout), repository-relative.",
                ),
                key(
                    "planning_iterations",
                    "integer",
                    "3",
                    "Challenge rounds of `gavel change plan` before you are asked; at least 1.",
                ),
                key(
                    "implementation_iterations",
                    "integer",
                    "3",
                    "Review rounds of `gavel change impl` before you are asked; at least 1.",
                ),
                key(
                    "retries",
                    "integer",
                    "2",
                    "Extra attempts of a planner or challenger answer that was refused.",
                ),
            ],
        },
        Section {
            header: "changes.roles",
            doc: "Role name → provider string for the change workflows (`[roles]` does not apply); the challenger should differ from the planner.",
            fields: None,
            keys: vec![
                key(
                    "planner",
                    "string",
                    "\"gemini:2.5-pro\"",
                    "Writes the proposal, delta specs and tasks.",
                ),
                key(
                    "challenger",
                    "string",
                    "\"codex:gpt-5-codex\"",
                    "Challenges the plan.",
                ),
                key(
                    "implementer",
                    "string",
                    "\"claude:sonnet\"",
                    "`gavel change impl`'s agent (`[implement]` sets its tests, lint and sandbox).",
                ),
                key(
                    "reviewer",
                    "string",
                    "\"codex:gpt-5-codex\"",
                    "Reviews the implementation.",
                ),
            ],
        },
        Section {
            header: "paths",
            doc: "Where every workflow's lineage and ideas folders are, unless `[workflows.NAME]` says otherwise.",
            fields: Some(fields_of::<PathsConfig>),
            keys: vec![
                key(
                    "lineage",
                    "string",
                    "\"docs/lineage\"",
                    "`active/{slug}/` and `done/{issue#}-{slug}/`, repository-relative.",
                ),
                key(
                    "ideas",
                    "string",
                    "\"ideas\"",
                    "`active/` and `done/`, repository-relative.",
                ),
            ],
        },
        Section {
            header: "storage",
            doc: "Where runs are kept: `state.db` (SQLite) in the state folder, or a PostgreSQL database a team shares.",
            fields: Some(fields_of::<StorageConfig>),
            keys: vec![
                key(
                    "fsync",
                    "bool",
                    "false",
                    "`true`: every checkpoint and artifact is also synced to disk, so an OS crash or power loss loses nothing either (a killed gavel loses nothing either way).",
                ),
                key(
                    "url",
                    "string",
                    "none: SQLite",
                    "`postgres://...`: keep runs in this PostgreSQL database. `GAVEL_DATABASE_URL` wins over it; the password belongs there or in `PGPASSWORD`, never in this file.",
                ),
                key(
                    "project",
                    "string",
                    "from the `origin` remote",
                    "The project this clone's runs belong to in a shared database.",
                ),
                key(
                    "reconnect_secs",
                    "integer",
                    gavel_store::DEFAULT_PG_RECONNECT.as_secs().to_string(),
                    "How long a call waits for a database server that went away (restart, failover).",
                ),
                key(
                    "team_budget_usd",
                    "float",
                    "none: no team budget",
                    "What every run in the store may spend on model calls in a calendar month (UTC).",
                ),
            ],
        },
    ]
}

/// The reference page, in Markdown.
pub fn markdown() -> String {
    let mut out = String::from(
        "# gavel.toml reference\n\n\
         <!-- Generated from crates/gavel-cli/src/settings/reference.rs; do not edit. Update with\n\
         GAVEL_UPDATE_REFERENCE=1 cargo test -p gavel-cli --test cli reference -->\n\n\
         Every section and key of `gavel.toml`, at the repository root. Every key is optional;\n\
         an unknown key is an error that names it. The configuration chapter explains them with\n\
         an example.\n",
    );
    for section in sections() {
        let title = if section.header.is_empty() {
            "Top level".to_owned()
        } else {
            format!("`[{}]`", section.header)
        };
        let _ = write!(out, "\n## {title}\n\n{}\n\n", section.doc);
        out.push_str("| key | type | default | meaning |\n|---|---|---|---|\n");
        for k in &section.keys {
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {} |",
                k.name,
                k.ty,
                k.default.replace('|', "\\|"),
                k.doc.replace('|', "\\|")
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// `header`'s last segment (`roles` of `changes.roles`), if it sits directly under `parent`.
    fn child_of<'a>(header: &'a str, parent: &str) -> Option<&'a str> {
        let rest = if parent.is_empty() {
            header
        } else {
            header.strip_prefix(parent)?.strip_prefix('.')?
        };
        let first = rest.split('.').next()?;
        // `workflows.NAME` is the `workflows` field of the top level.
        (!rest.is_empty() && (rest == first || rest.strip_prefix(first) == Some(".NAME")))
            .then_some(first)
    }

    #[test]
    fn every_field_serde_reads_is_described_and_nothing_else() {
        let sections = sections();
        for section in &sections {
            let Some(fields) = section.fields else {
                continue;
            };
            let read: BTreeSet<&str> = fields().iter().copied().collect();
            assert!(!read.is_empty(), "[{}]: no fields read", section.header);
            let mut described: BTreeSet<&str> = section.keys.iter().map(|k| k.name).collect();
            for other in &sections {
                if let Some(child) = child_of(other.header, section.header) {
                    described.insert(child);
                }
            }
            assert_eq!(
                read, described,
                "[{}]: the fields serde reads (left) and the reference describes (right) differ; \
                 describe every key in settings/reference.rs",
                section.header
            );
        }
    }

    #[test]
    fn the_price_table_s_entries_are_what_the_reference_says() {
        assert_eq!(fields_of::<gavel_llm::Price>(), ["input", "output"]);
    }

    #[test]
    fn every_key_has_a_type_a_default_and_a_meaning() {
        for section in sections() {
            assert!(!section.doc.is_empty());
            for k in &section.keys {
                assert!(
                    !k.ty.is_empty() && !k.default.is_empty() && k.doc.ends_with('.'),
                    "[{}] {}",
                    section.header,
                    k.name
                );
            }
        }
    }
}
