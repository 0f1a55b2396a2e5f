//! The `gavel.toml` reference (docs/reference/configuration.md), generated from
//! `reference.toml` beside this file and each workflow section's own (`kinds/*/reference.toml`,
//! named by its registration): a description of every section and key, kept next to the
//! types serde reads them into. The tests below ask serde itself which fields each type has,
//! so a key added to a type without a description (or a description left behind by a removed
//! key) fails `cargo test`, and they compare the stated defaults with the code's constants;
//! tests/cli/reference.rs then fails when the committed page differs from what this generates.

use std::fmt::Write as _;

use serde::Deserialize;

use super::context::ContextConfig;
use super::credentials::{KeysConfig, LoginsConfig};
use super::storage::StorageConfig;
use super::tracker::TrackerConfig;
use super::workflows::WorkflowConfig;
use super::{ConfigFile, DiffGateConfig, LimitsConfig, PathsConfig, TimeoutsConfig};

/// The descriptions (`reference.toml`).
const DESCRIPTIONS: &str = include_str!("reference.toml");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Descriptions {
    section: Vec<Section>,
}

/// One `[section]` (the top level's header is empty).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Section {
    /// Dotted path of the header without brackets (`workflows.NAME.roles`); empty: top level.
    pub header: String,
    pub doc: String,
    pub keys: Vec<Key>,
}

/// One key of a section.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Key {
    /// The key as written (`NAME` where any name goes: a table's entries).
    pub name: String,
    /// Its TOML type.
    #[serde(rename = "type")]
    pub ty: String,
    /// What applies when it is absent.
    pub default: String,
    pub doc: String,
}

/// Every section of `gavel.toml`, in the order the reference lists them: the shared ones, then
/// each workflow family's own (its registration's `reference.toml`).
pub(crate) fn sections() -> Vec<Section> {
    // Compiled in, and parsed by the tests below: a bad edit fails `cargo test`, not a user.
    let mut all = toml::from_str::<Descriptions>(DESCRIPTIONS)
        .expect("settings/reference.toml parses")
        .section;
    for s in crate::kinds::sections() {
        let own = toml::from_str::<Descriptions>(s.reference)
            .unwrap_or_else(|e| panic!("the [{}] section's reference.toml: {e}", s.table));
        all.extend(own.section);
    }
    all
}

/// What [`fields_of`] answers for one type.
type Fields = fn() -> &'static [&'static str];

/// The sections that are structs, with the type serde reads each into; the other sections are
/// tables of any names (`[roles]`, `[prices]`, ...).
#[cfg_attr(not(test), allow(dead_code))]
#[rustfmt::skip]
const STRUCTS: &[(&str, Fields)] = &[
    ("", fields_of::<ConfigFile>), ("workflows.NAME", fields_of::<WorkflowConfig>),
    ("context", fields_of::<ContextConfig>),
    ("limits", fields_of::<LimitsConfig>), ("timeouts", fields_of::<TimeoutsConfig>),
    ("diff_gate", fields_of::<DiffGateConfig>), ("keys", fields_of::<KeysConfig>),
    ("logins", fields_of::<LoginsConfig>), ("tracker", fields_of::<TrackerConfig>),
    ("paths", fields_of::<PathsConfig>),
    ("storage", fields_of::<StorageConfig>),
];

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

