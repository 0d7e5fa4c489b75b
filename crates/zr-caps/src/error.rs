//! Errors of the capability model.

use std::path::PathBuf;

use thiserror::Error;
use zr_types::{AgentName, NameError, ServerName};

/// A tool pattern (allow or deny list entry) is not usable.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum PatternError {
    /// The pattern is empty.
    #[error("tool pattern is empty; use '*' for every tool")]
    Empty,
    /// The pattern holds white space.
    #[error("tool pattern '{pattern}' contains white space; tool names never do")]
    Whitespace {
        /// The pattern.
        pattern: String,
    },
    /// The pattern is a permission rule with an argument (`Bash(git:*)`),
    /// which would silently deny or allow nothing if it were kept.
    #[error(
        "tool pattern '{pattern}' is a permission rule with an argument; zr patterns name whole tools: write '{tool}'"
    )]
    PermissionRule {
        /// The pattern.
        pattern: String,
        /// The tool it names.
        tool: String,
    },
    /// The pattern holds a character no tool name can hold.
    #[error(
        "tool pattern '{pattern}' contains {ch:?}; patterns use ASCII letters, digits, '_', '-', '*' (and '.' in MCP tool names)"
    )]
    InvalidChar {
        /// The pattern.
        pattern: String,
        /// The first bad character.
        ch: char,
    },
}

/// A permission rule (`Bash(npm run test:*)`, `Read(./.env)`) is not
/// usable; see [`PermissionRule`](crate::PermissionRule).
///
/// Each message names the rule as written and says how to write it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum RuleError {
    /// The rule is empty.
    #[error(
        "permission rule is empty; write a tool name ('Read'), a tool with what it may touch ('Bash(npm run test:*)'), or '*'"
    )]
    Empty,
    /// Nothing names a tool before `(`.
    #[error(
        "permission rule '{rule}' names no tool before '('; write the tool first: 'Bash(npm run test:*)'"
    )]
    MissingTool {
        /// The rule.
        rule: String,
    },
    /// The parentheses do not pair, or text follows the closing one.
    #[error(
        "permission rule '{rule}' has unbalanced parentheses; write 'Tool(specifier)' with one closing ')' at the end"
    )]
    Unbalanced {
        /// The rule.
        rule: String,
    },
    /// The tool part is not a valid tool pattern.
    #[error("permission rule '{rule}': {error}")]
    Tool {
        /// The rule.
        rule: String,
        /// Why the tool part is refused.
        #[source]
        error: PatternError,
    },
    /// `Tool()`: the parentheses hold nothing.
    #[error(
        "permission rule '{rule}' has an empty specifier; write '{tool}' for every use, or say which uses inside the parentheses, e.g. {example}"
    )]
    EmptySpecifier {
        /// The rule.
        rule: String,
        /// The tool.
        tool: String,
        /// A rule of the same tool with a specifier.
        example: &'static str,
    },
    /// A specifier on a pattern of several tools (`mcp__gh(x)`, `Web*(x)`,
    /// `*(x)`) or on an MCP tool, whose input zr cannot read as one thing.
    #[error(
        "permission rule '{rule}' gives a specifier to '{tool}', which takes none (specifiers belong to one builtin tool: Bash, Read, Edit, Write, Glob, Grep, WebFetch, ...); write '{tool}'"
    )]
    SpecifierNotTaken {
        /// The rule.
        rule: String,
        /// The tool pattern.
        tool: String,
    },
    /// A path specifier climbs with `..`.
    #[error(
        "permission rule '{rule}' climbs with '..'; name the place from the root ('//abs/path/**'), the home folder ('~/path') or the project ('src/**')"
    )]
    ParentPath {
        /// The rule.
        rule: String,
    },
    /// A path specifier is not a valid glob.
    #[error(
        "permission rule '{rule}' has a bad path glob: {error}; use '*' within a folder, '**' across folders, '[abc]', '{{a,b}}', '\\' to escape"
    )]
    Glob {
        /// The rule.
        rule: String,
        /// The glob parser's error.
        #[source]
        error: globset::Error,
    },
    /// A `WebFetch` specifier is not `domain:<host>`.
    #[error(
        "permission rule '{rule}': {reason}; write 'WebFetch(domain:docs.rs)' or 'WebFetch(domain:*.example.com)'"
    )]
    Domain {
        /// The rule.
        rule: String,
        /// What is wrong.
        reason: &'static str,
    },
}

