//! What an agent may do during one call: its tools, working folder, turn cap, MCP servers,
//! extra environment and the operating system's confinement ([`AgentProfile`]).
//!
//! A workflow chooses the profile per call in [`crate::Request::profile`]; each agent CLI's
//! adapter (`cli/claude.rs`, `cli/gemini.rs`, `cli/codex.rs`) turns it into that CLI's own
//! flags and per-call settings, never touching the person's global configuration. The default,
//! [`AgentProfile::text_only`], is a drafting or reviewing call: no tools, one turn, gavel's
//! empty agent folder, no MCP servers. The HTTP API providers run no agent and refuse any
//! profile that asks for tools or MCP servers.
//!
//! A CLI's own permission rules are the CLI's word; [`AgentProfile::confine`] is the operating
//! system's: the whole process tree of the call may write only beneath the given folders (plus
//! the call's private temporary folder and the CLI's own state, which the provider adds).

use std::path::{Path, PathBuf};

use gavel_exec::confine::Confinement;

/// The tools an agent may use.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Tools {
    /// None: the model can only answer.
    #[default]
    None,
    /// Read and search files, never write.
    ReadOnly,
    /// Read, and create or edit files inside this folder (absolute) only.
    EditWithin(PathBuf),
    /// Edit inside `within` (absolute), and run the shell commands that are, or start with,
    /// one of `allowed` (e.g. `cargo test`).
    Shell {
        within: PathBuf,
        allowed: Vec<String>,
    },
}

impl Tools {
    /// The folder the agent may write in, if any.
    pub fn edit_folder(&self) -> Option<&Path> {
        match self {
            Self::EditWithin(dir) | Self::Shell { within: dir, .. } => Some(dir),
            Self::None | Self::ReadOnly => None,
        }
    }

    /// The shell commands the agent may run (empty: none).
    pub fn allowed_commands(&self) -> &[String] {
        match self {
            Self::Shell { allowed, .. } => allowed,
            _ => &[],
        }
    }
}

/// An MCP server (stdio) started by the CLI for one call only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServer {
    /// Letters, digits, `-` and `_`. The CLIs name the server's tools after it
    /// (`mcp__NAME__TOOL` in Claude Code, `mcp_NAME_TOOL` in the Gemini CLI).
    pub name: String,
    /// The program (a path, or a name on PATH).
    pub command: String,
    pub args: Vec<String>,
    /// Environment for the server alone, not for the CLI.
    pub env: Vec<(String, String)>,
}

/// What an agent CLI may do during one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentProfile {
    pub tools: Tools,
    /// Where the CLI runs (absolute). `None`: the edit folder of [`AgentProfile::tools`] if it
    /// has one, else gavel's empty agent folder (`.gavel/agent-workdir/`).
    pub workdir: Option<PathBuf>,
    /// At most this many model turns (each tool round is a turn).
    pub max_turns: u32,
    /// MCP servers given to the CLI for this call only.
    pub mcp_servers: Vec<McpServer>,
    /// Extra environment for the CLI.
    pub env: Vec<(String, String)>,
    /// Run the CLI through this Landlock launcher, writing only beneath its `writable` paths
    /// (`None`: unconfined). The CLI provider adds the call's private temporary folder (the
    /// child's `TMPDIR`, `TMP` and `TEMP`) and the CLI's own state files and folders.
    pub confine: Option<Confinement>,
    /// A file the agent hands its answer in through (an MCP tool writes it, as `create_review`
    /// writes `REVIEW.md`), absent when the call starts. When it exists after the CLI ends, the
    /// attempt answered, even if the CLI then ended with an error (a turn limit): the answer
    /// stands and the call is not retried.
    pub answer_file: Option<PathBuf>,
}

impl Default for AgentProfile {
    fn default() -> Self {
        Self::text_only()
    }
}