/// The reference page, in Markdown.
pub fn markdown() -> String {
    let mut out = String::from(
        "# gavel.toml reference\n\n\
         <!-- Generated from crates/gavel-cli/src/settings/reference.toml and the workflow sections'\n\
         crates/gavel-cli/src/kinds/*/reference.toml; do not edit. Update with\n\
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
    use crate::settings::{DEFAULT_DRAFTER, DEFAULT_MAX_ITERATIONS, DEFAULT_REVIEWER};

    /// The tables of any names: no struct behind them, so nothing to compare.
    const FREE_FORM: &[&str] = &["roles", "workflows.NAME.roles", "prices", "changes.roles"];

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
        let own = crate::kinds::sections();
        let structs: Vec<(&str, Fields)> = STRUCTS
            .iter()
            .copied()
            .chain(own.iter().map(|s| (s.table, s.fields)))
            .collect();
        for section in &sections {
            let fields = structs.iter().find(|(h, _)| *h == section.header);
            let Some(read) = fields.map(|(_, fields)| fields()) else {
                assert!(
                    FREE_FORM.contains(&section.header.as_str()),
                    "[{}]: which type is it? add it to `STRUCTS`",
                    section.header
                );
                continue;
            };
            let mut read: BTreeSet<&str> = read.iter().copied().collect();
            // The top level also has each workflow family's own table.
            if section.header.is_empty() {
                read.extend(own.iter().map(|s| s.table));
            }
            assert!(!read.is_empty(), "[{}]: no fields read", section.header);
            let mut described: BTreeSet<&str> =
                section.keys.iter().map(|k| k.name.as_str()).collect();
            for other in &sections {
                if let Some(child) = child_of(&other.header, &section.header) {
                    described.insert(child);
                }
            }
            assert_eq!(
                read, described,
                "[{}]: the fields serde reads (left) and reference.toml describes (right) differ",
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

    /// The defaults the code holds as constants are the ones the reference states.
    #[test]
    fn the_stated_defaults_are_the_code_s() {
        let llm = gavel_llm::RetryPolicy::default();
        let tracker = gavel_tracker::github::RetryPolicy::default();
        let quoted = |s: &str| format!("\"{s}\"");
        let (context, pg) = (
            gavel_context::ContextSettings::default(),
            gavel_store::DEFAULT_PG_RECONNECT,
        );
        let ms = |d: std::time::Duration| d.as_millis().to_string();
        let expected = [
            ("roles.drafter", quoted(DEFAULT_DRAFTER)),
            ("roles.reviewer", quoted(DEFAULT_REVIEWER)),
            ("context.max_tokens", context.max_tokens.to_string()),
            ("limits.max_iterations", DEFAULT_MAX_ITERATIONS.to_string()),
            (
                "limits.max_output_tokens",
                gavel_llm::DEFAULT_MAX_OUTPUT_TOKENS.to_string(),
            ),
            ("limits.retries", llm.max_retries.to_string()),
            ("limits.retry_delay_ms", ms(llm.base_delay)),
            (
                "diff_gate.audit_log",
                quoted(gavel_diffgate::DEFAULT_AUDIT_LOG),
            ),
            (
                "tracker.timeout_secs",
                tracker.timeout.as_secs().to_string(),
            ),
            ("tracker.retries", tracker.retries.to_string()),
            ("tracker.retry_delay_ms", ms(tracker.base_delay)),
            (
                "changes.root",
                quoted(gavel_workflows::change::DEFAULT_ROOT),
            ),
            ("storage.reconnect_secs", pg.as_secs().to_string()),
        ];
        let sections = sections();
        for (key, default) in expected {
            let (header, name) = key.rsplit_once('.').unwrap_or(("", key));
            let stated = sections
                .iter()
                .filter(|s| s.header == header)
                .flat_map(|s| &s.keys)
                .find(|k| k.name == name)
                .map(|k| k.default.as_str());
            assert_eq!(stated, Some(default.as_str()), "[{header}] {name}");
        }
        let change_roles = sections.iter().filter(|s| s.header == "changes.roles");
        for k in change_roles.flat_map(|s| &s.keys) {
            let builtin =
                crate::kinds::role_defaults(gavel_workflows::change::plan::WORKFLOW).builtin;
            let code = builtin(&k.name).map(quoted);
            assert_eq!(
                Some(&k.default),
                code.as_ref(),
                "[changes.roles] {}",
                k.name
            );
        }
    }
}
