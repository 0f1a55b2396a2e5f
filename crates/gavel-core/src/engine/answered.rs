//! A gate answered by a person is on the record in every workflow: the engine adds the
//! `GateAnswered` event to the node that consumed the answer when the node did not record it
//! itself, so `gavel show`, the UI and the report show each gate's answer, who gave it and
//! when, whatever the workflow.

use crate::event::{Event, EventKind};
use crate::gate::GateAnswer;

/// Puts "gate X answered C by person" first among the events of the node that consumed a
/// person's answer, unless the node recorded that answer itself: every answered gate shows
/// its answer, who gave it and when, in every workflow. (Auto mode never pauses at a gate;
/// its nodes record their own answers `by auto`.)
pub(super) fn answered_event(events: &mut Vec<Event>, answer: GateAnswer, at: String) {
    let recorded = events.iter().any(
        |e| matches!(&e.kind, EventKind::GateAnswered { gate, .. } if *gate == answer.gate_id),
    );
    if !recorded {
        events.insert(
            0,
            Event {
                at,
                kind: EventKind::GateAnswered {
                    gate: answer.gate_id,
                    choice: answer.choice,
                    by: "person".into(),
                },
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer() -> GateAnswer {
        GateAnswer {
            gate_id: "review@7".into(),
            choice: "approve".into(),
            feedback: None,
        }
    }

    #[test]
    fn an_unrecorded_answer_is_put_first_and_a_recorded_one_is_not_repeated() {
        let note = Event {
            at: "t1".into(),
            kind: EventKind::Note { text: "n".into() },
        };
        let mut events = vec![note.clone()];
        answered_event(&mut events, answer(), "t0".into());
        assert_eq!(events.len(), 2);
        assert_eq!(
            events[0].kind,
            EventKind::GateAnswered {
                gate: "review@7".into(),
                choice: "approve".into(),
                by: "person".into()
            }
        );
        assert_eq!(events[0].at, "t0");
        answered_event(&mut events, answer(), "t2".into());
        assert_eq!(events.len(), 2, "already recorded");
    }
}
