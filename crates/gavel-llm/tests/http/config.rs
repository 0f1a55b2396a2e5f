//! Keys, base URLs, limits and routing: what a person configures, and what they are told when
//! it is wrong.

use std::net::TcpListener;
use std::path::Path;
use std::time::{Duration, Instant};

use gavel_fakeapi::Reply;
use gavel_llm::{HttpProvider, HttpSettings, Provider, ProviderError, ProviderSpec};

use crate::util::{
    ANTHROPIC, COMPATIBLE, Harness, KINDS, Kind, cancel_after_first_text, header, permanent,
    settings, transient,
};

#[test]
fn preflight_passes_when_the_key_is_set() {
    for kind in KINDS {
        let h = Harness::new(kind);
        h.provider
            .preflight()
            .unwrap_or_else(|e| panic!("{}: {e:?}", kind.name));
        assert_eq!(h.provider.key_vars(), [kind.key_var]);
        assert!(
            h.fake.requests().is_empty(),
            "preflight must not call the service"
        );
    }
}

#[test]
fn a_missing_or_blank_key_fails_preflight_and_calls_with_a_hint_naming_the_variable() {
    for kind in KINDS {
        for blank in [None, Some("   ")] {
            let h = Harness::build(kind, settings(kind), |env| {
                env.remove(kind.key_var);
                if let Some(value) = blank {
                    env.insert(kind.key_var.to_owned(), value.to_owned());
                }
            });
            let (message, hint) = permanent(kind, h.provider.preflight());
            assert!(message.contains(kind.key_var), "{message}");
            assert_eq!(
                hint,
                format!("set {} to your {} API key", kind.key_var, vendor(kind))
            );
            permanent(kind, h.ask());
            assert!(
                h.fake.requests().is_empty(),
                "{}: called without a key",
                kind.name
            );
        }
    }
}

fn vendor(kind: &Kind) -> &'static str {
    match kind.name {
        "anthropic" => "Anthropic",
        "google" => "Gemini",
        "openai" => "OpenAI",
        _ => "server's",
    }
}

#[test]
fn key_env_replaces_the_vendors_variable() {
    let mut with_own_key = settings(&ANTHROPIC);
    with_own_key.key_env = vec!["TEAM_ANTHROPIC_KEY".to_owned()];
    let h = Harness::build(&ANTHROPIC, with_own_key, |env| {
        env.insert("TEAM_ANTHROPIC_KEY".to_owned(), "team-key".to_owned());
    });
    assert_eq!(h.provider.key_vars(), ["TEAM_ANTHROPIC_KEY"]);
    h.push(Reply::text("ok"));
    h.ask().unwrap();
    assert_eq!(header(&h.only_request(), "x-api-key"), Some("team-key"));
}

#[test]
fn a_compatible_server_without_key_env_gets_no_key_not_even_openais() {
    let mut keyless = settings(&COMPATIBLE);
    keyless.key_env = Vec::new();
    let h = Harness::build(&COMPATIBLE, keyless, |env| {
        env.insert("OPENAI_API_KEY".to_owned(), "first-party-secret".to_owned());
    });
    assert!(h.provider.key_vars().is_empty());
    h.provider.preflight().unwrap();
    h.push(Reply::text("local answer"));
    assert_eq!(h.ask().unwrap().text, "local answer");
    let req = h.only_request();
    assert_eq!(header(&req, "authorization"), None, "{:?}", req.headers);
    assert_eq!(req.path, "/v1/chat/completions");

    // A keyless server that turns out to want a key: the hint says how to give it one.
    h.push(Reply::error(401, "missing bearer token"));
    let (_, hint) = permanent(&COMPATIBLE, h.ask());
    assert!(hint.contains("[keys] openai_compatible"), "{hint}");
}

#[test]
fn first_party_base_urls_default_to_the_vendors_and_follow_the_environment() {
    let expected = [
        (
            "anthropic:m",
            "ANTHROPIC_BASE_URL",
            "https://api.anthropic.com",
        ),
        (
            "google:m",
            "GOOGLE_GEMINI_BASE_URL",
            "https://generativelanguage.googleapis.com",
        ),
        ("openai:m", "OPENAI_BASE_URL", "https://api.openai.com/v1"),
    ];
    for (input, var, default) in expected {
        let spec: ProviderSpec = input.parse().unwrap();
        let provider = HttpProvider::new(&spec, HttpSettings::default())
            .unwrap()
            .with_env(|_| None);
        assert_eq!(provider.base_url(), default);
        let moved = HttpProvider::new(&spec, HttpSettings::default())
            .unwrap()
            .with_env(move |name| (name == var).then(|| "http://proxy.test".to_owned()));
        assert_eq!(moved.base_url(), "http://proxy.test");
    }
    let spec: ProviderSpec = "openai-compatible:m@http://box:11434/v1".parse().unwrap();
    let provider = HttpProvider::new(&spec, HttpSettings::default())
        .unwrap()
        .with_env(|_| Some("http://ignored".to_owned()));
    assert_eq!(provider.base_url(), "http://box:11434/v1");
}

