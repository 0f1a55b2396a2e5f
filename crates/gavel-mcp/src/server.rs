//! The rmcp side of the server, and the only module that names rmcp: the tool router, the
//! journal around each call, and the stdio session.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ServerCapabilities,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::challenge::Challenge;
use crate::change::ChangeInfo;
use crate::framing::{MAX_MESSAGE_BYTES, serve_framed};
use crate::fsafe::{ChangeDir, validate_change_id};
use crate::journal::Journal;
use crate::review::Review;
use crate::{McpError, ServerConfig};

const INSTRUCTIONS: &str = "gavel's review tools for one change. Call get_change to see the \
change's phase, files and open tasks; submit an implementation review with create_review \
(writes REVIEW.md) or a planning verdict with submit_challenge (appends to proposal.md). \
Call the submitting tool once: a second submission in the same call is refused.";

/// The tools that hand in a verdict: each is accepted once per agent call (the first
/// submission counts; a later one is refused with a tool error).
const SUBMITTING: [&str; 2] = ["create_review", "submit_challenge"];

/// `get_change` takes no arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// The server: one change folder, its id, and an optional journal.
#[derive(Debug, Clone)]
pub struct GavelMcp {
    dir: ChangeDir,
    change_id: String,
    journal: Option<Journal>,
    /// One tool call at a time, so a journal lookup and its record cannot interleave.
    lock: Arc<tokio::sync::Mutex<()>>,
    /// The submitting tools that succeeded in this session, with their confirmations.
    submitted: Arc<std::sync::Mutex<Vec<(String, String)>>>,
    tool_router: ToolRouter<Self>,
}

impl GavelMcp {
    /// Checks the configuration (id, folder) and builds the server.
    pub fn new(config: ServerConfig) -> Result<Self, McpError> {
        validate_change_id(&config.change_id)?;
        let dir = ChangeDir::open(&config.change_dir)?;
        let journal = config
            .journal
            .as_deref()
            .map(|given| Journal::inside(&dir, given))
            .transpose()?;
        let mut tool_router = Self::tool_router();
        if let Some(only) = &config.tools {
            if let Some(unknown) = only.iter().find(|t| !tool_router.has_route(t)) {
                return Err(McpError::UnknownTool(unknown.clone()));
            }
            let all: Vec<String> = tool_router
                .list_all()
                .into_iter()
                .map(|t| t.name.to_string())
                .collect();
            for name in all.iter().filter(|n| !only.contains(n)) {
                tool_router.remove_route(name);
            }
        }
        Ok(Self {
            dir,
            change_id: config.change_id,
            journal,
            lock: Arc::new(tokio::sync::Mutex::new(())),
            submitted: Arc::default(),
            tool_router,
        })
    }

    /// The names of the tools this server serves.
    pub fn tool_names(&self) -> Vec<String> {
        self.tool_router
            .list_all()
            .into_iter()
            .map(|t| t.name.to_string())
            .collect()
    }

    /// Each tool's name with its input schema, as `tools/list` serves them.
    pub fn input_schemas(&self) -> Vec<(String, serde_json::Value)> {
        self.tool_router
            .list_all()
            .into_iter()
            .map(|t| {
                let schema = serde_json::Value::Object((*t.input_schema).clone());
                (t.name.to_string(), schema)
            })
            .collect()
    }

    /// `create_review`'s work: writes REVIEW.md, returns the confirmation.
    pub fn write_review(&self, review: &Review) -> Result<String, McpError> {
        self.dir
            .write("REVIEW.md", &review.to_markdown(&self.change_id))?;
        Ok(review.confirmation())
    }

    /// `submit_challenge`'s work.
    pub fn write_challenge(&self, challenge: &Challenge) -> Result<String, McpError> {
        challenge.submit(&self.dir, &self.change_id)
    }

    /// Why a call of `tool` must be refused as a second submission: `tool` already succeeded
    /// in this session, or (with a journal) in an earlier session of the same agent call.
    fn already_submitted(&self, tool: &str) -> Result<Option<String>, McpError> {
        if !SUBMITTING.contains(&tool) {
            return Ok(None);
        }
        let earlier = self
            .submitted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .find(|(t, _)| t == tool)
            .map(|(_, confirmation)| confirmation.clone());
        let earlier = match (earlier, &self.journal) {
            (Some(c), _) => Some(c),
            (None, Some(journal)) => journal.first_result(tool)?.map(|v| confirmation_of(&v)),
            (None, None) => None,
        };
        Ok(earlier.map(|confirmation| {
            format!(
                "refused: {tool} was already called successfully in this call ({confirmation}); \
                 the first submission counts and this one was not written. Do not call {tool} again."
            )
        }))
    }

    /// `get_change`'s work.
    pub fn change_info(&self) -> Result<ChangeInfo, McpError> {
        ChangeInfo::read(&self.dir, &self.change_id)
    }
}

