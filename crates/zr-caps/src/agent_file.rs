//! Markdown agent-type files (rule C6): YAML front matter plus a system prompt.
//!
//! The format is Claude Code's:
//!
//! ```text
//! ---
//! name: code-reviewer
//! description: Reviews a diff for bugs. Use after every change.
//! tools: Read, Grep, Glob
//! ---
//! You are a careful code reviewer. ...
//! ```

mod claude_tools;
mod front_matter;
mod keys;
mod repair;
mod tool_list;
mod yaml;

pub use claude_tools::{CLAUDE_CODE_TOOLS, ClaudeCodeTool};
pub use front_matter::{FrontMatter, FrontMatterEntry, parse_front_matter};

use std::borrow::Cow;
use std::fmt;
use std::path::Path;

use self::yaml::FRONT_MATTER_OFFSET;
use crate::definition::AgentDefinition;
use crate::error::{AgentFileError, AgentFileProblem};

/// An agent-type file, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedAgentFile {
    /// The agent definition: front matter plus the body as its prompt.
    pub definition: AgentDefinition,
    /// The `color` key (how hosts show the agent), kept as written.
    pub color: Option<String>,
    /// The `memory` key (the scope of the agent's persistent memory: `user`,
    /// `project`, `local`), kept as written.
    pub memory: Option<String>,
    /// The MCP servers the file defines inline in `mcpServers` (their
    /// names are also in the definition's `mcp_servers`), in file order:
    /// the host starts them for agents of this type only.
    pub inline_servers: Vec<InlineServer>,
    /// Keys zr does not know, in file order, kept for hosts and tools that
    /// do. Each one also has a warning.
    pub extras: Vec<ExtraKey>,
    /// Things worth fixing that did not stop the file from loading.
    pub warnings: Vec<AgentFileWarning>,
    /// The line of `outputSchema` (or `output_schema`), when the file sets
    /// one: where a host that compiles the schema reports it invalid.
    pub output_schema_line: Option<usize>,
}

/// An MCP server defined inline in an agent file's `mcpServers`.
#[derive(Debug, Clone, PartialEq)]
pub struct InlineServer {
    /// Its name (its tools are `mcp__NAME__TOOL`).
    pub name: zr_types::ServerName,
    /// Its definition as written, as JSON: the shape of a `.mcp.json`
    /// entry (`command`, `args`, `env`, or `type` and `url`), which the
    /// host reads with its `.mcp.json` reader.
    pub config: serde_json::Value,
    /// Its line in the file, from 1.
    pub line: usize,
}

/// A front-matter key zr does not know, with its value.
#[derive(Debug, Clone, PartialEq)]
pub struct ExtraKey {
    /// The key as written.
    pub key: String,
    /// Its value as JSON (nested mappings lose their file order; `.nan`,
    /// `.inf` and `-.inf`, which JSON cannot hold, become those strings).
    pub value: serde_json::Value,
    /// Its line in the file, from 1.
    pub line: usize,
}

/// A problem in an agent-type file that did not stop it from loading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentFileWarning {
    /// The line in the file, from 1.
    pub line: usize,
    /// The key concerned.
    pub key: String,
    /// What is wrong and what to do, as a sentence.
    pub message: String,
}

