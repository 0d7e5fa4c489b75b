//! What a call touches, as the permission rules see it, and the rules'
//! verdict over it.

use std::path::{Path, PathBuf};

use zr_caps::{PermissionRules, RuleBase, RuleMatch, Subject, Verdict};
use zr_types::{Access, ToolDefinition};

/// Whether an allow rule that names a path (`Read(~/.cargo/**)`, not a
/// bare `Read`) lets `tool` read `path` (resolved): rules widen the
/// readable roots.
pub(super) fn reads_allowed(
    rules: &PermissionRules,
    tool: &ToolDefinition,
    path: &Path,
    base: &RuleBase<'_>,
) -> bool {
    let naming = PermissionRules {
        allow: rules
            .allow
            .iter()
            .filter(|r| r.specifier().is_some())
            .cloned()
            .collect(),
        ..PermissionRules::default()
    };
    !naming.allow.is_empty()
        && matches!(
            naming.evaluate(tool, &Subject::Path(path), base),
            Some(RuleMatch {
                verdict: Verdict::Allow,
                ..
            })
        )
}

/// The rule that spoke about a call.
pub(super) struct Spoken {
    pub(super) verdict: Verdict,
    /// The rule as written.
    pub(super) rule: String,
}

/// What a call touches, as the rules see it: its paths resolved through
/// their links.
pub(super) struct Subjects<'a> {
    accesses: &'a [Access],
    real: Vec<PathBuf>,
}

impl<'a> Subjects<'a> {
    pub(super) fn of(accesses: &'a [Access]) -> Self {
        let real = accesses
            .iter()
            .map(|a| match a {
                Access::Read(path) | Access::Write(path) => {
                    crate::policy::boundary::real_path(path)
                }
                _ => PathBuf::new(),
            })
            .collect();
        Self { accesses, real }
    }

    /// One subject per access, or the tool's name alone when it declares
    /// nothing.
    pub(super) fn list(&self) -> Vec<Subject<'_>> {
        if self.accesses.is_empty() {
            return vec![Subject::Name];
        }
        self.accesses
            .iter()
            .zip(&self.real)
            .map(|(access, real)| match access {
                Access::Read(_) | Access::Write(_) => Subject::Path(real),
                Access::Command(command) => Subject::Command(command),
                Access::Fetch { host } => Subject::Url { host },
                _ => Subject::Name,
            })
            .collect()
    }

    /// The host a fetch reaches, if the call fetches.
    pub(super) fn host(&self) -> Option<&'a str> {
        self.accesses.iter().find_map(|a| match a {
            Access::Fetch { host } => Some(host.as_str()),
            _ => None,
        })
    }

    /// The rules' verdict over every subject: a deny of any, else an ask
    /// of any, else an allow of all; with the rule that spoke.
    pub(super) fn verdict(
        &self,
        rules: &PermissionRules,
        tool: &ToolDefinition,
        base: &RuleBase<'_>,
    ) -> Option<Spoken> {
        if rules.is_empty() {
            return None;
        }
        let subjects = self.list();
        let matches: Vec<RuleMatch<'_>> = subjects
            .iter()
            .filter_map(|s| rules.evaluate(tool, s, base))
            .collect();
        let first = |v: Verdict| {
            matches.iter().find(|m| m.verdict == v).map(|m| Spoken {
                verdict: v,
                rule: m.rule.to_string(),
            })
        };
        first(Verdict::Deny)
            .or_else(|| first(Verdict::Ask))
            .or_else(|| {
                (matches.len() == subjects.len())
                    .then(|| first(Verdict::Allow))
                    .flatten()
            })
    }
}
