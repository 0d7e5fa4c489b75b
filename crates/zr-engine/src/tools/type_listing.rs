//! The subagent types as the model is shown them: one listing (name and
//! description) in the `Task` tool's description, bounded in size, and the
//! closest names when a call names a type that does not exist.
//!
//! One listing, not two: `MultiTask`'s description refers to `Task`'s
//! (docs/decisions.md, "One listing of agent types"). The listing is a
//! pure function of the types (in the order given) and the budget, so
//! every agent of a catalog that advertises `Task` advertises the same
//! bytes, and a fork, which advertises its parent's tools, keeps its
//! parent's prefix.
//!
//! When the types do not fit, descriptions are shortened first (all to
//! the same length, the longest that fits, but never below
//! [`MIN_DESCRIPTION_CHARS`]); only then are the last types left out,
//! counted, and still reachable: a call may name any type, and a call
//! naming one that does not exist gets the closest names ([`closest`]).

use std::fmt::Write as _;

use zr_caps::AgentDefinition;
use zr_types::AgentName;

/// The listing's default size limit in characters: its entries (names,
/// descriptions, layout), not the tool's own text before it nor the count
/// of types left out after it. About 1,500 tokens: some 30 types with
/// descriptions of two sentences each, or 55 with descriptions shortened
/// to 80 characters, the shortest they are cut to (past that, the last
/// types are left out). With [`DEFAULT_SKILL_LISTING_CHARS`] it keeps the
/// root's first request within twice its size with zr's built-in types
/// only, whatever is installed (BENCHMARKS.md, issue 39).
///
/// [`DEFAULT_SKILL_LISTING_CHARS`]: crate::DEFAULT_SKILL_LISTING_CHARS
pub const DEFAULT_TYPE_LISTING_CHARS: usize = 6_000;

/// Descriptions are not shortened below this many characters: past it,
/// types are left out instead (a name with a stub of a description tells
/// the model little, and the type stays reachable by name).
pub(crate) const MIN_DESCRIPTION_CHARS: usize = 80;

/// How many closest names an unknown type's error gives.
const CLOSEST: usize = 5;

/// The listing of `types`, in the order given, within `budget` characters:
/// a text starting with a blank line.
pub(crate) fn listing<'a>(
    types: impl IntoIterator<Item = (&'a AgentName, &'a AgentDefinition)>,
    budget: usize,
) -> String {
    let entries: Vec<(&str, String)> = types
        .into_iter()
        .map(|(name, definition)| (name.as_str(), one_line(&definition.description)))
        .collect();
    if entries.is_empty() {
        return "\n\nNo subagent types are defined: every task runs as a fork of you.".to_owned();
    }
    let longest = entries
        .iter()
        .map(|(_, d)| d.chars().count())
        .max()
        .unwrap_or(0);
    let size = |cap: usize| -> usize { entries.iter().map(|(n, d)| entry_size(n, d, cap)).sum() };
    // The longest descriptions that let every type fit, if any.
    let cap = if size(longest) <= budget {
        Some(longest)
    } else if size(MIN_DESCRIPTION_CHARS) <= budget {
        // `size` grows with `cap`: the largest `cap` with `size(cap) <=
        // budget` lies in [MIN, longest).
        let (mut low, mut high) = (MIN_DESCRIPTION_CHARS, longest);
        while high - low > 1 {
            let mid = low + (high - low) / 2;
            if size(mid) <= budget {
                low = mid;
            } else {
                high = mid;
            }
        }
        Some(low)
    } else {
        None
    };
    let mut text = String::from("\n\nSubagent types (name: when to use it):");
    let shortened = cap.is_some_and(|cap| cap < longest);
    let cap = cap.unwrap_or(MIN_DESCRIPTION_CHARS);
    let mut used = 0;
    let mut listed = 0;
    for (name, description) in &entries {
        let size = entry_size(name, description, cap);
        if used + size > budget {
            break;
        }
        used += size;
        listed += 1;
        write_entry(&mut text, name, description, cap);
    }
    let left_out = entries.len() - listed;
    if left_out > 0 {
        let _ = write!(
            text,
            "\n({left_out} more type{} not listed: the listing is limited to {budget} characters. Any type can be named in subagent_type; naming one that does not exist returns the closest names.)",
            if left_out == 1 { " is" } else { "s are" }
        );
    } else if shortened {
        let _ = write!(
            text,
            "\n(Descriptions are shortened to {cap} characters to fit the listing's {budget}.)"
        );
    }
    text
}

/// The characters of `name`'s entry with its description cut to `cap`.
fn entry_size(name: &str, description: &str, cap: usize) -> usize {
    let chars = description.chars().count();
    let shown = if chars > cap { cap + 1 } else { chars };
    // "\n- " + name + ": " + description
    3 + name.chars().count() + if shown == 0 { 0 } else { 2 + shown }
}

fn write_entry(text: &mut String, name: &str, description: &str, cap: usize) {
    text.push_str("\n- ");
    text.push_str(name);
    if description.is_empty() {
        return;
    }
    text.push_str(": ");
    if description.chars().count() > cap {
        text.extend(description.chars().take(cap));
        text.push('…');
    } else {
        text.push_str(description);
    }
}

/// `text` on one line: line breaks and runs of blanks become one space.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The names of `names` closest to `wanted`, at most [`CLOSEST`], best
/// first: those that contain it or that it contains (ignoring case,
/// `-` and `_`), then by edit distance; ties by name.
pub(crate) fn closest<'a>(names: impl IntoIterator<Item = &'a str>, wanted: &str) -> Vec<&'a str> {
    let key = |s: &str| -> String {
        s.chars()
            .filter(|c| !matches!(c, '-' | '_' | ' '))
            .flat_map(char::to_lowercase)
            .collect()
    };
    let wanted = key(wanted);
    let mut scored: Vec<(usize, &str)> = names
        .into_iter()
        .map(|name| {
            let k = key(name);
            let contains = !wanted.is_empty() && (k.contains(&wanted) || wanted.contains(&k));
            // A substring match ranks before any edit: its score is the
            // length difference, below every non-match's.
            let score = if contains {
                k.len().abs_diff(wanted.len())
            } else {
                usize::MAX / 2 + zr_types::edit_distance(&k, &wanted)
            };
            (score, name)
        })
        .collect();
    scored.sort_unstable();
    scored.into_iter().take(CLOSEST).map(|(_, n)| n).collect()
}

#[cfg(test)]
mod tests;
