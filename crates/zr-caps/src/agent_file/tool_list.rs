//! `tools` and `disallowedTools`: lists of tool patterns read leniently, as
//! Claude Code reads them. A bad entry is dropped with a warning naming its
//! line; the rest of the list, and the file, load.
//!
//! A permission rule (`Bash(git diff:*)`) is kept as a rule: in `tools` it
//! gives the agent the tool and narrows it to what the rules match, in
//! `disallowedTools` it refuses the calls it matches.
//!
//! Never wider than written: an allow-list entry that zr cannot honour as
//! written is dropped (the agent gets less), a deny-list entry that zr
//! cannot honour as written denies the whole tool (the agent gets less).

use std::str::FromStr;

use super::AgentFileWarning;
use super::claude_tools::lookup;
use super::yaml::{Located, Node, file_line};
use crate::error::AgentFileProblem;
use crate::pattern::ToolPattern;
use crate::rules::PermissionRule;

/// Which list an entry is in: it decides what "cannot honour" costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ListKind {
    /// `tools`: what the agent may have.
    Allow,
    /// `disallowedTools`: what it never gets.
    Deny,
}

/// What `tools` / `disallowedTools` may be.
const EXPECTED: &str = "a list of tool names or one comma-separated string";

/// Reads the list at `node` (key `key`): `None` when unset or empty (`~`),
/// the patterns that could be read otherwise; entries with a specifier add
/// their rule to `rules` (an allowed one also puts its tool in the list);
/// each entry dropped or changed adds a warning to `warnings`.
///
/// # Errors
///
/// The line and problem when the value is neither a string nor a list.
pub(super) fn tool_list(
    node: Option<&Located>,
    key: &'static str,
    kind: ListKind,
    rules: &mut Vec<PermissionRule>,
    warnings: &mut Vec<AgentFileWarning>,
) -> Result<Option<Vec<ToolPattern>>, (usize, AgentFileProblem)> {
    let Some(node) = node else { return Ok(None) };
    let line = file_line(node, 1);
    let mut warn = |line: usize, message: String| {
        warnings.push(AgentFileWarning {
            line,
            key: key.to_owned(),
            message,
        });
    };
    // Each entry's text, or what it was when it is not text, and its line.
    let entries: Vec<(Result<String, String>, usize)> = match &node.value {
        Node::Null => {
            if kind == ListKind::Allow {
                warn(
                    line,
                    "'tools' is empty, which leaves it unset: the agent gets every builtin tool its kind allows; write 'tools: []' for none, or remove the key".to_owned(),
                );
            }
            return Ok(None);
        }
        Node::Str(s) if s.trim().is_empty() => Vec::new(),
        Node::Str(s) => split_outside_parens(s)
            .into_iter()
            .map(|item| (Ok(item), line))
            .collect(),
        Node::Seq(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                let item_line = file_line(item, line);
                let text = match &item.value {
                    Node::Str(s) => Ok(s.clone()),
                    Node::Null => Ok(String::new()),
                    other => Err(other.describe()),
                };
                out.push((text, item_line));
            }
            out
        }
        other => {
            return Err((
                line,
                AgentFileProblem::WrongType {
                    key: key.to_owned(),
                    expected: EXPECTED,
                    found: other.describe(),
                },
            ));
        }
    };
    let mut patterns = Vec::with_capacity(entries.len());
    for (text, line) in entries {
        match text {
            Ok(text) => {
                if let Some(pattern) = entry(text.trim(), key, kind, rules, &mut |m| warn(line, m))
                    && !patterns.contains(&pattern)
                {
                    // A repeat (`MultiEdit` read as `Edit` beside `Edit`)
                    // changes nothing, so it is left out quietly.
                    patterns.push(pattern);
                }
            }
            Err(found) => warn(
                line,
                format!(
                    "an entry of '{key}' must be a tool name, found {found}; the entry is dropped"
                ),
            ),
        }
    }
    Ok(Some(patterns))
}

