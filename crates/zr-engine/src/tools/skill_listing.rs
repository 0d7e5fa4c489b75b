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
//! Order and cut: the skills named in [`SkillListing::first`] (the `zr`
//! command puts the project's own skills there) come first, in that order,
//! then the others in pool order (by name). When the whole listing does
//! not fit the budget, every description is shortened to one common
//! length (the longest that fits; a cut one ends in `…`) before any skill
//! is left out; only when the names alone do not fit are the last skills
//! left out, and counted. The footer then tells the model that the `Skill`
//! tool finds an unlisted skill by name or by words of its description
//! (zr-skills' `SkillTool` answers an unknown name with the closest
//! matches), so no skill is out of reach.
//!
//! The listing is a pure function of the skills, the first names and the
//! budget, so a fork, whose pool holds its parent's skills, advertises its
//! parent's `Skill` description byte for byte.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::sync::Arc;

use zr_types::{BuiltinName, SkillDefinition, SkillName, ToolDefinition, ToolOrigin};

/// The listing's default size limit in characters, the whole listing
/// (names, descriptions, layout) included. Claude Code's skill listing
/// budget is about 15,000 characters (its `SLASH_COMMAND_TOOL_CHAR_BUDGET`);
/// zr takes 7,000 (about 1,750 tokens, some 60 skills with a sentence
/// each), so that this listing and the type listing
/// ([`DEFAULT_TYPE_LISTING_CHARS`](crate::DEFAULT_TYPE_LISTING_CHARS))
/// together keep the root's first request within twice its size with the
/// built-in types only, whatever is installed (issue 39, BENCHMARKS.md).
/// A larger collection is shortened, then counted; a host may raise the
/// limit.
pub const DEFAULT_SKILL_LISTING_CHARS: usize = 7_000;

/// How a session lists skills: its size limit and the skills named first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SkillListing {
    /// The size limit in characters.
    pub(crate) budget: usize,
    /// The skills listed first, in this order (names an agent does not
    /// have are skipped).
    pub(crate) first: Vec<SkillName>,
}

/// `definition` as `skills`' agent is shown it: the `Skill` builtin with
/// its description followed by the listing; any other tool unchanged (the
/// same `Arc`).
#[must_use]
pub(crate) fn advertised(
    definition: &Arc<ToolDefinition>,
    skills: &[Arc<SkillDefinition>],
    listing: &SkillListing,
) -> Arc<ToolDefinition> {
    if !BuiltinName::Skill.is(definition.name.as_str()) || definition.origin != ToolOrigin::Builtin
    {
        return Arc::clone(definition);
    }
    let mut composed = ToolDefinition::clone(definition);
    composed.description = describe(&definition.description, skills, listing);
    Arc::new(composed)
}

/// One skill's line: its name and its description, one-lined.
struct Entry<'a> {
    name: &'a str,
    description: String,
    /// The description's length in characters.
    chars: usize,
}

impl Entry<'_> {
    /// The line's length with the description cut to `cap` characters.
    fn size(&self, cap: usize) -> usize {
        // "\n- " + name, then ": " + description (+ "…" when cut).
        let head = 3 + self.name.chars().count();
        if cap == 0 || self.chars == 0 {
            head
        } else if self.chars <= cap {
            head + 2 + self.chars
        } else {
            head + 2 + cap + 1
        }
    }

    fn write(&self, text: &mut String, cap: usize) {
        let _ = write!(text, "\n- {}", self.name);
        if cap == 0 || self.chars == 0 {
            return;
        }
        text.push_str(": ");
        if self.chars <= cap {
            text.push_str(&self.description);
        } else {
            text.extend(self.description.chars().take(cap));
            text.push('…');
        }
    }
}

/// `base`, then the skills in listing order within `listing.budget`
/// characters (descriptions shortened first, skills left out last), then
/// what was shortened or left out and how to reach the rest.
fn describe(base: &str, skills: &[Arc<SkillDefinition>], listing: &SkillListing) -> String {
    let mut text = String::from(base);
    if skills.is_empty() {
        return text;
    }
    let budget = listing.budget;
    let entries = ordered(skills, &listing.first);
    let total = |cap: usize| entries.iter().map(|e| e.size(cap)).sum::<usize>();
    let longest = entries.iter().map(|e| e.chars).max().unwrap_or(0);
    // The longest common description length that fits, if even the names
    // alone do.
    let cap = if total(longest) <= budget {
        Some(longest)
    } else if total(0) <= budget {
        let (mut fits, mut over) = (0, longest);
        while over - fits > 1 {
            let mid = fits + (over - fits) / 2;
            if total(mid) <= budget {
                fits = mid;
            } else {
                over = mid;
            }
        }
        Some(fits)
    } else {
        None
    };
    text.push_str("\n\nYour skills (name: when to use it):");
    let mut listed = 0;
    let cap_used = cap.unwrap_or(0);
    let mut used = 0;
    for entry in &entries {
        let size = entry.size(cap_used);
        if used + size > budget {
            break;
        }
        used += size;
        listed += 1;
        entry.write(&mut text, cap_used);
    }
    let left_out = entries.len() - listed;
    let shortened = entries.iter().any(|e| e.chars > cap_used);
    if left_out > 0 {
        let _ = write!(
            text,
            "\n({left_out} more skill{} not listed, and the others are listed by name only: the listing is limited to {budget} characters. \
             To find a skill not listed, call Skill with its name or with words of what it does as `skill`: an unknown name is answered with the closest skills.)",
            if left_out == 1 { " is" } else { "s are" }
        );
    } else if shortened {
        let _ = write!(
            text,
            "\n(Descriptions are shortened to fit the listing's {budget} characters; Skill loads a skill's full instructions.)"
        );
    }
    text
}

/// The entries in listing order: `first` (each once, skipping names not
/// in `skills`), then the rest in `skills`' order.
fn ordered<'a>(skills: &'a [Arc<SkillDefinition>], first: &[SkillName]) -> Vec<Entry<'a>> {
    let entry = |skill: &'a Arc<SkillDefinition>| {
        let description = one_line(&skill.description);
        Entry {
            name: skill.name.as_str(),
            chars: description.chars().count(),
            description,
        }
    };
    let mut seen = BTreeSet::new();
    let mut entries: Vec<Entry<'a>> = first
        .iter()
        .filter_map(|name| skills.iter().find(|s| &s.name == name))
        .filter(|skill| seen.insert(skill.name.as_str()))
        .map(entry)
        .collect();
    entries.extend(
        skills
            .iter()
            .filter(|skill| seen.insert(skill.name.as_str()))
            .map(entry),
    );
    entries
}

/// `text` on one line: line breaks and runs of blanks become one space.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests;
