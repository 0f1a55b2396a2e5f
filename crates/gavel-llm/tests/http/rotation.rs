//! Credential rotation for the HTTP providers: several key variables for one provider, the
//! next one used at once when a key's quota is exhausted (the vendors' real 429 answers from
//! the fake, per key), and the variable that answered recorded by name, never the key.

use std::time::Duration;

use gavel_fakeapi::{FakeServer, Reply, Rule};
use gavel_llm::{Call, Provider, ProviderError, RetryPolicy, Retrying};

use crate::util::{Harness, KINDS, Kind, permanent, request, settings};

/// Two keys whose values are long enough to be real ones.
const SECRET_A: &str = "sk-test-SECRET-VALUE-AAAA-0001";
const SECRET_B: &str = "sk-test-SECRET-VALUE-BBBB-0002";

/// A harness whose provider rotates over `vars` (values from `values`, in the same order).
fn rotating(kind: &'static Kind, vars: &[&str], values: &[(&str, &str)]) -> Harness {
    let mut with_keys = settings(kind);
    with_keys.key_env = vars.iter().map(|v| (*v).to_owned()).collect();
    let values: Vec<(String, String)> = values
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    Harness::build(kind, with_keys, move |env| env.extend(values))
}

/// The keys the fake received, in order.
fn keys_sent(fake: &FakeServer) -> Vec<String> {
    fake.requests()
        .into_iter()
        .map(|r| r.key.unwrap_or_default())
        .collect()
}

fn fast(max_retries: u32) -> RetryPolicy {
    RetryPolicy {
        max_retries,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(20),
    }
}

#[test]
fn an_exhausted_key_hands_the_call_to_the_next_at_once_and_the_next_call_starts_there() {
    for kind in KINDS {
        let h = rotating(
            kind,
            &["ROT_KEY_A", "ROT_KEY_B"],
            &[("ROT_KEY_A", SECRET_A), ("ROT_KEY_B", SECRET_B)],
        );
        // Key A's quota is gone for good, and the vendor asks for a long wait.
        h.fake.rule(Rule::for_key(
            kind.api,
            SECRET_A,
            Reply::quota_exhausted().retry_after(30),
        ));
        h.push(Reply::text("answered with key B"));
        h.push(Reply::text("key B again"));
        let Harness { fake, provider, .. } = h;
        let provider = Retrying::new(Box::new(provider), fast(3));
        let response = provider
            .complete(&request(), &Call::new(&|| false))
            .unwrap_or_else(|e| panic!("{}: {e:?}", kind.name));
        assert_eq!(response.text, "answered with key B");
        assert_eq!(response.credential.as_deref(), Some("ROT_KEY_B"));
        assert_eq!(response.quota_exhausted, ["ROT_KEY_A"]);
        assert_eq!(
            response.attempts, 1,
            "{}: rotating is not a retry",
            kind.name
        );
        // Key A was asked once and key B at once after it, within the same attempt: key A's
        // retry-after was not waited for (a wait comes only before a retry).
        assert_eq!(
            keys_sent(&fake),
            [SECRET_A, SECRET_B],
            "{}: key A was retried instead of handing over to key B",
            kind.name
        );

        // The next call goes straight to the key that last answered.
        let response = provider
            .complete(&request(), &Call::new(&|| false))
            .unwrap_or_else(|e| panic!("{}: {e:?}", kind.name));
        assert_eq!(response.credential.as_deref(), Some("ROT_KEY_B"));
        assert!(response.quota_exhausted.is_empty());
        assert_eq!(
            keys_sent(&fake),
            [SECRET_A, SECRET_B, SECRET_B],
            "{}",
            kind.name
        );
    }
}

#[test]
fn when_every_key_is_exhausted_the_retry_policy_applies_and_the_error_names_the_variables() {
    for kind in KINDS {
        let h = rotating(
            kind,
            &["ROT_KEY_A", "ROT_KEY_B"],
            &[("ROT_KEY_A", SECRET_A), ("ROT_KEY_B", SECRET_B)],
        );
        for secret in [SECRET_A, SECRET_B] {
            h.fake
                .rule(Rule::for_key(kind.api, secret, Reply::quota_exhausted()));
        }
        let Harness { fake, provider, .. } = h;
        let provider = Retrying::new(Box::new(provider), fast(2));
        let err = provider
            .complete(&request(), &Call::new(&|| false))
            .expect_err("every key is exhausted");
        let text = err.to_string();
        assert!(err.is_transient() && err.is_quota_exhausted(), "{err:?}");
        assert!(
            text.contains("quota exhausted for every credential: ROT_KEY_A, ROT_KEY_B")
                && text.contains("gave up after 3 attempts"),
            "{}: {text}",
            kind.name
        );
        assert!(
            !text.contains(SECRET_A) && !text.contains(SECRET_B),
            "{text}"
        );
        // Three attempts (the first and two retries), each trying both keys.
        assert_eq!(fake.requests().len(), 6, "{}", kind.name);
    }
}