impl AgentProfile {
    /// A drafting or reviewing call: no tools, one turn, gavel's empty agent folder, no MCP
    /// servers, no extra environment.
    pub fn text_only() -> Self {
        Self {
            tools: Tools::None,
            workdir: None,
            max_turns: 1,
            mcp_servers: Vec::new(),
            env: Vec::new(),
            confine: None,
            answer_file: None,
        }
    }

    /// An agent that reads and edits files in `folder` (absolute), running there, for at most
    /// `max_turns` turns.
    pub fn edit_within(folder: impl Into<PathBuf>, max_turns: u32) -> Self {
        Self {
            tools: Tools::EditWithin(folder.into()),
            max_turns,
            ..Self::text_only()
        }
    }

    /// Names the file the agent hands its answer in through (see [`Self::answer_file`]).
    pub fn with_answer_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.answer_file = Some(path.into());
        self
    }

    /// Adds an MCP server for this call.
    pub fn with_mcp_server(mut self, server: McpServer) -> Self {
        self.mcp_servers.push(server);
        self
    }

    /// Confines the call's process tree to writing beneath `writable` (and what the provider
    /// adds), through `launcher`.
    pub fn confined(
        mut self,
        launcher: gavel_exec::confine::Launcher,
        writable: Vec<PathBuf>,
    ) -> Self {
        self.confine = Some(Confinement {
            launcher,
            writable,
            read_only: Vec::new(),
            network: true,
        });
        self
    }

    /// Whether the call gives the model anything to act with (tools or MCP servers).
    pub fn uses_tools(&self) -> bool {
        self.tools != Tools::None || !self.mcp_servers.is_empty()
    }

    /// The folder the CLI runs in, when the profile chooses one (see
    /// [`AgentProfile::workdir`]); `None` means gavel's own agent folder.
    pub fn working_folder(&self) -> Option<&Path> {
        self.workdir.as_deref().or_else(|| self.tools.edit_folder())
    }

    /// Checks what every CLI needs: absolute folders, a turn, well-formed MCP server names,
    /// allowed commands and variables.
    pub fn check(&self) -> Result<(), ProfileError> {
        if self.max_turns == 0 {
            return Err(ProfileError::NoTurns);
        }
        let confined = self
            .confine
            .iter()
            .flat_map(|c| &c.writable)
            .map(PathBuf::as_path);
        for dir in [self.workdir.as_deref(), self.tools.edit_folder()]
            .into_iter()
            .flatten()
            .chain(confined)
        {
            if !dir.is_absolute() {
                return Err(ProfileError::RelativeFolder(dir.to_path_buf()));
            }
        }
        for command in self.tools.allowed_commands() {
            let bad = |c: char| c.is_control() || matches!(c, '(' | ')' | '*' | ',' | '"');
            if command.trim().is_empty() || command.trim() != command || command.contains(bad) {
                return Err(ProfileError::BadCommand(command.clone()));
            }
        }
        let mut names: Vec<&str> = Vec::new();
        for server in &self.mcp_servers {
            let ok = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
            if server.name.is_empty() || !server.name.chars().all(ok) {
                return Err(ProfileError::BadServerName(server.name.clone()));
            }
            if names.contains(&server.name.as_str()) {
                return Err(ProfileError::DuplicateServer(server.name.clone()));
            }
            names.push(&server.name);
            if server.command.trim().is_empty() {
                return Err(ProfileError::NoCommand(server.name.clone()));
            }
        }
        let vars = self
            .env
            .iter()
            .chain(self.mcp_servers.iter().flat_map(|s| &s.env));
        for (name, value) in vars {
            if name.is_empty() || name.contains(['=', '\0']) || value.contains('\0') {
                return Err(ProfileError::BadVariable(name.clone()));
            }
        }
        Ok(())
    }
}

