//! zr.toml values checked beyond their TOML type: lists of tool patterns,
//! and the error that points at the line where a bad key is written.

use zr_caps::ToolPattern;

use crate::error::CliError;
use crate::project::{CONFIG_FILE, Project};

/// The tool patterns of the zr.toml list at `key` (`None` when unset).
///
/// # Errors
///
/// [`CliError::Config`] at the entry that is not a tool name or pattern.
pub(crate) fn patterns(
    project: &Project,
    key: &str,
    list: Option<&[String]>,
) -> Result<Option<Vec<ToolPattern>>, CliError> {
    list.map(|list| {
        list.iter()
            .map(|p| {
                p.parse().map_err(|e: zr_caps::PatternError| {
                    config_key_error(
                        project,
                        key,
                        format!("'{p}': {e}"),
                        "write a tool name or a pattern such as Bash or mcp__github__*",
                    )
                })
            })
            .collect()
    })
    .transpose()
}

/// A [`CliError::Config`] for a value of `key` that parsed but is not
/// valid, at the line where `key` is written.
pub(crate) fn config_key_error(
    project: &Project,
    key: &str,
    message: String,
    help: &str,
) -> CliError {
    let path = project.root.join(CONFIG_FILE);
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let (table, leaf) = key.rsplit_once('.').unwrap_or(("", key));
    // The line of `leaf = ...` under the `[table]` header.
    let mut current = String::new();
    let (line, column) = text
        .lines()
        .enumerate()
        .find(|(_, l)| {
            let l = l.trim_start();
            if let Some(header) = l.strip_prefix('[') {
                current = header
                    .split(']')
                    .next()
                    .unwrap_or_default()
                    .trim()
                    .to_owned();
                return false;
            }
            current == table
                && l.strip_prefix(leaf)
                    .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map_or((0, 0), |(i, l)| (i + 1, l.len() - l.trim_start().len() + 1));
    CliError::config(path, (line, column), key, message, help)
}
