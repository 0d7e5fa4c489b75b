//! The one YAML mistake read leniently: an unquoted `: ` inside a one-line
//! value (`description: Use this agent when: the user asks ...`), which
//! YAML refuses ("mapping values are not allowed") and Claude Code loads.

use super::AgentFileWarning;

/// A front matter with such values quoted, and a warning for each.
#[derive(Debug)]
pub(super) struct Repaired {
    /// The front matter with the values quoted; every line stays on its
    /// line, so lines in later messages still match the file.
    pub(super) text: String,
    /// One warning per quoted value, showing the quoted form.
    pub(super) warnings: Vec<AgentFileWarning>,
}

/// How much of a quoted value a warning shows.
const SHOWN: usize = 80;

/// Quotes every top-level `key: value` line whose plain one-line value
/// holds `: ` (or ends in `:`); `None` when there is none. `first_line` is
/// the file line of the text's first line.
pub(super) fn quote_colon_values(front: &str, first_line: usize) -> Option<Repaired> {
    let lines: Vec<&str> = front.split('\n').collect();
    let mut out = Vec::with_capacity(lines.len());
    let mut warnings = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let continued = lines
            .get(i + 1)
            .is_some_and(|next| next.starts_with([' ', '\t']) && !next.trim().is_empty());
        match split_plain(line) {
            Some((key, value)) if !continued && needs_quotes(value) => {
                let quoted = format!("{key}: {}", double_quoted(value));
                warnings.push(AgentFileWarning {
                    line: first_line + i,
                    key: key.to_owned(),
                    message: format!(
                        "the value of '{key}' holds ': ', which YAML reads as a new key; zr read the whole line as the value; quote it: {}",
                        shown(&quoted)
                    ),
                });
                out.push(quoted);
            }
            _ => out.push((*line).to_owned()),
        }
    }
    (!warnings.is_empty()).then(|| Repaired {
        text: out.join("\n"),
        warnings,
    })
}

/// `key: value` at the top level with a plain (unquoted, not a flow or
/// block) value: the key and the trimmed value.
fn split_plain(line: &str) -> Option<(&str, &str)> {
    let (key, value) = line.split_once(": ")?;
    let key_ok = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let value = value.trim();
    let plain = !value.is_empty()
        && !value.starts_with([
            '"', '\'', '[', '{', '|', '>', '&', '*', '!', '#', '%', '@', '`',
        ]);
    (key_ok && plain).then_some((key, value))
}

/// Whether YAML would refuse `value` as a plain scalar for its colon.
fn needs_quotes(value: &str) -> bool {
    value.contains(": ") || value.ends_with(':')
}

/// `value` as a double-quoted YAML string.
fn double_quoted(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The quoted line, cut after [`SHOWN`] characters.
fn shown(line: &str) -> String {
    if line.chars().count() <= SHOWN {
        return line.to_owned();
    }
    let cut: String = line.chars().take(SHOWN).collect();
    format!("{cut}...\" (shortened here)")
}