/// Why a profile cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProfileError {
    #[error("an agent profile needs at least one turn (max_turns = 0)")]
    NoTurns,
    #[error("the agent's folder must be an absolute path: {}", .0.display())]
    RelativeFolder(PathBuf),
    #[error(
        "allowed shell command `{0}` is empty, has surrounding spaces, or contains a control character or one of ( ) * , \""
    )]
    BadCommand(String),
    #[error("MCP server name `{0}` may only hold letters, digits, `-` and `_`")]
    BadServerName(String),
    #[error("MCP server `{0}` is given twice")]
    DuplicateServer(String),
    #[error("MCP server `{0}` has no command")]
    NoCommand(String),
    #[error("environment variable name `{0}` is empty or holds `=` or NUL (or its value NUL)")]
    BadVariable(String),
    /// The CLI has no way to do what the profile asks.
    #[error("{cli} cannot {what}")]
    Unsupported { cli: &'static str, what: String },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(name: &str) -> McpServer {
        McpServer {
            name: name.into(),
            command: "gavel".into(),
            args: vec!["mcp".into()],
            env: Vec::new(),
        }
    }

    #[test]
    fn text_only_is_the_default_and_uses_nothing() {
        let p = AgentProfile::default();
        assert_eq!(p, AgentProfile::text_only());
        assert_eq!((p.tools.clone(), p.max_turns), (Tools::None, 1));
        assert!(!p.uses_tools());
        assert_eq!(p.working_folder(), None, "gavel's own agent folder");
        assert_eq!(p.check(), Ok(()));
        assert!(
            AgentProfile::text_only()
                .with_mcp_server(server("gavel"))
                .uses_tools()
        );
    }

    #[test]
    fn an_editing_agent_runs_in_its_folder_unless_told_otherwise() {
        let mut p = AgentProfile::edit_within("/w/tree", 20);
        assert_eq!(p.working_folder(), Some(Path::new("/w/tree")));
        p.workdir = Some("/w".into());
        assert_eq!(p.working_folder(), Some(Path::new("/w")));
        assert_eq!(p.check(), Ok(()));
    }

    #[test]
    fn malformed_profiles_are_refused_before_any_cli_runs() {
        let shell = |cmd: &str| AgentProfile {
            tools: Tools::Shell {
                within: "/w".into(),
                allowed: vec![cmd.into()],
            },
            ..AgentProfile::text_only()
        };
        assert_eq!(shell("cargo test").check(), Ok(()));
        for bad in ["", " cargo", "cargo test)", "rm *", "a\nb", "a,b"] {
            assert!(
                matches!(shell(bad).check(), Err(ProfileError::BadCommand(_))),
                "{bad:?}"
            );
        }
        let relative = AgentProfile::edit_within("tree", 3);
        assert!(matches!(
            relative.check(),
            Err(ProfileError::RelativeFolder(_))
        ));
        let no_turns = AgentProfile {
            max_turns: 0,
            ..AgentProfile::text_only()
        };
        assert_eq!(no_turns.check(), Err(ProfileError::NoTurns));
        for name in ["", "a b", "a.b", "ü"] {
            let p = AgentProfile::text_only().with_mcp_server(server(name));
            assert!(
                matches!(p.check(), Err(ProfileError::BadServerName(_))),
                "{name:?}"
            );
        }
        let twice = AgentProfile::text_only()
            .with_mcp_server(server("gavel"))
            .with_mcp_server(server("gavel"));
        assert!(matches!(
            twice.check(),
            Err(ProfileError::DuplicateServer(_))
        ));
        let bad_var = AgentProfile {
            env: vec![("A=B".into(), "1".into())],
            ..AgentProfile::text_only()
        };
        assert!(matches!(bad_var.check(), Err(ProfileError::BadVariable(_))));
        let launcher = gavel_exec::confine::Launcher {
            program: "/usr/bin/gavel".into(),
            args: vec!["__confine".into()],
        };
        let confined = AgentProfile::edit_within("/w", 3).confined(launcher, vec!["w".into()]);
        assert!(matches!(
            confined.check(),
            Err(ProfileError::RelativeFolder(_))
        ));
    }
}
