//! Credential rotation: several API keys or CLI logins for one provider kind, tried in turn
//! when one's quota is exhausted.
//!
//! A credential is known here only by its NAME: the variable holding an API key, or a CLI's
//! login folder. The providers resolve names to secrets at call time and hand them to the wire
//! or to the child process; nothing in this module (and nothing it returns) ever holds a key.
//!
//! When a call fails with the vendor's quota answer ([`ProviderError::is_quota_exhausted`]: an
//! HTTP 429 and the CLIs' equivalents) and another credential is left, the same call is made at
//! once with the next one: that is not one of gavel's retries and waits no backoff. When every
//! credential's quota is exhausted, the last error goes to [`crate::Retrying`], whose policy
//! applies as for any transient failure. Which credential answered is recorded on the
//! [`Response`] by name. The next call of the process starts with the credential that last
//! answered ([`RotationState`]), so an exhausted key is not asked again and again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::provider::{ProviderError, Response};

/// Where each provider kind's rotation stands: the name of the credential that last answered.
/// Clones share the state; every provider built from one [`crate::ProviderSettings`] (and so
/// the drafter and the reviewer) uses the same one.
#[derive(Debug, Clone, Default)]
pub struct RotationState(Arc<Mutex<HashMap<String, String>>>);

impl RotationState {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, String>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The credential of `kind` that last answered, if any did.
    pub fn last_good(&self, kind: &str) -> Option<String> {
        self.lock().get(kind).cloned()
    }

    fn set_last_good(&self, kind: &str, name: &str) {
        self.lock().insert(kind.to_owned(), name.to_owned());
    }
}

/// One provider kind's rotation over its credentials.
#[derive(Debug, Clone)]
pub struct Rotation {
    kind: String,
    state: RotationState,
}

impl Rotation {
    /// The rotation of provider kind `kind` (`anthropic`, `claude`, ...), sharing `state`.
    pub fn new(kind: impl Into<String>, state: RotationState) -> Self {
        Self {
            kind: kind.into(),
            state,
        }
    }

    /// Indices into `names` in the order to try them: from the one that last answered, then
    /// the rest in their configured order, wrapping around.
    pub fn order(&self, names: &[String]) -> Vec<usize> {
        let start = self
            .state
            .last_good(&self.kind)
            .and_then(|good| names.iter().position(|n| *n == good))
            .unwrap_or(0);
        (0..names.len())
            .map(|i| (start + i) % names.len())
            .collect()
    }