/// One entry: the pattern it stands for, or `None` when it is dropped (or
/// is a denied rule, added to `rules`); `warn` gets the sentence for every
/// entry not taken as written.
fn entry(
    text: &str,
    key: &str,
    kind: ListKind,
    rules: &mut Vec<PermissionRule>,
    warn: &mut dyn FnMut(String),
) -> Option<ToolPattern> {
    if text.is_empty() {
        warn(format!("an empty entry in '{key}' is dropped"));
        return None;
    }
    if let Some((tool, spec)) = permission_rule(text) {
        return rule_entry(text, tool, spec, kind, rules, warn);
    }
    if let Some(known) = lookup(text) {
        return match known.zr {
            Some(zr) => {
                warn(format!(
                    "'{text}' is Claude Code's name; zr's tool is '{zr}' ({}): read as '{zr}'",
                    known.why
                ));
                ToolPattern::from_str(zr).ok()
            }
            None => {
                warn(format!(
                    "'{text}' is a Claude Code tool that zr does not have ({}): the entry is dropped",
                    known.why
                ));
                None
            }
        };
    }
    match ToolPattern::from_str(text) {
        Ok(pattern) => Some(pattern),
        Err(error) => {
            warn(format!("{error}; the entry is dropped"));
            None
        }
    }
}

/// An entry with a specifier (`Bash(git diff:*)`): its tool read through
/// [`lookup`], its rule added to `rules`; in `tools` the tool is the
/// pattern returned, in `disallowedTools` nothing is (the rule refuses
/// only what it matches). A rule zr cannot read gives nothing in `tools`
/// and denies the whole tool in `disallowedTools`.
fn rule_entry(
    text: &str,
    tool: &str,
    spec: &str,
    kind: ListKind,
    rules: &mut Vec<PermissionRule>,
    warn: &mut dyn FnMut(String),
) -> Option<ToolPattern> {
    let (tool, rule_text) = match lookup(tool) {
        Some(known) => match known.zr {
            Some(zr) => {
                let rule_text = format!("{zr}({spec})");
                warn(format!(
                    "'{text}' uses Claude Code's name; zr's tool is '{zr}' ({}): read as '{rule_text}'",
                    known.why
                ));
                (zr, rule_text)
            }
            None => {
                warn(format!(
                    "'{text}' is a rule of a Claude Code tool that zr does not have ({}): the entry is dropped",
                    known.why
                ));
                return None;
            }
        },
        None => (tool, text.to_owned()),
    };
    match (rule_text.parse::<PermissionRule>(), kind) {
        (Ok(rule), ListKind::Allow) => {
            let pattern = rule.tool().clone();
            if !rules.contains(&rule) {
                rules.push(rule);
            }
            Some(pattern)
        }
        (Ok(rule), ListKind::Deny) => {
            if !rules.contains(&rule) {
                rules.push(rule);
            }
            None
        }
        (Err(error), ListKind::Allow) => {
            warn(format!(
                "{error}; the entry is dropped and the agent gets no {tool} from it"
            ));
            None
        }
        (Err(error), ListKind::Deny) => match ToolPattern::from_str(tool) {
            Ok(pattern) => {
                warn(format!("{error}; all of {tool} is denied instead"));
                Some(pattern)
            }
            Err(error) => {
                warn(format!("{error}; the entry is dropped"));
                None
            }
        },
    }
}

/// `Bash(git diff:*)` -> (`Bash`, `git diff:*`): the tool and specifier of
/// a permission rule with an argument, as Claude Code writes them.
fn permission_rule(text: &str) -> Option<(&str, &str)> {
    let open = text.find('(')?;
    let inner = text.strip_suffix(')')?.get(open + 1..)?;
    Some((text[..open].trim(), inner))
}

/// Splits on commas outside parentheses (`Bash(git add:*, git rm:*)` stays
/// one entry); entries are not trimmed, empty ones are kept (they are
/// warned about).
fn split_outside_parens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    out.push(current);
    out
}
