//! `.mcp.json` errors as [`CliError::Config`]: the file, the line (of the
//! JSON error, or of the server's entry) and what to write instead.

use std::path::Path;

use crate::error::CliError;

/// What `.mcp.json` holds, for help lines.
const SHAPE: &str = "the file holds {\"mcpServers\": {\"NAME\": {\"command\": \"...\", \"args\": [\"...\"]}}} (stdio) or {\"mcpServers\": {\"NAME\": {\"type\": \"http\", \"url\": \"...\"}}} (\"sse\" for the legacy SSE transport)";

/// `error` of `McpConfig::load(path)` naming the file.
pub(crate) fn error(path: &Path, error: zr_mcp::ConfigError) -> CliError {
    match error {
        zr_mcp::ConfigError::Read { path, source } => crate::config::unreadable(&path, &source),
        zr_mcp::ConfigError::Json { source } => {
            let message = source.to_string();
            let message = message
                .rsplit_once(" at line ")
                .map_or(message.as_str(), |(m, _)| m)
                .to_owned();
            CliError::config(
                path,
                (source.line(), source.column()),
                "",
                format!("invalid JSON: {message}"),
                format!("fix the JSON; {SHAPE}"),
            )
        }
        other => {
            // The file parsed: its text, read again, locates the server.
            let text = std::fs::read_to_string(path).unwrap_or_default();
            let message = other.to_string();
            let server = message
                .strip_prefix("MCP server '")
                .and_then(|rest| rest.split_once("': "));
            let (key, line, column, message) = match server {
                Some((server, rest)) => {
                    let (line, column) = find(&text, &format!("\"{server}\""));
                    (
                        format!("mcpServers.{server}"),
                        line,
                        column,
                        rest.to_owned(),
                    )
                }
                None => (String::new(), 0, 0, message),
            };
            CliError::config(
                path,
                (line, column),
                key,
                message,
                format!("fix the server's entry; {SHAPE}"),
            )
        }
    }
}

/// The 1-based line and column of the first `needle` in `text` (0, 0: not
/// found).
fn find(text: &str, needle: &str) -> (usize, usize) {
    text.find(needle)
        .map_or((0, 0), |at| crate::config::line_column(text, at))
}