/// The text of a recorded tool result (its first text block).
fn confirmation_of(result: &serde_json::Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or("recorded in the journal")
        .to_owned()
}

/// A tool's outcome as MCP content: text on success, an error result the agent can read.
fn reply(outcome: Result<String, McpError>) -> CallToolResult {
    match outcome {
        Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
        Err(e) => {
            // The causes too (`could not write proposal.md: File too large`).
            let mut text = e.to_string();
            let mut cause = std::error::Error::source(&e);
            while let Some(c) = cause {
                text.push_str(&format!(": {c}"));
                cause = c.source();
            }
            tracing::warn!(error = %text, "tool call refused");
            CallToolResult::error(vec![ContentBlock::text(text)])
        }
    }
}

#[tool_router]
impl GavelMcp {
    #[tool(
        description = "Submit the structured implementation review of this change: a verdict \
        (APPROVED, NEEDS_FIX or MAJOR_ISSUES), a summary, and the issues found. Writes REVIEW.md."
    )]
    fn create_review(&self, Parameters(review): Parameters<Review>) -> CallToolResult {
        reply(self.write_review(&review))
    }

    #[tool(
        description = "Submit the challenge of this change's plan: a verdict (APPROVED, \
        NEEDS_REVISION or REJECTED) and the findings. Appends a Challenge section to \
        proposal.md and writes challenge.json."
    )]
    fn submit_challenge(&self, Parameters(challenge): Parameters<Challenge>) -> CallToolResult {
        reply(self.write_challenge(&challenge))
    }

    #[tool(
        description = "Describe this change: its phase, the files of its folder, and its open \
        tasks (JSON)."
    )]
    fn get_change(&self, Parameters(NoArgs {}): Parameters<NoArgs>) -> CallToolResult {
        reply(
            self.change_info()
                .map(|info| serde_json::to_string_pretty(&info).unwrap_or_default()),
        )
    }
}

fn internal(e: impl std::fmt::Display) -> ErrorData {
    ErrorData::internal_error(e.to_string(), None)
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for GavelMcp {
    fn get_info(&self) -> rmcp::model::ServerConfig {
        rmcp::model::ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("gavel", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS.to_owned())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let _one_at_a_time = self.lock.lock().await;
        let id = serde_json::to_value(&context.id).map_err(internal)?;
        let tool = request.name.to_string();
        if let Some(journal) = &self.journal
            && let Some(recorded) = journal.lookup(&id, &tool).map_err(internal)?
        {
            tracing::info!(%tool, %id, "replaying the recorded result");
            let result: CallToolResult = serde_json::from_value(recorded).map_err(internal)?;
            return Ok(result.into());
        }
        if let Some(why) = self.already_submitted(&tool).map_err(internal)? {
            tracing::warn!(%tool, %id, "second submission refused");
            return Ok(CallToolResult::error(vec![ContentBlock::text(why)]).into());
        }
        // The tool's file work runs off the runtime's thread, so that however long it takes,
        // the end of stdin is still seen and ends the session.
        let this = self.clone();
        let response = tokio::task::spawn_blocking(move || {
            tokio::runtime::Handle::current().block_on(
                this.tool_router
                    .call(ToolCallContext::new(&this, request, context)),
            )
        })
        .await
        .map_err(internal)??;
        if let CallToolResponse::Complete(result) = &response
            && result.is_error != Some(true)
        {
            let value = serde_json::to_value(result).map_err(internal)?;
            if SUBMITTING.contains(&tool.as_str()) {
                self.submitted
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push((tool.clone(), confirmation_of(&value)));
            }
            if let Some(journal) = &self.journal {
                journal.record(id, &tool, value).map_err(internal)?;
            }
        }
        Ok(response)
    }
}

/// Serves `server` on stdin/stdout until the client goes away (stdin closes), with gavel's
/// framing in front of rmcp's (see [`crate::framing`]).
pub(crate) async fn run_stdio(server: GavelMcp) -> Result<(), McpError> {
    run_framed(
        server,
        tokio::io::stdin(),
        tokio::io::stdout(),
        MAX_MESSAGE_BYTES,
    )
    .await
}

/// Serves `server` on `input`/`output`, refusing messages over `cap` bytes.
pub(crate) async fn run_framed<I, O>(
    server: GavelMcp,
    input: I,
    output: O,
    cap: usize,
) -> Result<(), McpError>
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
{
    serve_framed(input, output, cap, |read, write| async move {
        let running = server
            .serve((read, write))
            .await
            .map_err(|e| McpError::Session(e.to_string()))?;
        let reason = running
            .waiting()
            .await
            .map_err(|e| McpError::Session(e.to_string()))?;
        tracing::info!(?reason, "MCP session ended");
        Ok(())
    })
    .await
}
