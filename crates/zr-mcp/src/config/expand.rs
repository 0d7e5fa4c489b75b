//! `${VAR}` and `${VAR:-default}` references in `.mcp.json` values.

use crate::error::ConfigError;

/// Why a value could not be expanded; the caller adds the server and key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ExpandError {
    Unset(String),
    Malformed,
}

impl ExpandError {
    pub(crate) fn into_config(self, server: &str, key: String) -> ConfigError {
        match self {
            Self::Unset(variable) => ConfigError::UnsetVariable {
                server: server.to_owned(),
                key,
                variable,
            },
            Self::Malformed => ConfigError::MalformedReference {
                server: server.to_owned(),
                key,
            },
        }
    }
}

/// Replaces every `${NAME}` in `text` by `vars(NAME)`, and every
/// `${NAME:-default}` by `vars(NAME)` when it is set and not empty, else by
/// `default`. A `$` not followed by `{` is kept as written (`$$` is no
/// escape: both are kept). The replacement text is not expanded again.
/// Malformed: a `${` without its `}`, a name that is not
/// `[A-Za-z_][A-Za-z0-9_]*`, or a `${` inside a default (no nesting).
pub(crate) fn expand(
    text: &str,
    vars: &dyn Fn(&str) -> Option<String>,
) -> Result<String, ExpandError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find('}').ok_or(ExpandError::Malformed)?;
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        let valid_name = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit());
        // A `${` inside a default is a nested reference (or a `${` left
        // open before another): neither is supported, and keeping it as
        // text would hide the mistake.
        let nested = default.is_some_and(|d| d.contains("${"));
        if !valid_name || nested {
            return Err(ExpandError::Malformed);
        }
        let value = match (vars(name), default) {
            (Some(v), Some(d)) if v.is_empty() => d.to_owned(),
            (Some(v), _) => v,
            (None, Some(d)) => d.to_owned(),
            (None, None) => return Err(ExpandError::Unset(name.to_owned())),
        };
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}
