//! `[keys]` and `[logins]` of gavel.toml: which credentials each provider kind rotates through.
//!
//! `[keys]` names, per HTTP provider kind, the variable holding its API key, or a list of them
//! (`anthropic = ["ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY_2"]`). `[logins]` names, per agent
//! CLI, its logins: a config folder (absolute or `~/...`) or a variable holding an API key
//! (`claude = ["~/.claude-work", "CLAUDE_KEY_2"]`). Only names are configured here, never a
//! key: an entry that cannot be a variable's name is refused without being echoed, in case it
//! is a pasted key.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use gavel_llm::Login;
use gavel_llm::credentials::is_variable_name;
use serde::Deserialize;
use serde::de::{self, Deserializer, SeqAccess, Visitor};

use crate::error::CliError;

/// A string or a list of strings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OneOrMany(pub Vec<String>);

impl<'de> Deserialize<'de> for OneOrMany {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Strings;
        impl<'de> Visitor<'de> for Strings {
            type Value = OneOrMany;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or a list of strings")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<OneOrMany, E> {
                Ok(OneOrMany(vec![v.to_owned()]))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<OneOrMany, A::Error> {
                let mut all = Vec::new();
                while let Some(s) = seq.next_element::<String>()? {
                    all.push(s);
                }
                Ok(OneOrMany(all))
            }
        }
        deserializer.deserialize_any(Strings)
    }
}

/// `[keys]`: variables holding API keys, per HTTP provider kind (defaults: the vendors' names).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeysConfig {
    anthropic: Option<OneOrMany>,
    google: Option<OneOrMany>,
    openai: Option<OneOrMany>,
    openai_compatible: Option<OneOrMany>,
}

/// `[logins]`: logins per agent CLI (default: the CLI's own sign-in).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoginsConfig {
    claude: Option<OneOrMany>,
    gemini: Option<OneOrMany>,
    codex: Option<OneOrMany>,
}

/// The key variables per provider kind (`openai-compatible` spelled as in provider strings).
pub fn key_env(keys: &KeysConfig) -> Result<BTreeMap<String, Vec<String>>, CliError> {
    let mut out = BTreeMap::new();
    for (key, kind, list) in [
        ("anthropic", "anthropic", &keys.anthropic),
        ("google", "google", &keys.google),
        ("openai", "openai", &keys.openai),
        (
            "openai_compatible",
            "openai-compatible",
            &keys.openai_compatible,
        ),
    ] {
        let Some(OneOrMany(entries)) = list else {
            continue;
        };
        let what = format!("[keys] {key}");
        let mut vars = Vec::new();
        for (i, entry) in entries.iter().enumerate() {
            if !is_variable_name(entry.trim()) {
                return Err(not_a_name(&what, i, entries.len()).hint(
                    "name the environment variable that holds the key (letters, digits and _), \
                     never the key itself",
                ));
            }
            push_once(&mut vars, entry.trim().to_owned());
        }
        if vars.is_empty() {
            return Err(CliError::error(format!("{what} lists no variable")));
        }
        out.insert(kind.to_owned(), vars);
    }
    Ok(out)
}

/// The logins per CLI kind; `~` is `home`.
pub fn logins(
    config: &LoginsConfig,
    home: Option<&Path>,
) -> Result<BTreeMap<String, Vec<Login>>, CliError> {
    let mut out = BTreeMap::new();
    for (kind, list) in [
        ("claude", &config.claude),
        ("gemini", &config.gemini),
        ("codex", &config.codex),
    ] {
        let Some(OneOrMany(entries)) = list else {
            continue;
        };
        let what = format!("[logins] {kind}");
        let mut found = Vec::new();
        for (i, entry) in entries.iter().enumerate() {
            let entry = entry.trim();
            let login = if entry == "~" || entry.starts_with("~/") {
                let home = home.ok_or_else(|| {
                    CliError::error(format!("{what}: `~` needs HOME, which is not set"))
                })?;
                Login::Folder(home.join(entry.trim_start_matches('~').trim_start_matches('/')))
            } else if entry.starts_with('/') {
                Login::Folder(PathBuf::from(entry))
            } else if is_variable_name(entry) {
                Login::KeyVar(entry.to_owned())
            } else {
                return Err(not_a_name(&what, i, entries.len()).hint(
                    "a login is a folder (absolute, or starting with ~/) or the name of the \
                     environment variable holding an API key, never the key itself",
                ));
            };
            push_once(&mut found, login);
        }
        if found.is_empty() {
            return Err(CliError::error(format!("{what} lists no login")));
        }
        out.insert(kind.to_owned(), found);
    }
    Ok(out)
}

