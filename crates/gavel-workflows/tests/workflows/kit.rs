//! The workflow test kit: a hermetic git repository, the memory store, a fixed clock, and
//! helpers to drive a run and answer its gates by value.

use std::path::{Path, PathBuf};
use std::process::Command;

use gavel_core::{
    Engine, EngineError, FixedClock, GateAnswer, GateRequest, LockInfo, Outcome, RunId, RunStore,
    Workflow,
};
use gavel_store_testkit::MemoryStore;

/// A temporary git repository with a first commit, plus a memory store and a fixed clock.
pub struct Kit {
    _tmp: tempfile::TempDir,
    pub repo: PathBuf,
    pub store: MemoryStore,
    pub clock: FixedClock,
}

impl Kit {
    pub fn new() -> Self {
        let tmp = tempfile::tempdir().expect("tempdir");
        let repo = tmp.path().canonicalize().expect("canonical").join("repo");
        std::fs::create_dir_all(&repo).expect("mkdir");
        let kit = Self {
            _tmp: tmp,
            repo,
            store: MemoryStore::new(),
            clock: FixedClock("2026-01-30T14:33:20Z".parse().expect("time")),
        };
        kit.git(&["init", "-q", "-b", "main"]);
        kit.write("README.md", "hello\n");
        kit.git(&["add", "-A"]);
        kit.git(&["commit", "-q", "-m", "init"]);
        kit
    }

    /// Runs git in the repository with an isolated configuration; returns stdout.
    pub fn git(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(&self.repo)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "Test")
            .env("GIT_AUTHOR_EMAIL", "test@example.invalid")
            .env("GIT_COMMITTER_NAME", "Test")
            .env("GIT_COMMITTER_EMAIL", "test@example.invalid")
            .output()
            .expect("git");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.repo.join(rel);
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p).expect("mkdir");
        }
        std::fs::write(&path, text).expect("write");
        path
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.repo.join(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.repo.join(rel)
    }

    pub fn root(&self) -> &Path {
        &self.repo
    }

    /// An engine for `wf` on this kit's store and clock.
    pub fn engine<'a, W: Workflow>(&'a self, wf: &'a W) -> Engine<'a, W> {
        Engine::new(
            &self.store,
            wf,
            &self.clock,
            LockInfo {
                pid: 1,
                host: String::new(),
                command: "kit".into(),
                since: String::new(),
            },
        )
    }

    /// Drives `run` and expects it to wait at a gate, which it returns.
    pub fn to_gate<W: Workflow>(
        &self,
        wf: &W,
        run: RunId,
        answer: Option<GateAnswer>,
    ) -> GateRequest {
        match self.engine(wf).drive(run, answer) {
            Ok(Outcome::Waiting(gate)) => gate,
            other => panic!("expected a gate, got {other:?}"),
        }
    }

    /// Drives `run` with `answer` and returns the outcome.
    pub fn drive<W: Workflow>(
        &self,
        wf: &W,
        run: RunId,
        answer: Option<GateAnswer>,
    ) -> Result<Outcome, EngineError> {
        self.engine(wf).drive(run, answer)
    }

    /// The run's last checkpointed state.
    pub fn state<T: serde::de::DeserializeOwned>(&self, run: RunId) -> T {
        let head = self.store.head(run).expect("head").expect("checkpoint");
        serde_json::from_slice(&head.state).expect("state")
    }

    /// Writes a scripted provider's script beside the repository (never in it, so that no
    /// run sees it in a diff) with each role's answers in order; returns its path.
    pub fn script(&self, roles: &[(&str, &[&str])]) -> PathBuf {
        let mut script = String::from("model: gpt-4o\nroles:\n");
        for (role, answers) in roles.iter().filter(|(_, a)| !a.is_empty()) {
            script.push_str(&format!("  {role}:\n"));
            for a in *answers {
                script.push_str(&format!("    - text: {}\n", yaml(a)));
            }
        }
        let path = self.repo.with_file_name("script.yaml");
        std::fs::write(&path, script).expect("write the script");
        path
    }

    /// Events of a run as text, for `contains` checks.
    pub fn timeline(&self, run: RunId) -> String {
        serde_json::to_string(&self.store.events(run).expect("events")).expect("json")
    }
}

/// The names of a gate's choices, in order.
pub fn choices(gate: &GateRequest) -> Vec<&str> {
    gate.choices.iter().map(|c| c.name.as_str()).collect()
}

/// The reason of a run that halted (anything else fails the test).
pub fn halted(out: Result<Outcome, EngineError>) -> String {
    match out {
        Ok(Outcome::Halted { reason }) => reason,
        other => panic!("expected a halt, got {other:?}"),
    }
}

/// The reason of a run that was aborted (anything else fails the test).
pub fn aborted(out: Result<Outcome, EngineError>) -> String {
    match out {
        Ok(Outcome::Aborted { reason }) => reason,
        other => panic!("expected an abort, got {other:?}"),
    }
}

/// Model-call settings for a test: no budget, no price table, any model.
pub fn calls() -> gavel_workflows::caller::CallerSettings {
    gavel_workflows::caller::CallerSettings {
        budget_override: None,
        prices: gavel_llm::PriceTable::default(),
        strict_models: false,
        max_output_tokens: 1000,
        team_budget_micros: None,
    }
}

/// `s` as a YAML (JSON) string, for a script.
pub fn yaml(s: &str) -> String {
    serde_json::to_string(s).expect("json")
}

/// "Answer gate `gate` with `choice`".
pub fn answer(gate: &GateRequest, choice: &str) -> Option<GateAnswer> {
    Some(GateAnswer {
        gate_id: gate.id.clone(),
        choice: choice.into(),
        feedback: None,
    })
}
