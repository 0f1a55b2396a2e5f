//! Structured output for a call whose answer is a verdict (issue 35): whether to ask for the
//! schema, what the ledger records of how it was asked, and the refusal a run remembers.
//!
//! A service that refused the schema (the provider says so with
//! [`AnswerForm::PlainAfterRefusal`]) is kept in the run's [`Spend`] by role and provider, so
//! the role's later calls ask in plain text, in this process or after a resume, where the
//! provider itself remembers nothing. A role given another provider is asked again.

use gavel_core::Spend;
use gavel_llm::{AnswerForm, OutputSchema, Role};

/// How one call asks for its answer.
pub(super) struct Asking {
    /// The schema the call wants, if it wants one.
    wanted: bool,
    /// The service refused the schema earlier in the run: asked in plain text.
    refused_before: bool,
}

impl Asking {
    /// Decides for a call of `role` played by `provider` that wants `schema`; returns the
    /// schema to put in the request.
    pub(super) fn decide(
        s: &Spend,
        schema: Option<&OutputSchema>,
        role: Role,
        provider: &str,
    ) -> (Self, Option<OutputSchema>) {
        let refused_before = schema.is_some() && s.schema_refused_by(role.as_str(), provider);
        let asking = Self {
            wanted: schema.is_some(),
            refused_before,
        };
        (asking, schema.filter(|_| !refused_before).cloned())
    }

    /// The form the ledger records (`None` for a call that wanted plain text), and whether the
    /// service refused the schema in this very call, which is then remembered in `s`.
    pub(super) fn settle(
        &self,
        s: &mut Spend,
        answered: AnswerForm,
        role: Role,
        provider: &str,
    ) -> (Option<String>, bool) {
        if !self.wanted {
            return (None, false);
        }
        if self.refused_before {
            return (Some(form_name(AnswerForm::PlainAfterRefusal)), false);
        }
        let refused_now = answered == AnswerForm::PlainAfterRefusal;
        if refused_now {
            s.remember_schema_refusal(role.as_str(), provider);
        }
        (Some(form_name(answered)), refused_now)
    }
}

/// The name an [`AnswerForm`] is stored under (its serde name, as `CallLedger::form` keeps it).
fn form_name(form: AnswerForm) -> String {
    match serde_json::to_value(form) {
        Ok(serde_json::Value::String(name)) => name,
        _ => form.as_str().to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> OutputSchema {
        crate::verdict::output_schema()
    }

    #[test]
    fn the_names_are_the_serde_names() {
        assert_eq!(form_name(AnswerForm::Plain), "plain");
        assert_eq!(form_name(AnswerForm::Schema), "schema");
        assert_eq!(
            form_name(AnswerForm::PlainAfterRefusal),
            "plain_after_refusal"
        );
    }

    #[test]
    fn a_call_that_wants_plain_text_records_no_form() {
        let mut s = Spend::default();
        let (asking, asked) = Asking::decide(&s, None, Role::DRAFTER, "p");
        assert_eq!(asked, None);
        assert_eq!(
            asking.settle(&mut s, AnswerForm::Plain, Role::DRAFTER, "p"),
            (None, false)
        );
    }

    #[test]
    fn a_refusal_is_remembered_for_the_role_and_provider() {
        let mut s = Spend::default();
        let wanted = schema();
        let (asking, asked) = Asking::decide(&s, Some(&wanted), Role::REVIEWER, "p");
        assert_eq!(asked.as_ref(), Some(&wanted));
        let settled = asking.settle(&mut s, AnswerForm::PlainAfterRefusal, Role::REVIEWER, "p");
        assert_eq!(settled, (Some("plain_after_refusal".into()), true));
        // The next call of the role asks plain and says why; nothing is noted again.
        let (asking, asked) = Asking::decide(&s, Some(&wanted), Role::REVIEWER, "p");
        assert_eq!(asked, None);
        let settled = asking.settle(&mut s, AnswerForm::Plain, Role::REVIEWER, "p");
        assert_eq!(settled, (Some("plain_after_refusal".into()), false));
        // Another provider for the role, or another role, is asked again.
        let (_, asked) = Asking::decide(&s, Some(&wanted), Role::REVIEWER, "q");
        assert_eq!(asked.as_ref(), Some(&wanted));
        let (_, asked) = Asking::decide(&s, Some(&wanted), Role::named("challenger"), "p");
        assert_eq!(asked.as_ref(), Some(&wanted));
    }

    #[test]
    fn a_followed_schema_is_recorded_and_nothing_is_remembered() {
        let mut s = Spend::default();
        let wanted = schema();
        let (asking, _) = Asking::decide(&s, Some(&wanted), Role::REVIEWER, "p");
        let settled = asking.settle(&mut s, AnswerForm::Schema, Role::REVIEWER, "p");
        assert_eq!(settled, (Some("schema".into()), false));
        assert!(s.schema_refused.is_empty());
    }
}
