//! `zr.toml`: the project's settings, every key optional, unknown keys
//! refused; errors name the file, line, column and key.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::cli::ProviderKind;
use crate::error::CliError;

/// The whole file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct ZrConfig {
    /// `[model]`.
    pub(crate) model: ModelConfig,
    /// `[agent]`: the root.
    pub(crate) agent: RootConfig,
    /// `[subagents]`.
    pub(crate) subagents: SubagentsConfig,
    /// `[tools]`: session-wide allow and deny lists.
    pub(crate) tools: ToolsConfig,
    /// `[policy]`: the resolver's policy.
    pub(crate) policy: PolicyConfig,
    /// `[compaction]`.
    pub(crate) compaction: CompactionSettings,
    /// `[permissions]`.
    pub(crate) permissions: PermissionsConfig,
}

/// `[model]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct ModelConfig {
    /// The provider; `None`: from the environment.
    pub(crate) provider: Option<ProviderKind>,
    /// The model name; `None`: the provider's default.
    pub(crate) name: Option<String>,
    /// The most tokens one reply may have.
    pub(crate) max_tokens: Option<u32>,
    /// The API's base URL (an OpenAI-compatible local server, a proxy).
    pub(crate) base_url: Option<String>,
    /// The environment variable holding the API key (default
    /// `ANTHROPIC_API_KEY` / `OPENAI_API_KEY`).
    pub(crate) api_key_env: Option<String>,
    /// The script of `provider = "scripted"`, relative to the project.
    pub(crate) script: Option<PathBuf>,
}

/// `[agent]`: the root agent.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RootConfig {
    /// The root's system prompt.
    pub(crate) system_prompt: Option<String>,
    /// The root's turn limit.
    pub(crate) max_turns: Option<u32>,
}

/// `[subagents]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct SubagentsConfig {
    /// Whether the root may delegate at all.
    pub(crate) enabled: Option<bool>,
    /// Subagents of one call running at once.
    pub(crate) max_concurrent: Option<usize>,
    /// Seconds one Task/MultiTask call may take, queueing included.
    pub(crate) timeout_secs: Option<u64>,
    /// Seconds between progress summaries of background agents (0: off).
    pub(crate) progress_interval_secs: Option<u64>,
}

/// `[tools]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct ToolsConfig {
    /// The root's allow list (tool names or patterns such as `mcp__github__*`).
    pub(crate) allow: Option<Vec<String>>,
    /// The session-wide deny list: no agent gets these.
    pub(crate) deny: Option<Vec<String>>,
}

/// `[policy]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct PolicyConfig {
    /// `"always"`, `"never"` or a byte count: when MCP tools are deferred
    /// to FindTool.
    pub(crate) lazy: Option<LazySetting>,
    /// Tools no derived subagent gets.
    pub(crate) derived_blocklist: Option<Vec<String>>,
    /// The only builtins a background subagent keeps.
    pub(crate) background_allowlist: Option<Vec<String>>,
}

/// `[policy] lazy`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub(crate) enum LazySetting {
    /// `"always"` or `"never"`.
    Word(String),
    /// Defer once the definitions exceed this many bytes.
    Bytes(usize),
}

/// `[compaction]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct CompactionSettings {
    /// Whether long histories are summarised.
    pub(crate) enabled: Option<bool>,
    /// The model's context window in tokens.
    pub(crate) context_window: Option<u64>,
    /// Compact above this many tokens.
    pub(crate) threshold: Option<u64>,
    /// Tool results above this many bytes are cut and saved to a file.
    pub(crate) max_tool_result_bytes: Option<usize>,
}

/// `[permissions]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct PermissionsConfig {
    /// The root's permission mode (`default`, `plan`, `dontAsk`,
    /// `acceptEdits`, `bypassPermissions`).
    pub(crate) mode: Option<String>,
    /// Tools that run without asking.
    pub(crate) allow: Option<Vec<String>>,
    /// Tools that are always refused.
    pub(crate) deny: Option<Vec<String>>,
}

impl ZrConfig {
    /// Reads `path`; a missing file is the defaults.
    ///
    /// # Errors
    ///
    /// [`CliError::Io`] when the file cannot be read, [`CliError::Config`]
    /// naming the line, column and key of a problem.
    pub(crate) fn load(path: &Path) -> Result<Self, CliError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(source) => {
                return Err(CliError::Io {
                    action: "read",
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        Self::parse(path, &text)
    }

    /// Parses the text of `path`.
    ///
    /// # Errors
    ///
    /// [`CliError::Config`] naming the line, column and key of a problem.
    pub(crate) fn parse(path: &Path, text: &str) -> Result<Self, CliError> {
        let de = toml::Deserializer::parse(text).map_err(|e| config_error(path, text, "", &e))?;
        serde_path_to_error::deserialize(de).map_err(|e| {
            let key = e.path().to_string();
            let key = if key == "." { String::new() } else { key };
            config_error(path, text, &key, e.inner())
        })
    }
}

/// A [`CliError::Config`] for `error` at `key` in `text`.
fn config_error(path: &Path, text: &str, key: &str, error: &toml::de::Error) -> CliError {
    let (line, column) = error
        .span()
        .map_or((0, 0), |span| line_column(text, span.start));
    CliError::Config {
        path: path.to_path_buf(),
        line,
        column,
        key: key.to_owned(),
        message: error.message().trim().to_owned(),
        help: "fix the value or remove the key to use its default; `zr init --force` in an empty folder shows every key with its default".to_owned(),
    }
}

/// The 1-based line and column of byte `offset` in `text`.
pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

#[cfg(test)]
mod tests;