impl fmt::Display for AgentFileWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// Parses the text of an agent-type file (C6).
///
/// `path_for_messages` only names the file in errors; nothing is read. The
/// file is a `---` line, YAML front matter, a closing `---` line, and the
/// body, which (trimmed) becomes the agent's prompt. A UTF-8 byte-order
/// mark and CRLF line ends are accepted.
///
/// Front-matter keys: `name` and `description` (required), `tools` (the
/// allow list) and `disallowedTools` (a YAML list or a comma-separated
/// string of tool patterns), `model` (`inherit` or a model id),
/// `permissionMode`, `maxTurns`, `tokenBudget` and `toolCallBudget` (positive
/// integers; see [`Budget`](crate::Budget)), `skills` and
/// `mcpServers` (lists or comma-separated strings of names), `background`
/// (a boolean), `isolation` (`none` or `worktree`), `effort` (`low`,
/// `medium`, `high`, `max`), `color`, `memory`, and `type` (or `agentType`:
/// `general-purpose`, `explore`, `plan`, `verification` in any case, or a
/// custom name; by default the kind named like the agent, else a custom
/// kind), `outputSchema` (or `output_schema`: a JSON Schema written as a
/// YAML mapping, which the agent's final answer must match; see
/// [`AgentDefinition::output_schema`]). Unknown keys are kept in
/// [`ParsedAgentFile::extras`] with a warning each, whatever their value.
///
/// Read leniently, as Claude Code reads them, each with a warning naming
/// the line in [`ParsedAgentFile::warnings`]:
///
/// - a `tools` / `disallowedTools` entry that is not a usable pattern
///   (`subagent-catalog:search`, an empty entry, a number) is dropped,
///   only that entry; a repeated entry is kept once;
/// - a permission rule (`Bash(git diff:*)`, `Read(src/**)`,
///   `WebFetch(domain:docs.rs)`; see [`PermissionRule`](crate::PermissionRule))
///   is kept as a rule, without a warning: in `tools` the tool joins the
///   allow list and the rule joins [`AgentDefinition::tool_rules`], which
///   narrow the tool to what they match; in `disallowedTools` the rule
///   joins [`AgentDefinition::denied_rules`] and the tool's other calls
///   stay. A rule zr cannot read never widens what the agent gets: in
///   `tools` it is dropped (the agent gets no such tool from it), in
///   `disallowedTools` it denies the whole tool;
/// - Claude Code's tool names are read through [`CLAUDE_CODE_TOOLS`]:
///   mapped to zr's name (`Agent` -> `Task`) or dropped;
/// - `tools:` with no value is unset (every builtin), with a warning;
/// - a front matter that is invalid YAML only because one-line plain
///   values hold `: ` (`description: Use this agent when: ...`) is read
///   with those values quoted; the warning shows the quoted form.
///
/// ```
/// use std::path::Path;
/// use zr_caps::parse_agent_file;
/// let text = "---\nname: reviewer\ndescription: Reviews diffs\ntools: Read, Grep\n---\nReview it.\n";
/// let file = parse_agent_file(Path::new("agents/reviewer.md"), text).unwrap();
/// assert_eq!(file.definition.prompt, "Review it.");
/// assert_eq!(file.definition.capabilities.allowed_tools.unwrap().len(), 2);
/// ```
///
/// # Errors
///
/// [`AgentFileError`], naming the file and line, when the front matter is
/// missing or unterminated, is not valid YAML, lacks `name` or
/// `description`, or a known key has a value of the wrong type or an
/// invalid name or mode. Never panics, whatever the input.
pub fn parse_agent_file(
    path_for_messages: &Path,
    text: &str,
) -> Result<ParsedAgentFile, AgentFileError> {
    let (tree, body, warnings) = read_front(path_for_messages, text)?;
    keys::convert(&tree, body, warnings)
        .map_err(|(line, problem)| fail_at(path_for_messages, line, problem))
}

/// An error at `line` of the file at `path`.
pub(crate) fn fail_at(path: &Path, line: usize, problem: AgentFileProblem) -> AgentFileError {
    AgentFileError {
        path: path.to_path_buf(),
        line: line.max(1),
        problem,
    }
}

/// Splits `text` into its front matter, parsed as YAML, and its body;
/// errors name `path` and the file's line.
///
/// A front matter that is invalid only because one-line values hold an
/// unquoted `: ` is read with those values quoted, and each such line is
/// returned as a warning that shows the quoted form.
pub(crate) fn read_front(
    path: &Path,
    text: &str,
) -> Result<(yaml::Located, String, Vec<AgentFileWarning>), AgentFileError> {
    let (front, body) = split(text).map_err(|problem| fail_at(path, 1, problem))?;
    match yaml::parse(&front) {
        Ok(tree) => Ok((tree, body, Vec::new())),
        Err(e) => {
            if let Some(repaired) = repair::quote_colon_values(&front, 1 + FRONT_MATTER_OFFSET)
                && let Ok(tree) = yaml::parse(&repaired.text)
            {
                return Ok((tree, body, repaired.warnings));
            }
            Err(fail_at(
                path,
                e.line + FRONT_MATTER_OFFSET,
                AgentFileProblem::Yaml {
                    column: e.column,
                    message: e.message,
                },
            ))
        }
    }
}

/// Splits a file into its front matter (YAML text) and its trimmed body.
fn split(text: &str) -> Result<(String, String), AgentFileProblem> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let text: Cow<'_, str> = if text.contains("\r\n") {
        Cow::Owned(text.replace("\r\n", "\n"))
    } else {
        Cow::Borrowed(text)
    };
    let mut lines = text.split('\n');
    if !lines.next().is_some_and(is_fence) {
        return Err(AgentFileProblem::NoFrontMatter);
    }
    let mut front = Vec::new();
    for line in lines.by_ref() {
        if is_fence(line) {
            let body: Vec<&str> = lines.collect();
            return Ok((front.join("\n"), body.join("\n").trim().to_owned()));
        }
        front.push(line);
    }
    Err(AgentFileProblem::UnterminatedFrontMatter)
}

fn is_fence(line: &str) -> bool {
    line.trim_end_matches([' ', '\t', '\r']) == "---"
}

#[cfg(test)]
mod tests;
