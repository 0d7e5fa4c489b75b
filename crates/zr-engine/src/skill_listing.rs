//! The `Skill` tool as one agent sees it: its description lists that
//! agent's own skills (name and description, never the body), bounded in
//! size.
//!
//! This is the one place the engine composes a tool's advertised text. It
//! does not filter, rename or add tools (DESIGN section 1): the agent's
//! pool keeps exactly the tools the resolver chose, and only the `Skill`
//! entry's description carries the skills the resolver gave the agent
//! (`ResolvedPool::skills`). The listing sits in the tool's description,
//! as Claude Code does, rather than in the system prompt: a typed
//! subagent's prompt is its definition's, byte for byte, and the listing
//! goes wherever the `Skill` tool goes (an agent without skills has no
//! `Skill` tool, R7, and so no listing).
//!
//! The listing is a pure function of the skills (in pool order, sorted by
//! name) and the budget, so a fork, whose pool holds its parent's skills,
//! advertises its parent's `Skill` description byte for byte.

use std::fmt::Write as _;
use std::sync::Arc;

use zr_types::{SkillDefinition, ToolDefinition, ToolOrigin};

/// The listing's default size limit in characters, the whole listing
/// (names, descriptions, layout) included. Claude Code's skill listing
/// budget is about 15,000 characters (its `SLASH_COMMAND_TOOL_CHAR_BUDGET`);
/// zr takes 7,000 (about 1,750 tokens, some 60 skills with a sentence
/// each), so that this listing and the type listing
/// ([`DEFAULT_TYPE_LISTING_CHARS`](crate::DEFAULT_TYPE_LISTING_CHARS))
/// together keep the root's first request within twice its size with the
/// built-in types only, whatever is installed (issue 39, BENCHMARKS.md).
/// A larger collection is counted; a host may raise the limit.
pub const DEFAULT_SKILL_LISTING_CHARS: usize = 7_000;

/// The name of the tool whose description is composed.
const SKILL: &str = "Skill";

/// `definition` as `skills`' agent is shown it: the `Skill` builtin with
/// its description followed by the listing; any other tool unchanged (the
/// same `Arc`).
#[must_use]
pub(crate) fn advertised(
    definition: &Arc<ToolDefinition>,
    skills: &[Arc<SkillDefinition>],
    budget: usize,
) -> Arc<ToolDefinition> {
    if definition.name.as_str() != SKILL || definition.origin != ToolOrigin::Builtin {
        return Arc::clone(definition);
    }
    let mut composed = ToolDefinition::clone(definition);
    composed.description = describe(&definition.description, skills, budget);
    Arc::new(composed)
}

/// `base`, then the skills that fit in `budget` characters, then how many
/// were left out.
fn describe(base: &str, skills: &[Arc<SkillDefinition>], budget: usize) -> String {
    let mut text = String::from(base);
    if skills.is_empty() {
        return text;
    }
    text.push_str("\n\nYour skills (name: when to use it):");
    let mut used = 0;
    let mut listed = 0;
    for skill in skills {
        let entry = format!("\n- {}: {}", skill.name, one_line(&skill.description));
        let size = entry.chars().count();
        if used + size > budget {
            break;
        }
        used += size;
        listed += 1;
        text.push_str(&entry);
    }
    let left_out = skills.len() - listed;
    if left_out > 0 {
        let _ = write!(
            text,
            "\n({left_out} more skill{} not listed: the listing is limited to {budget} characters.)",
            if left_out == 1 { " is" } else { "s are" }
        );
    }
    text
}

/// `text` on one line: line breaks and runs of blanks become one space.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests;