/// A permission mode name is not one of the six.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error(
    "unknown permission mode '{0}'; expected one of plan, dontAsk, default, auto, acceptEdits, bypassPermissions"
)]
pub struct UnknownPermissionMode(pub String);

/// An agent-type file (`agents/*.md`, rule C6) could not be read.
///
/// `Display` names the file and the line (counted in the whole file, from
/// 1) and says what to fix: `agents/reviewer.md:4: 'maxTurns' must be a
/// positive integer, found the string "ten"`.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
#[error("{}:{line}: {problem}", path.display())]
pub struct AgentFileError {
    /// The file, as the caller named it.
    pub path: PathBuf,
    /// The line of the problem, from 1, in the whole file.
    pub line: usize,
    /// What is wrong.
    pub problem: AgentFileProblem,
}

/// What is wrong with an agent-type file; see [`AgentFileError`].
///
/// Underlying errors (names, patterns, modes) are held as typed fields and
/// rendered into the message, not chained as `source()`, so that printing
/// the error once says everything.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum AgentFileProblem {
    /// The file does not start with a `---` line.
    #[error(
        "the file must start with a line '---' that opens the YAML front matter (name, description, ...), followed by a closing '---' and the system prompt"
    )]
    NoFrontMatter,
    /// No `---` line closes the front matter.
    #[error(
        "the front matter opened here is never closed; add a line with only '---' after the last key"
    )]
    UnterminatedFrontMatter,
    /// The front matter is not valid YAML.
    #[error("invalid YAML in the front matter (column {column}): {message}")]
    Yaml {
        /// The column of the problem, from 1 (0 when unknown).
        column: usize,
        /// The YAML parser's message.
        message: String,
    },
    /// The front matter is YAML but not a mapping of keys.
    #[error("the front matter must be 'key: value' lines, found {found}")]
    NotAMapping {
        /// What was found instead.
        found: String,
    },
    /// A required key is missing or empty.
    #[error("required key '{key}' is missing; add '{key}: {hint}'")]
    MissingKey {
        /// The key.
        key: &'static str,
        /// What its value should be.
        hint: &'static str,
    },
    /// A key's value has the wrong YAML type.
    #[error("'{key}' must be {expected}, found {found}")]
    WrongType {
        /// The key.
        key: String,
        /// What it must be.
        expected: &'static str,
        /// What was found.
        found: String,
    },
    /// A key's value has the right type but is not one of the accepted values.
    #[error("'{key}' must be {expected}, found {found}")]
    InvalidValue {
        /// The key.
        key: &'static str,
        /// What it must be.
        expected: &'static str,
        /// What was found.
        found: String,
    },
    /// A name (agent, skill, server) is not valid.
    #[error("'{key}': {error}")]
    InvalidName {
        /// The key that holds the name.
        key: &'static str,
        /// Why the name is refused.
        error: NameError,
    },
    /// A tool pattern is not valid.
    #[error("'{key}': {error}")]
    InvalidPattern {
        /// The key that holds the pattern.
        key: &'static str,
        /// Why the pattern is refused.
        error: PatternError,
    },
    /// The permission mode is not one of the six.
    #[error("'permissionMode': {0}")]
    InvalidPermissionMode(UnknownPermissionMode),
    /// Two keys that mean the same thing are both set.
    #[error("'{first}' and '{second}' mean the same thing; keep only one of them")]
    ConflictingKeys {
        /// The first key.
        first: &'static str,
        /// The second key.
        second: &'static str,
    },
}

/// A 2.x configuration could not be migrated (rule C5).
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum MigrateError {
    /// The text is not JSON of the 2.x shape: a syntax error, a wrong type,
    /// a missing field or an unknown key (named, with its JSON path).
    #[error("not a valid 2.x configuration: at {path}: {source}")]
    Json {
        /// The JSON path of the problem (`agents.reviewer.maxTurns`).
        path: String,
        /// The parser's error, with line and column.
        #[source]
        source: serde_json::Error,
    },
    /// An MCP tool of the environment has an empty name.
    #[error("environment mcpTools: a tool of server '{server}' has an invalid name: {source}")]
    McpToolName {
        /// The server.
        server: ServerName,
        /// Why the name is refused.
        #[source]
        source: NameError,
    },
    /// A 2.x agent sets both `tools` and `allowedTools`.
    #[error(
        "agent '{agent}' sets both 'tools' and 'allowedTools', two spellings of its allow list; keep one of them"
    )]
    ConflictingAllowLists {
        /// The agent.
        agent: AgentName,
    },
}
