//! One call as rules see it: its command split once, matched by the
//! lists' two readings (any part, every part).

use zr_types::ToolDefinition;

use super::shell::{self, Split, split};
use super::{PermissionRule, RuleBase, Specifier, Subject};

/// One call, its command split once.
pub(crate) struct Call<'c> {
    tool: &'c ToolDefinition,
    subject: &'c Subject<'c>,
    base: &'c RuleBase<'c>,
    split: Option<Split>,
}

impl<'c> Call<'c> {
    pub(crate) fn new(
        tool: &'c ToolDefinition,
        subject: &'c Subject<'c>,
        base: &'c RuleBase<'c>,
    ) -> Self {
        let split = match subject {
            Subject::Command(command) => Some(split(command)),
            _ => None,
        };
        Self {
            tool,
            subject,
            base,
            split,
        }
    }

    /// The first rule that matches the call or, for a command, any part of
    /// it (or, when it cannot be split, its whole text).
    pub(crate) fn any<'r>(&self, rules: &'r [PermissionRule]) -> Option<&'r PermissionRule> {
        rules.iter().find(|rule| {
            if !rule.applies_to(self.tool) {
                return false;
            }
            match (&rule.specifier, &self.split, self.subject) {
                (None, _, _) => true,
                (Some(Specifier::Command(p)), Some(split), Subject::Command(raw)) => {
                    split
                        .parts
                        .iter()
                        .any(|part| p.matches(part) || p.matches(shell::without_assignments(part)))
                        || (!split.complete && p.matches(&shell::normalize(raw)))
                }
                (Some(spec), _, subject) => spec_matches(spec, subject, self.base),
            }
        })
    }

    /// The rule that allows the call: one that matches it or, for a
    /// command, the one matching its first part when every part is matched.
    pub(crate) fn every<'r>(&self, rules: &'r [PermissionRule]) -> Option<&'r PermissionRule> {
        let applying = || rules.iter().filter(|rule| rule.applies_to(self.tool));
        if let Some(rule) = applying().find(|rule| rule.specifier.is_none()) {
            return Some(rule);
        }
        let Some(split) = &self.split else {
            return applying().find(|rule| {
                rule.specifier
                    .as_ref()
                    .is_some_and(|spec| spec_matches(spec, self.subject, self.base))
            });
        };
        if !split.complete || split.parts.is_empty() {
            return None;
        }
        let mut first = None;
        for part in &split.parts {
            let rule = applying().find(
                |rule| matches!(&rule.specifier, Some(Specifier::Command(p)) if p.matches(part)),
            )?;
            first.get_or_insert(rule);
        }
        first
    }
}

/// Whether `spec` matches a subject that is not a split command.
fn spec_matches(spec: &Specifier, subject: &Subject<'_>, base: &RuleBase<'_>) -> bool {
    match (spec, subject) {
        (Specifier::Command(p), Subject::Command(command)) => p.matches(&shell::normalize(command)),
        (Specifier::Path(p), Subject::Path(path)) => p.matches(path, base),
        (Specifier::Domain(p), Subject::Url { host }) => p.matches(host),
        (Specifier::Argument(a), Subject::Argument(b)) => a == b,
        _ => false,
    }
}
