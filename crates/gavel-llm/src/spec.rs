//! Provider strings such as `claude:opus` or `scripted:demo.yaml`.
//!
//! Workflows, config files and the command line all name a model provider with one short string.
//! This module is the single place that parses and validates those strings, so a typo is reported
//! once, up front, with the list of valid forms, instead of surfacing as a failed call halfway
//! through a run.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// Every form a provider string may take, listed in error messages.
pub const VALID_FORMS: &str = "claude:MODEL, gemini:MODEL, codex:MODEL, anthropic:MODEL, \
                               google:MODEL, openai:MODEL, openai-compatible:MODEL@BASE_URL, \
                               scripted:FILE";

/// A parsed, validated provider string.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProviderSpec {
    /// `claude:MODEL`: the Claude Code CLI.
    Claude { model: String },
    /// `gemini:MODEL`: the Gemini CLI.
    Gemini { model: String },
    /// `codex:MODEL`: the Codex CLI.
    Codex { model: String },
    /// `anthropic:MODEL`: the Anthropic HTTP API.
    Anthropic { model: String },
    /// `google:MODEL`: the Google Gemini HTTP API.
    Google { model: String },
    /// `openai:MODEL`: the OpenAI HTTP API.
    OpenAi { model: String },
    /// `openai-compatible:MODEL@BASE_URL`: any server speaking the OpenAI wire format.
    OpenAiCompatible { model: String, base_url: String },
    /// `scripted:FILE`: the offline provider that answers from a YAML script.
    Scripted { path: PathBuf },
}

impl ProviderSpec {
    /// The part before the `:`, e.g. `"claude"` or `"openai-compatible"`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Claude { .. } => "claude",
            Self::Gemini { .. } => "gemini",
            Self::Codex { .. } => "codex",
            Self::Anthropic { .. } => "anthropic",
            Self::Google { .. } => "google",
            Self::OpenAi { .. } => "openai",
            Self::OpenAiCompatible { .. } => "openai-compatible",
            Self::Scripted { .. } => "scripted",
        }
    }

    /// The model name (without the base URL), or the script path for `scripted`.
    pub fn model(&self) -> String {
        match self {
            Self::Claude { model }
            | Self::Gemini { model }
            | Self::Codex { model }
            | Self::Anthropic { model }
            | Self::Google { model }
            | Self::OpenAi { model }
            | Self::OpenAiCompatible { model, .. } => model.clone(),
            Self::Scripted { path } => path.display().to_string(),
        }
    }
}

impl fmt::Display for ProviderSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::OpenAiCompatible { model, base_url } => {
                write!(f, "{}:{model}@{base_url}", self.kind())
            }
            Self::Scripted { path } => write!(f, "{}:{}", self.kind(), path.display()),
            _ => write!(f, "{}:{}", self.kind(), self.model()),
        }
    }
}

/// Why a provider string was rejected. Every message quotes the string and lists [`VALID_FORMS`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpecError {
    #[error("the provider string is empty; valid forms: {forms}", forms = VALID_FORMS)]
    Empty,
    #[error(
        "provider {input:?} has no `:` between kind and model; valid forms: {forms}",
        forms = VALID_FORMS
    )]
    MissingColon { input: String },
    #[error(
        "provider {input:?} has unknown kind {kind:?}; valid forms: {forms}",
        forms = VALID_FORMS
    )]
    UnknownKind { input: String, kind: String },
    #[error("provider {input:?} names no model; valid forms: {forms}", forms = VALID_FORMS)]
    EmptyModel { input: String },
    #[error(
        "provider {input:?} has whitespace or control characters in its model name; \
         valid forms: {forms}",
        forms = VALID_FORMS
    )]
    InvalidModel { input: String },
    #[error(
        "provider {input:?} names no script file; valid forms: {forms}",
        forms = VALID_FORMS
    )]
    EmptyPath { input: String },
    #[error(
        "provider {input:?} has control characters or surrounding whitespace in its file name; \
         valid forms: {forms}",
        forms = VALID_FORMS
    )]
    InvalidPath { input: String },
    #[error("provider {input:?}: {reason}; valid forms: {forms}", forms = VALID_FORMS)]
    BadBaseUrl { input: String, reason: String },
}

impl FromStr for ProviderSpec {
    type Err = SpecError;