#[test]
fn unset_variables_are_skipped_and_none_set_names_them_all() {
    for kind in KINDS {
        let h = rotating(
            kind,
            &["ROT_UNSET", "ROT_KEY_B"],
            &[("ROT_KEY_B", SECRET_B), ("ROT_UNSET", "  ")],
        );
        h.push(Reply::text("ok"));
        let response = h.ask().unwrap_or_else(|e| panic!("{}: {e:?}", kind.name));
        assert_eq!(response.credential.as_deref(), Some("ROT_KEY_B"));
        assert!(
            response.quota_exhausted.is_empty(),
            "an unset key is not tried"
        );
        assert_eq!(keys_sent(&h.fake), [SECRET_B]);

        let h = rotating(kind, &["ROT_UNSET_1", "ROT_UNSET_2"], &[]);
        let (message, hint) = permanent(kind, h.provider.preflight());
        assert!(
            message.starts_with("none of ROT_UNSET_1, ROT_UNSET_2 is set"),
            "{message}"
        );
        assert!(
            hint.starts_with("set one of ROT_UNSET_1, ROT_UNSET_2"),
            "{hint}"
        );
        permanent(kind, h.ask());
        assert!(h.fake.requests().is_empty(), "called without a key");
    }
}

#[test]
fn a_keys_value_never_appears_in_the_recorded_name_or_in_errors() {
    for kind in KINDS {
        let h = rotating(
            kind,
            &["ROT_KEY_A", "ROT_KEY_B"],
            &[("ROT_KEY_A", SECRET_A), ("ROT_KEY_B", SECRET_B)],
        );
        // A service (or a proxy) that echoes the rejected key back in its error.
        h.push(Reply::error(
            401,
            format!("Incorrect API key provided: {SECRET_A}"),
        ));
        let err = h.ask().expect_err("rejected");
        let (message, hint) = permanent(kind, Err::<(), _>(err));
        assert!(!message.contains(SECRET_A), "{}: {message}", kind.name);
        assert!(message.contains("[redacted]"), "{message}");
        assert!(
            hint.contains("ROT_KEY_A"),
            "the hint names the variable: {hint}"
        );
        assert!(!hint.contains(SECRET_A), "{hint}");

        // A quota answer that echoes the key, then an answer: the recorded name is the
        // variable's, and nothing recorded holds a key.
        h.fake.rule(Rule::for_key(
            kind.api,
            SECRET_A,
            Reply::error(429, format!("quota exhausted for key {SECRET_A}")),
        ));
        h.push(Reply::text("fine"));
        let response = h.ask().unwrap_or_else(|e| panic!("{}: {e:?}", kind.name));
        assert_eq!(response.credential.as_deref(), Some("ROT_KEY_B"));
        let recorded = serde_json::to_string(&response).expect("serializes");
        for secret in [SECRET_A, SECRET_B] {
            assert!(!recorded.contains(secret), "{}: {recorded}", kind.name);
        }
    }
}

#[test]
fn a_key_that_is_rejected_does_not_rotate() {
    // Only an exhausted quota hands the call on: a rejected key is a mistake to fix.
    let kind = KINDS[0];
    let h = rotating(
        kind,
        &["ROT_KEY_A", "ROT_KEY_B"],
        &[("ROT_KEY_A", SECRET_A), ("ROT_KEY_B", SECRET_B)],
    );
    h.fake.rule(Rule::for_key(
        kind.api,
        SECRET_A,
        Reply::error(401, "invalid x-api-key"),
    ));
    h.push(Reply::text("never asked"));
    let result = h.ask();
    assert!(
        matches!(result, Err(ProviderError::Permanent { .. })),
        "{result:?}"
    );
    assert_eq!(keys_sent(&h.fake), [SECRET_A]);
}
