//! A node's blobs (`NodeCtx::put_blob`, `artifact`) are kept until its checkpoint and stored
//! with it; when no checkpoint follows (a gate, a halt, a failure), they are stored before the
//! events that name them, so every recorded artifact can be read back.

use gavel_core::{
    ContentHash, Engine, EventKind, FixedClock, NodeCtx, NodeError, Outcome, Store, Transition,
    Workflow,
};

use crate::engine_toy::{NOW, holder};

/// One node that keeps an artifact and then ends the way its name says.
struct Keeper;

impl Workflow for Keeper {
    type State = ();

    fn name(&self) -> &'static str {
        "keeper"
    }

    fn run_node(
        &self,
        node: &str,
        _: &mut (),
        cx: &mut NodeCtx<'_>,
    ) -> Result<Transition, NodeError> {
        cx.artifact(
            gavel_core::ArtifactKind::Draft,
            format!("{node}.md"),
            content(node).as_bytes(),
            &[],
        )?;
        // Read back before any store write: the kept bytes serve it.
        assert_eq!(cx.get_blob(&hash(node))?, content(node).as_bytes());
        match node {
            "gate" => Ok(Transition::Gate(cx.gate("decide", "Go on?", Vec::new()))),
            "halt" => Ok(Transition::Halt {
                reason: "halted on purpose".into(),
            }),
            "fail" => Err(NodeError::Failed("failed on purpose".into())),
            _ => Ok(Transition::Done {
                summary: "done".into(),
            }),
        }
    }
}

fn content(node: &str) -> String {
    format!("# The {node} node's artifact\n\nkept until the node ends\n")
}

fn hash(node: &str) -> ContentHash {
    ContentHash::of(content(node).as_bytes())
}

fn every_artifact_reads_back(store: &dyn Store) {
    let clock = FixedClock(NOW.parse().expect("a valid timestamp"));
    let engine = Engine::new(store, &Keeper, &clock, holder(1, "test"));
    for node in ["done", "gate", "halt", "fail"] {
        let run = engine.start(node, &(), node).expect("start");
        let outcome = engine.drive(run, None).expect("drive");
        let expected = match node {
            "done" => matches!(outcome, Outcome::Done { .. }),
            "gate" => matches!(outcome, Outcome::Waiting(_)),
            "halt" => matches!(outcome, Outcome::Halted { .. }),
            _ => matches!(outcome, Outcome::Failed { .. }),
        };
        assert!(expected, "{node}: {outcome:?}");
        let named: Vec<ContentHash> = store
            .events(run)
            .expect("events")
            .into_iter()
            .filter_map(|e| match e.kind {
                EventKind::Artifact { content, .. } => content,
                _ => None,
            })
            .collect();
        assert_eq!(named, [hash(node)], "{node}: the artifact is recorded");
        assert_eq!(
            store.get_blob(&hash(node)).expect("get_blob").as_deref(),
            Some(content(node).as_bytes()),
            "{node}: the recorded artifact's blob is stored"
        );
    }
}

on_every_store!(every_artifact_reads_back);