/// The error for entry `i` of `n` that is not what it should be (the entry is not shown: it
/// may be a key).
fn not_a_name(what: &str, i: usize, n: usize) -> CliError {
    let which = if n == 1 {
        String::new()
    } else {
        format!(" (entry {})", i + 1)
    };
    CliError::error(format!("{what}{which} is not a valid name"))
}

fn push_once<T: PartialEq>(list: &mut Vec<T>, item: T) {
    if !list.contains(&item) {
        list.push(item);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(toml_text: &str) -> Result<BTreeMap<String, Vec<String>>, CliError> {
        key_env(&toml::from_str(toml_text).expect("parses"))
    }

    fn logins_of(toml_text: &str) -> Result<BTreeMap<String, Vec<Login>>, CliError> {
        logins(
            &toml::from_str(toml_text).expect("parses"),
            Some(Path::new("/home/p")),
        )
    }

    #[test]
    fn a_key_variable_may_be_one_name_or_a_list() {
        let k = keys(
            "anthropic = \"ANTHROPIC_API_KEY\"\n\
             google = [\"GEMINI_API_KEY\", \"GEMINI_API_KEY_2\", \"GEMINI_API_KEY\"]\n\
             openai_compatible = \"LOCAL_KEY\"\n",
        )
        .expect("valid");
        assert_eq!(k["anthropic"], ["ANTHROPIC_API_KEY"]);
        assert_eq!(k["google"], ["GEMINI_API_KEY", "GEMINI_API_KEY_2"]);
        assert_eq!(k["openai-compatible"], ["LOCAL_KEY"]);
        assert!(!k.contains_key("openai"));
        assert!(keys("anthropic = []\n").is_err());
    }

    #[test]
    fn a_pasted_key_is_refused_without_being_echoed() {
        let secret = "sk-ant-api03-SECRETSECRET";
        for text in [
            format!("anthropic = [\"ANTHROPIC_API_KEY\", \"{secret}\"]\n"),
            format!("anthropic = \"{secret}\"\n"),
        ] {
            let e = keys(&text).expect_err("not a variable name");
            assert!(e.message.contains("[keys] anthropic"), "{}", e.message);
            let shown = format!("{} {:?}", e.message, e.hints);
            assert!(!shown.contains(secret), "{shown}");
        }
        let e = logins_of(&format!("claude = [\"{secret}\"]\n")).expect_err("not a login");
        assert!(!format!("{} {:?}", e.message, e.hints).contains(secret));
    }

    #[test]
    fn logins_are_folders_or_key_variables() {
        let l = logins_of(
            "claude = [\"~/.claude-work\", \"/srv/claude-2\", \"CLAUDE_KEY_3\"]\n\
             gemini = \"~\"\n",
        )
        .expect("valid");
        assert_eq!(
            l["claude"],
            [
                Login::Folder(PathBuf::from("/home/p/.claude-work")),
                Login::Folder(PathBuf::from("/srv/claude-2")),
                Login::KeyVar("CLAUDE_KEY_3".into()),
            ]
        );
        assert_eq!(l["gemini"], [Login::Folder(PathBuf::from("/home/p"))]);
        // A relative folder would depend on where gavel runs: refused.
        assert!(logins_of("codex = [\"codex-home\"]\n").is_err());
    }
}