    /// Makes the call with credential `names[i]` through `attempt`, moving on to the next
    /// credential while the quota is exhausted and one is left. On success the response names
    /// the credential that answered and those skipped. When every credential's quota is
    /// exhausted, the error names them all and asks for the shortest wait any of them asked
    /// for. Any other failure ends the rotation at once. `names` must not be empty.
    pub fn run(
        &self,
        names: &[String],
        cancelled: &dyn Fn() -> bool,
        mut attempt: impl FnMut(usize) -> Result<Response, ProviderError>,
    ) -> Result<Response, ProviderError> {
        let order = self.order(names);
        let mut exhausted: Vec<String> = Vec::new();
        let mut shortest_wait: Option<u64> = None;
        for (k, &i) in order.iter().enumerate() {
            if k > 0 && cancelled() {
                return Err(ProviderError::Cancelled);
            }
            match attempt(i) {
                Ok(mut response) => {
                    self.state.set_last_good(&self.kind, &names[i]);
                    response.credential = Some(names[i].clone());
                    response.quota_exhausted = exhausted;
                    return Ok(response);
                }
                Err(ProviderError::Transient {
                    provider,
                    message,
                    retry_after_ms,
                    quota: true,
                }) => {
                    exhausted.push(names[i].clone());
                    shortest_wait = match (shortest_wait, retry_after_ms) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    };
                    if k + 1 == order.len() {
                        let message = if exhausted.len() > 1 {
                            format!(
                                "{message} (quota exhausted for every credential: {})",
                                exhausted.join(", ")
                            )
                        } else {
                            message
                        };
                        return Err(ProviderError::Transient {
                            provider,
                            message,
                            retry_after_ms: shortest_wait,
                            quota: true,
                        });
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Err(ProviderError::Permanent {
            provider: self.kind.clone(),
            message: "no credential to call with (an internal error)".to_owned(),
            hint: None,
        })
    }
}

/// Whether `name` can be an environment variable's name: ASCII letters, digits and `_`, not
/// starting with a digit. A configured credential that is not one is refused, so an API key
/// pasted where its variable's name belongs is never recorded as a "name".
pub fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    fn answer() -> Response {
        Response {
            text: "ok".into(),
            provider: "p".into(),
            model: "m".into(),
            requested_model: "m".into(),
            input_tokens: None,
            output_tokens: None,
            cached_tokens: None,
            cost_usd: None,
            raw: String::new(),
            attempts: 1,
            credential: None,
            quota_exhausted: Vec::new(),
            tool_uses: Vec::new(),
            ended_with: None,
            form: crate::AnswerForm::Plain,
        }
    }

    fn quota(ms: Option<u64>) -> ProviderError {
        ProviderError::Transient {
            provider: "p".into(),
            message: "HTTP 429: quota".into(),
            retry_after_ms: ms,
            quota: true,
        }
    }

    /// A call that fails with quota errors for the credentials in `exhausted`.
    fn call_with(
        rotation: &Rotation,
        keys: &[String],
        exhausted: &[&str],
    ) -> (Result<Response, ProviderError>, Vec<String>) {
        let tried = RefCell::new(Vec::new());
        let result = rotation.run(keys, &|| false, |i| {
            tried.borrow_mut().push(keys[i].clone());
            if exhausted.contains(&keys[i].as_str()) {
                Err(quota(Some(5_000)))
            } else {
                Ok(answer())
            }
        });
        (result, tried.into_inner())
    }

    #[test]
    fn an_exhausted_key_hands_the_call_to_the_next_and_the_next_call_starts_there() {
        let rotation = Rotation::new("anthropic", RotationState::default());
        let keys = names(&["KEY_A", "KEY_B", "KEY_C"]);
        let (result, tried) = call_with(&rotation, &keys, &["KEY_A"]);
        let response = result.expect("KEY_B answers");
        assert_eq!(tried, ["KEY_A", "KEY_B"]);
        assert_eq!(response.credential.as_deref(), Some("KEY_B"));
        assert_eq!(response.quota_exhausted, ["KEY_A"]);
        assert_eq!(response.attempts, 1, "rotating is not a retry");

        // The next call starts with the key that last answered; KEY_A is not asked again.
        let (result, tried) = call_with(&rotation, &keys, &["KEY_A"]);
        assert_eq!(tried, ["KEY_B"]);
        assert!(result.expect("answers").quota_exhausted.is_empty());
        // KEY_B runs out too: the call moves on to KEY_C.
        let (result, tried) = call_with(&rotation, &keys, &["KEY_B"]);
        assert_eq!(tried, ["KEY_B", "KEY_C"]);
        assert_eq!(
            result.expect("answers").credential.as_deref(),
            Some("KEY_C")
        );
    }

    #[test]
    fn when_every_key_is_exhausted_the_error_names_them_all_and_is_transient() {
        let state = RotationState::default();
        let rotation = Rotation::new("google", state.clone());
        let keys = names(&["G1", "G2"]);
        let (result, tried) = call_with(&rotation, &keys, &["G1", "G2"]);
        assert_eq!(tried, ["G1", "G2"]);
        let err = result.expect_err("all exhausted");
        assert!(err.is_transient() && err.is_quota_exhausted(), "{err:?}");
        assert!(
            err.to_string()
                .contains("quota exhausted for every credential: G1, G2"),
            "{err}"
        );
        assert!(
            matches!(
                err,
                ProviderError::Transient {
                    retry_after_ms: Some(5_000),
                    ..
                }
            ),
            "{err:?}"
        );
        assert_eq!(state.last_good("google"), None, "nothing answered");
    }

    #[test]
    fn other_failures_end_the_rotation_at_once() {
        let rotation = Rotation::new("openai", RotationState::default());
        let keys = names(&["O1", "O2"]);
        let tried = RefCell::new(0);
        let result = rotation.run(&keys, &|| false, |_| {
            *tried.borrow_mut() += 1;
            Err(ProviderError::Transient {
                provider: "openai".into(),
                message: "HTTP 503: overloaded".into(),
                retry_after_ms: None,
                quota: false,
            })
        });
        assert_eq!(*tried.borrow(), 1, "a 503 is not the key's fault");
        assert!(!result.expect_err("fails").is_quota_exhausted());
    }

    #[test]
    fn one_key_alone_keeps_its_error_as_it_was() {
        let rotation = Rotation::new("anthropic", RotationState::default());
        let (result, _) = call_with(&rotation, &names(&["ONLY"]), &["ONLY"]);
        assert_eq!(
            result.expect_err("exhausted").to_string(),
            "p call failed (transient): HTTP 429: quota"
        );
    }

    #[test]
    fn a_cancel_stops_the_rotation_before_the_next_key() {
        let rotation = Rotation::new("anthropic", RotationState::default());
        let keys = names(&["A", "B"]);
        let result = rotation.run(&keys, &|| true, |_| Err(quota(None)));
        assert!(
            matches!(result, Err(ProviderError::Cancelled)),
            "{result:?}"
        );
    }

    #[test]
    fn states_are_per_kind_and_shared_by_clones() {
        let state = RotationState::default();
        let keys = names(&["A", "B"]);
        let (result, _) = call_with(&Rotation::new("claude", state.clone()), &keys, &["A"]);
        result.expect("B answers");
        assert_eq!(state.last_good("claude").as_deref(), Some("B"));
        assert_eq!(Rotation::new("claude", state.clone()).order(&keys), [1, 0]);
        assert_eq!(Rotation::new("gemini", state).order(&keys), [0, 1]);
    }

    #[test]
    fn variable_names_are_told_apart_from_keys_and_paths() {
        for ok in ["ANTHROPIC_API_KEY", "_X", "key2"] {
            assert!(is_variable_name(ok), "{ok}");
        }
        for bad in ["", "2KEY", "sk-ant-api03-abc", "~/.claude", "A B", "A=B"] {
            assert!(!is_variable_name(bad), "{bad}");
        }
    }
}
