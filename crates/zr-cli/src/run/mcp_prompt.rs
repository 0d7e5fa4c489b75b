//! `zr run /server:prompt ARGS`: an MCP server's prompt, filled with the
//! words after it, becomes the root's prompt.
//!
//! The words are bound to the prompt's declared arguments by zr-mcp
//! (`name=value`, or positional in declared order). The prompt's messages
//! are joined by blank lines; an assistant message is kept as
//! `Assistant: ...` so the model can tell who said it.

use zr_mcp::{McpError, PromptRole};

use crate::error::CliError;
use crate::project::Project;
use crate::session::Workspace;

/// A `/server:prompt` command and its words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PromptCommand {
    server: String,
    prompt: String,
    words: Vec<String>,
}

/// The command in `prompt` (its first word `/server:name`, the rest of it
/// and `rest` the words), or `None` for a plain prompt.
///
/// # Errors
///
/// A plain prompt followed by more words (it must be one quoted argument).
pub(crate) fn parse(prompt: &str, rest: &[String]) -> Result<Option<PromptCommand>, CliError> {
    let mut words = prompt.split_whitespace();
    let command = words
        .next()
        .and_then(|first| first.strip_prefix('/'))
        .and_then(|first| first.split_once(':'))
        .filter(|(server, name)| {
            !server.is_empty()
                && !name.is_empty()
                && server
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        });
    let Some((server, name)) = command else {
        if !rest.is_empty() {
            return Err(CliError::usage(
                format!("zr run takes one prompt, and got {} words", rest.len() + 1),
                "quote the prompt: zr run \"what to do\" (words after it are only for an MCP prompt: zr run /server:prompt ARGS)",
            ));
        }
        return Ok(None);
    };
    Ok(Some(PromptCommand {
        server: server.to_owned(),
        prompt: name.to_owned(),
        words: words
            .map(str::to_owned)
            .chain(rest.iter().cloned())
            .collect(),
    }))
}

impl PromptCommand {
    /// Checks before anything starts that the server is configured.
    ///
    /// # Errors
    ///
    /// [`CliError::Usage`] naming the configured servers.
    pub(crate) fn check(&self, project: &Project) -> Result<(), CliError> {
        if project.mcp.get(&self.server).is_some() {
            return Ok(());
        }
        let servers: Vec<String> = project
            .mcp
            .servers()
            .iter()
            .map(|s| s.name.to_string())
            .collect();
        Err(CliError::usage(
            format!("no MCP server '{}' in .mcp.json", self.server),
            if servers.is_empty() {
                "add it to .mcp.json (`zr mcp list` shows the servers)".to_owned()
            } else {
                format!("the servers are: {}", servers.join(", "))
            },
        ))
    }

    /// The prompt's text, from the server of the open `workspace`.
    ///
    /// # Errors
    ///
    /// The server did not start, has no such prompt, or the words do not
    /// fit its arguments ([`CliError::Usage`], the usage line as help);
    /// the request failed ([`CliError::Mcp`]).
    pub(crate) async fn expand(&self, workspace: &Workspace) -> Result<String, CliError> {
        let Some(lease) = workspace
            .leases
            .iter()
            .find(|l| l.server().as_str() == self.server)
        else {
            let why = workspace
                .failed_servers
                .iter()
                .find(|f| f.name == self.server)
                .map_or_else(String::new, |f| format!(": {}", f.summary));
            return Err(CliError::usage(
                format!("MCP server '{}' did not start{why}", self.server),
                "`zr mcp list` shows why",
            ));
        };
        let messages = lease
            .get_prompt(&self.prompt, &self.words)
            .await
            .map_err(|e| {
                let help = match &e {
                    McpError::PromptArguments { usage, .. } => Some(format!("zr run {usage}")),
                    McpError::UnknownPrompt { .. } => {
                        Some("`zr mcp list` shows each server's prompts".to_owned())
                    }
                    _ => None,
                };
                match help {
                    Some(help) => CliError::usage(e.to_string(), help),
                    None => CliError::Mcp(Box::new(e)),
                }
            })?;
        let text = messages
            .into_iter()
            .map(|m| match m.role {
                PromptRole::User => m.text,
                PromptRole::Assistant => format!("Assistant: {}", m.text),
            })
            .collect::<Vec<_>>()
            .join("\n\n");
        if text.trim().is_empty() {
            return Err(CliError::usage(
                format!("the prompt '/{}:{}' is empty", self.server, self.prompt),
                "ask the server's author, or give the prompt in words",
            ));
        }
        Ok(text)
    }
}

#[cfg(test)]
mod tests;
