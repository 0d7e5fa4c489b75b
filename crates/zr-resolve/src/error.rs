//! Errors of the resolver and of scenario files.

use thiserror::Error;
use zr_types::{NameError, ToolName, ToolOrigin};

/// The input cannot be resolved.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// A custom or connection tool took a name only the runtime may define.
    #[error(
        "{origin} tool '{name}' uses a reserved name (R1): Task, MultiTask, FindTool and Skill are defined by the runtime only; rename the tool"
    )]
    ReservedName {
        /// The tool.
        name: ToolName,
        /// Where it came from.
        origin: ToolOrigin,
    },
    /// A builtin or custom tool used the `mcp__` prefix of connection tools.
    #[error(
        "{origin} tool '{name}' uses the 'mcp__' prefix (R1), which belongs to MCP server tools; rename the tool"
    )]
    ReservedPrefix {
        /// The tool.
        name: ToolName,
        /// Where it came from.
        origin: ToolOrigin,
    },
    /// A definition's origin does not match the list it was given in.
    #[error(
        "tool '{name}' in the {list} has origin {origin} (R1): a definition keeps the origin of the list it is given in; build it with the right origin"
    )]
    WrongOrigin {
        /// The tool.
        name: ToolName,
        /// The list it was found in.
        list: &'static str,
        /// The origin it claimed.
        origin: ToolOrigin,
    },
    /// A connection tool's name is not namespaced `mcp__{server}__{tool}`.
    #[error(
        "{origin} tool '{name}' is not named mcp__SERVER__TOOL (R1); build connection tool names with ToolName::mcp"
    )]
    ConnectionName {
        /// The tool.
        name: ToolName,
        /// Where it came from.
        origin: ToolOrigin,
    },
    /// The Fork role needs its parent's resolved pool.
    #[error("a fork derives from its parent's pool, but no parent pool was given")]
    ForkWithoutParent,
}

/// A scenario file is not valid.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ScenarioError {
    /// The JSON is malformed, has an unknown key or a wrong type.
    #[error("scenario: at {path}")]
    Json {
        /// The JSON path of the problem (`options.custom_tools[0].name`).
        path: String,
        /// The parser's error.
        #[source]
        source: serde_json::Error,
    },
    /// A JSON array or scalar stands where the format expects an object.
    #[error("scenario: at {path}: expected a JSON object")]
    NotAnObject {
        /// The JSON path.
        path: String,
    },
    /// A name in the scenario is invalid.
    #[error("scenario: at {path}")]
    Name {
        /// The JSON path of the name.
        path: String,
        /// What is wrong with it.
        #[source]
        source: NameError,
    },
    /// A fork was given capabilities; it inherits its parent's pool.
    #[error(
        "scenario: at subagents.{agent}.capabilities: a fork inherits its parent's pool unchanged; remove 'capabilities' or use another kind"
    )]
    ForkWithCapabilities {
        /// The subagent.
        agent: String,
    },
    /// A subagent's `parent` is neither `root` nor a subagent above it.
    #[error(
        "scenario: at subagents.{agent}.parent: '{parent}' is not 'root' or a subagent listed before '{agent}'"
    )]
    UnknownParent {
        /// The subagent.
        agent: String,
        /// The parent it named.
        parent: String,
    },
    /// A subagent's parent cannot delegate at its depth.
    #[error(
        "scenario: at subagents.{agent}.parent: '{parent}' cannot delegate (it is at its depth limit, or its pool has no Task)"
    )]
    ParentCannotDelegate {
        /// The subagent.
        agent: String,
        /// Its parent.
        parent: String,
    },
    /// A subagent was called `root`.
    #[error("scenario: at subagents.root: 'root' names the root agent; choose another name")]
    ReservedAgentName,
    /// Resolving one agent failed.
    #[error("cannot resolve agent '{agent}'")]
    Resolve {
        /// The agent.
        agent: String,
        /// Why. Boxed: names carry an inline copy of their first bytes,
        /// which makes a resolve error too large to return by value on
        /// every path of the scenario reader.
        #[source]
        source: Box<ResolveError>,
    },
}
