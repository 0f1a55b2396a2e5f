//! Structured output with the REAL agent CLIs against the fake API: what each CLI sends when
//! gavel gives it the verdict's schema, and what gavel reads back from its real output.
//! Codex sends a strict `text.format` and answers the JSON; Claude Code offers its own
//! `StructuredOutput` tool (checking the input against the schema itself) and reports the
//! input as `structured_output`; the Gemini CLI has no way to ask, so it asks plain.

use std::time::Duration;

use gavel_fakeapi::{Api, FakeServer, Recorded, Reply};
use gavel_llm::cli::{CliProvider, CliSettings};
use gavel_llm::{
    AgentProfile, AnswerForm, Call, OutputSchema, Provider, ProviderError, Request, Response, Role,
};
use serde_json::{Value, json};

use crate::agents;
use crate::util::Env;

/// The verdict's JSON form, exactly as the workflows ask for it.
fn verdict_schema() -> OutputSchema {
    gavel_workflows::verdict::output_schema()
}

fn revise() -> Value {
    json!({"verdict": "REVISE", "findings": ["The draft has no title."]})
}

/// A CLI pointed at a fresh fake, with its own HOME.
struct Cli {
    server: FakeServer,
    _env: Env,
    provider: CliProvider,
    api: Api,
    model: &'static str,
}

impl Cli {
    fn new(
        api: Api,
        model: &'static str,
        vars: fn(&Env, &FakeServer) -> Vec<(String, String)>,
        make: fn(String, CliSettings) -> CliProvider,
    ) -> Self {
        let server = FakeServer::start().expect("fake");
        let env = Env::new();
        let mut env_vars = vars(&env, &server);
        env_vars.push(("HOME".into(), env.home().display().to_string()));
        let settings = CliSettings {
            idle_timeout: Duration::from_secs(30),
            total_timeout: Duration::from_secs(120),
            env: env_vars,
            workdir: Some(env.root.join("agent-workdir")),
            ..CliSettings::default()
        };
        Self {
            provider: make(model.to_owned(), settings),
            server,
            _env: env,
            api,
            model,
        }
    }

    /// A reviewer's call with the verdict's schema.
    fn review(&self) -> Result<Response, ProviderError> {
        let request = Request {
            role: Role::REVIEWER,
            prompt: "Review the draft; answer with your verdict.".into(),
            seq: 0,
            step_id: "review".into(),
            max_output_tokens: 1000,
            profile: AgentProfile::text_only(),
            output_schema: Some(verdict_schema()),
        };
        self.provider.complete(&request, &Call::new(&|| false))
    }

    /// The requests for the call's model (not a CLI's side requests).
    fn main_requests(&self) -> Vec<Recorded> {
        self.server
            .requests()
            .into_iter()
            .filter(|r| r.api == Some(self.api) && r.model == self.model)
            .collect()
    }
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[test]
fn codex_asks_for_a_strict_json_schema_and_answers_the_json() {
    let cli = Cli::new(
        Api::OpenAiResponses,
        "gpt-5",
        agents::codex_env,
        CliProvider::codex,
    );
    cli.server
        .push(Api::OpenAiResponses, Reply::text(revise().to_string()));
    let response = cli.review().unwrap_or_else(|e| panic!("codex: {e:?}"));
    assert_eq!(json_of(&response.text), revise());
    assert_eq!(response.form, AnswerForm::Schema);
    let sent = cli.main_requests();
    assert_eq!(sent.len(), 1, "{sent:#?}");
    let format = &sent[0].body["text"]["format"];
    assert_eq!(format["type"], "json_schema", "{}", sent[0].body);
    assert_eq!(format["strict"], true);
    assert_eq!(format["schema"], verdict_schema().schema);
}

#[test]
fn claude_code_offers_its_structured_output_tool_and_answers_its_input() {
    let cli = Cli::new(
        Api::Anthropic,
        "claude-sonnet-4-5",
        agents::claude_env,
        CliProvider::claude,
    );
    cli.server.push(
        Api::Anthropic,
        Reply::tool_use("StructuredOutput", revise()),
    );
    let response = cli.review().unwrap_or_else(|e| panic!("claude: {e:?}"));
    assert_eq!(json_of(&response.text), revise());
    assert_eq!(response.form, AnswerForm::Schema);
    assert!(
        response.tool_uses.is_empty(),
        "the answer is no tool use: {:?}",
        response.tool_uses
    );
    let sent = cli.main_requests();
    assert_eq!(sent.len(), 1, "{sent:#?}");
    let tools = sent[0].body["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(tools.len(), 1, "only its own tool: {tools:?}");
    assert_eq!(tools[0]["name"], "StructuredOutput");
    assert_eq!(tools[0]["input_schema"], verdict_schema().schema);
}

#[test]
fn claude_code_reminds_a_model_that_answered_without_the_tool() {
    let cli = Cli::new(
        Api::Anthropic,
        "claude-sonnet-4-5",
        agents::claude_env,
        CliProvider::claude,
    );
    cli.server
        .push(Api::Anthropic, Reply::text("The draft needs a title."));
    cli.server.push(
        Api::Anthropic,
        Reply::tool_use("StructuredOutput", revise()),
    );
    let response = cli.review().unwrap_or_else(|e| panic!("claude: {e:?}"));
    assert_eq!(json_of(&response.text), revise());
    let sent = cli.main_requests();
    assert_eq!(sent.len(), 2, "the reminder is a second turn: {sent:#?}");
    let reminder = sent[1].body["messages"].to_string();
    assert!(reminder.contains("StructuredOutput"), "{reminder}");
}

#[test]
fn claude_code_never_answers_with_input_that_breaks_the_schema() {
    let cli = Cli::new(
        Api::Anthropic,
        "claude-sonnet-4-5",
        agents::claude_env,
        CliProvider::claude,
    );
    let maybe = json!({"verdict": "MAYBE", "findings": []});
    for _ in 0..2 {
        cli.server.push(
            Api::Anthropic,
            Reply::tool_use("StructuredOutput", maybe.clone()),
        );
    }
    let err = cli.review().expect_err("no answer");
    assert!(
        matches!(err, ProviderError::Permanent { .. }),
        "a call that ends at its turn limit is not retried: {err:?}"
    );
    assert!(err.to_string().contains("turn limit"), "{err}");
    let sent = cli.main_requests();
    assert_eq!(sent.len(), 2, "{sent:#?}");
    let told = sent[1].body["messages"].to_string();
    assert!(told.contains("does not match required schema"), "{told}");
}

#[test]
fn the_gemini_cli_asks_plain_text() {
    let cli = Cli::new(
        Api::Gemini,
        "gemini-2.5-pro",
        agents::gemini_env,
        CliProvider::gemini,
    );
    cli.server
        .push(Api::Gemini, Reply::text(revise().to_string()));
    let response = cli.review().unwrap_or_else(|e| panic!("gemini: {e:?}"));
    assert_eq!(response.form, AnswerForm::Plain);
    assert_eq!(json_of(&response.text), revise());
    let sent = cli.main_requests();
    assert_eq!(sent.len(), 1, "{sent:#?}");
    let config = &sent[0].body["generationConfig"];
    for field in ["responseJsonSchema", "responseSchema"] {
        assert!(config[field].is_null(), "{field}: {config}");
    }
}