#[test]
fn build_routes_http_kinds_to_the_http_provider() {
    for input in [
        "anthropic:m",
        "google:m",
        "openai:m",
        "openai-compatible:m@http://127.0.0.1:9/v1",
    ] {
        let spec: ProviderSpec = input.parse().unwrap();
        let provider = gavel_llm::build(&spec, Path::new("/nowhere"));
        assert_eq!(provider.describe(), input);
        // Depending on the developer's environment the key may be set; never "unavailable".
        if let Err(e) = provider.preflight() {
            assert!(
                matches!(e, ProviderError::Permanent { .. }),
                "{input}: {e:?}"
            );
        }
    }
    assert!(HttpProvider::new(&"claude:opus".parse().unwrap(), HttpSettings::default()).is_none());
}

#[test]
fn overloaded_anthropic_is_transient() {
    let h = Harness::new(&ANTHROPIC);
    h.push(Reply::error(529, "Overloaded"));
    let (message, _) = transient(&ANTHROPIC, h.ask());
    assert!(
        message.contains("529") && message.contains("Overloaded"),
        "{message}"
    );
}

#[test]
fn a_slow_but_steady_stream_fails_at_the_total_timeout() {
    let mut short = settings(&ANTHROPIC);
    short.total_timeout = Duration::from_millis(600);
    let h = Harness::build(&ANTHROPIC, short, |_| {});
    // Events every 200 ms never trip the 1 s idle timeout, but the answer takes seconds.
    h.push(Reply::text("word ".repeat(60)).with_event_delay(200));
    let started = Instant::now();
    let (message, _) = transient(&ANTHROPIC, h.ask());
    // The total timeout, not the idle one, ended the call, and not before it was due. Without
    // it the whole answer would have arrived and the call would have succeeded.
    assert!(message.contains("total timeout"), "{message}");
    assert!(started.elapsed() >= Duration::from_millis(600));
    assert_eq!(h.fake.requests().len(), 1, "one request, not retried");
}

#[test]
fn an_unreachable_server_is_transient() {
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let h = Harness::build(&ANTHROPIC, settings(&ANTHROPIC), |env| {
        env.insert(
            "ANTHROPIC_BASE_URL".to_owned(),
            format!("http://127.0.0.1:{port}"),
        );
    });
    let (message, _) = transient(&ANTHROPIC, h.ask());
    assert!(message.contains("connection"), "{message}");
}

#[test]
fn a_call_cancelled_before_it_starts_sends_nothing() {
    let h = Harness::new(&ANTHROPIC);
    h.push(Reply::text("never asked"));
    let result = h
        .provider
        .complete(&crate::util::request(), &gavel_llm::Call::new(&|| true));
    assert!(
        matches!(result, Err(ProviderError::Cancelled)),
        "{result:?}"
    );
    assert!(h.fake.requests().is_empty());
}

#[test]
fn an_api_call_refuses_an_agent_profile_with_tools_and_sends_nothing() {
    for kind in KINDS {
        let h = Harness::new(kind);
        h.push(Reply::text("never asked"));
        let request = gavel_llm::Request {
            profile: gavel_llm::AgentProfile::edit_within("/w/tree", 5),
            ..crate::util::request()
        };
        let (message, hint) = permanent(
            kind,
            h.provider
                .complete(&request, &gavel_llm::Call::new(&|| false)),
        );
        assert!(message.contains("cannot use tools"), "{message}");
        assert!(hint.contains("claude:"), "{hint}");
        assert!(h.fake.requests().is_empty(), "{}", kind.name);
    }
}

#[test]
fn cancellation_is_noticed_while_waiting_for_a_silent_service() {
    // The stream stalls after some text; the idle timeout is far away.
    let mut patient = settings(&ANTHROPIC);
    patient.idle_timeout = Duration::from_secs(30);
    let h = Harness::build(&ANTHROPIC, patient, |_| {});
    h.push(Reply::Stall {
        after_events: ANTHROPIC.mid_events,
    });
    // Unnoticed, the call would end with the idle timeout 30 s later, not as cancelled.
    let (result, relayed_after_cancel) = cancel_after_first_text(&h.provider);
    assert!(
        matches!(result, Err(ProviderError::Cancelled)),
        "{result:?}"
    );
    assert_eq!(relayed_after_cancel, 0);
}

#[test]
fn works_when_called_from_inside_an_async_runtime() {
    // A caller that happens to run on a tokio runtime must not hit "cannot start a runtime
    // from within a runtime": the call runs on the provider's own runtime.
    let h = Harness::new(&COMPATIBLE);
    h.push(Reply::text("from async"));
    let outer = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let text = outer.block_on(async { h.ask().map(|r| r.text) });
    assert_eq!(text.unwrap(), "from async");
}
