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

    /// Events of a run as text, for `contains` checks.
    pub fn timeline(&self, run: RunId) -> String {
        serde_json::to_string(&self.store.events(run).expect("events")).expect("json")
    }
}

/// "Answer gate `gate` with `choice`".
pub fn answer(gate: &GateRequest, choice: &str) -> Option<GateAnswer> {
    Some(GateAnswer {
        gate_id: gate.id.clone(),
        choice: choice.into(),
        feedback: None,
    })
}