    fn from_str(input: &str) -> Result<Self, SpecError> {
        if input.is_empty() {
            return Err(SpecError::Empty);
        }
        let Some((kind, rest)) = input.split_once(':') else {
            return Err(SpecError::MissingColon {
                input: input.to_owned(),
            });
        };
        let model = || parse_model(input, rest);
        Ok(match kind {
            "claude" => Self::Claude { model: model()? },
            "gemini" => Self::Gemini { model: model()? },
            "codex" => Self::Codex { model: model()? },
            "anthropic" => Self::Anthropic { model: model()? },
            "google" => Self::Google { model: model()? },
            "openai" => Self::OpenAi { model: model()? },
            "openai-compatible" => parse_openai_compatible(input, rest)?,
            "scripted" => Self::Scripted {
                path: parse_path(input, rest)?,
            },
            _ => {
                return Err(SpecError::UnknownKind {
                    input: input.to_owned(),
                    kind: kind.to_owned(),
                });
            }
        })
    }
}

fn parse_model(input: &str, model: &str) -> Result<String, SpecError> {
    if model.is_empty() {
        return Err(SpecError::EmptyModel {
            input: input.to_owned(),
        });
    }
    if model.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(SpecError::InvalidModel {
            input: input.to_owned(),
        });
    }
    Ok(model.to_owned())
}

fn parse_path(input: &str, path: &str) -> Result<PathBuf, SpecError> {
    if path.is_empty() {
        return Err(SpecError::EmptyPath {
            input: input.to_owned(),
        });
    }
    // Spaces inside a file name are legal; leading/trailing ones are almost always a typo.
    if path.chars().any(char::is_control) || path.trim() != path {
        return Err(SpecError::InvalidPath {
            input: input.to_owned(),
        });
    }
    Ok(PathBuf::from(path))
}

/// Splits `MODEL@BASE_URL` at the first `@` that starts an `http://` or `https://` URL, so a URL
/// with user info (`https://user@host`) still parses.
fn parse_openai_compatible(input: &str, rest: &str) -> Result<ProviderSpec, SpecError> {
    let bad_url = |reason: String| SpecError::BadBaseUrl {
        input: input.to_owned(),
        reason,
    };
    let split = ["@http://", "@https://"]
        .iter()
        .filter_map(|marker| rest.find(marker))
        .min();
    let Some(at) = split else {
        return Err(match rest.rsplit_once('@') {
            Some((_, url)) => bad_url(format!(
                "base URL {url:?} must start with http:// or https://"
            )),
            None => bad_url("missing `@BASE_URL` after the model".to_owned()),
        });
    };
    let model = parse_model(input, &rest[..at])?;
    let base_url = &rest[at + 1..];
    if base_url
        .chars()
        .any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(bad_url(format!(
            "base URL {base_url:?} contains whitespace or control characters"
        )));
    }
    let after_scheme = base_url.split_once("://").map_or("", |(_, after)| after);
    if after_scheme.split('/').next().is_none_or(str::is_empty) {
        return Err(bad_url(format!("base URL {base_url:?} has no host")));
    }
    Ok(ProviderSpec::OpenAiCompatible {
        model,
        base_url: base_url.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<ProviderSpec, SpecError> {
        s.parse()
    }

    #[test]
    fn every_valid_form_parses_and_round_trips() {
        let cases = [
            (
                "claude:opus",
                ProviderSpec::Claude {
                    model: "opus".into(),
                },
                "claude",
                "opus",
            ),
            (
                "gemini:gemini-2.5-pro",
                ProviderSpec::Gemini {
                    model: "gemini-2.5-pro".into(),
                },
                "gemini",
                "gemini-2.5-pro",
            ),
            (
                "codex:gpt-5-codex",
                ProviderSpec::Codex {
                    model: "gpt-5-codex".into(),
                },
                "codex",
                "gpt-5-codex",
            ),
            (
                "anthropic:claude-sonnet-4-5",
                ProviderSpec::Anthropic {
                    model: "claude-sonnet-4-5".into(),
                },
                "anthropic",
                "claude-sonnet-4-5",
            ),
            (
                "google:gemini-2.5-flash",
                ProviderSpec::Google {
                    model: "gemini-2.5-flash".into(),
                },
                "google",
                "gemini-2.5-flash",
            ),
            (
                "openai:gpt-5",
                ProviderSpec::OpenAi {
                    model: "gpt-5".into(),
                },
                "openai",
                "gpt-5",
            ),
            (
                "openai-compatible:llama3.1:8b@http://localhost:11434/v1",
                ProviderSpec::OpenAiCompatible {
                    model: "llama3.1:8b".into(),
                    base_url: "http://localhost:11434/v1".into(),
                },
                "openai-compatible",
                "llama3.1:8b",
            ),
            (
                "scripted:demo.yaml",
                ProviderSpec::Scripted {
                    path: "demo.yaml".into(),
                },
                "scripted",
                "demo.yaml",
            ),
        ];
        for (input, expected, kind, model) in cases {
            let spec = parse(input).unwrap();
            assert_eq!(spec, expected, "{input}");
            assert_eq!(spec.kind(), kind, "{input}");
            assert_eq!(spec.model(), model, "{input}");
            assert_eq!(spec.to_string(), input);
            assert_eq!(parse(&spec.to_string()).unwrap(), spec);
        }
    }

    #[test]
    fn openai_compatible_accepts_https_and_user_info_in_url() {
        let spec = parse("openai-compatible:m@https://user@example.com/v1").unwrap();
        assert_eq!(
            spec,
            ProviderSpec::OpenAiCompatible {
                model: "m".into(),
                base_url: "https://user@example.com/v1".into(),
            }
        );
        // A model name may itself contain `@` as long as it is not followed by a URL.
        let spec = parse("openai-compatible:org@model@https://h").unwrap();
        assert_eq!(spec.model(), "org@model");
    }

    #[test]
    fn scripted_paths_may_contain_spaces_and_colons() {
        let spec = parse("scripted:dir with space/a:b.yaml").unwrap();
        assert_eq!(
            spec,
            ProviderSpec::Scripted {
                path: "dir with space/a:b.yaml".into()
            }
        );
        assert_eq!(spec.to_string(), "scripted:dir with space/a:b.yaml");
    }

    fn assert_rejected(input: &str, expected: &SpecError) {
        let err = parse(input).unwrap_err();
        assert_eq!(&err, expected, "{input}");
        let message = err.to_string();
        assert!(message.contains(VALID_FORMS), "{message}");
        if !input.is_empty() {
            assert!(message.contains(&format!("{input:?}")), "{message}");
        }
    }

    #[test]
    fn empty_string_is_rejected() {
        assert_rejected("", &SpecError::Empty);
    }

    #[test]
    fn missing_colon_is_rejected() {
        assert_rejected(
            "claude",
            &SpecError::MissingColon {
                input: "claude".into(),
            },
        );
    }

    #[test]
    fn unknown_kind_is_rejected() {
        for input in ["gpt:4o", "Claude:opus", ":opus"] {
            let kind = input.split(':').next().unwrap().to_owned();
            assert_rejected(
                input,
                &SpecError::UnknownKind {
                    input: input.into(),
                    kind,
                },
            );
        }
    }

    #[test]
    fn empty_model_is_rejected() {
        for input in [
            "claude:",
            "gemini:",
            "codex:",
            "anthropic:",
            "google:",
            "openai:",
            "openai-compatible:@http://localhost",
        ] {
            assert_rejected(
                input,
                &SpecError::EmptyModel {
                    input: input.into(),
                },
            );
        }
    }

    #[test]
    fn whitespace_or_control_characters_in_model_are_rejected() {
        for input in [
            "claude:opus ",
            "openai: gpt-5",
            "google:gem ini",
            "anthropic:a\tb",
            "codex:x\u{1b}[31m",
            "openai-compatible:a b@http://localhost",
        ] {
            assert_rejected(
                input,
                &SpecError::InvalidModel {
                    input: input.into(),
                },
            );
        }
    }

    #[test]
    fn bad_scripted_paths_are_rejected() {
        assert_rejected(
            "scripted:",
            &SpecError::EmptyPath {
                input: "scripted:".into(),
            },
        );
        for input in ["scripted: demo.yaml", "scripted:demo\n.yaml"] {
            assert_rejected(
                input,
                &SpecError::InvalidPath {
                    input: input.into(),
                },
            );
        }
    }

    #[test]
    fn bad_base_urls_are_rejected() {
        for (input, reason) in [
            (
                "openai-compatible:llama",
                "missing `@BASE_URL` after the model",
            ),
            (
                "openai-compatible:llama@localhost:8080",
                "must start with http:// or https://",
            ),
            (
                "openai-compatible:llama@ftp://host",
                "must start with http:// or https://",
            ),
            ("openai-compatible:llama@http://", "has no host"),
            ("openai-compatible:llama@https:///v1", "has no host"),
            (
                "openai-compatible:llama@http://host /v1",
                "whitespace or control characters",
            ),
        ] {
            let err = parse(input).unwrap_err();
            let SpecError::BadBaseUrl {
                input: got,
                reason: got_reason,
            } = &err
            else {
                panic!("{input}: expected BadBaseUrl, got {err:?}");
            };
            assert_eq!(got, input);
            assert!(got_reason.contains(reason), "{input}: {got_reason}");
            let message = err.to_string();
            assert!(message.contains(VALID_FORMS), "{message}");
            assert!(message.contains(&format!("{input:?}")), "{message}");
        }
    }
}
