//! Plain data shared by every zr crate.
//!
//! This crate holds the vocabulary of the system and nothing else: validated
//! names ([`ToolName`], [`ServerName`], [`SkillName`]), tool and skill
//! definitions, conversation messages, agent and session ids, the
//! [`ToolHandler`] contract through which every tool is run, the default
//! builtin registry, [`ordered_entries`] for reading JSON objects in file
//! order, and [`error_chain`] for an error with its sources on one line.
//!
//! Names are `Arc<str>` newtypes built with `FromStr`/`TryFrom`, never an
//! infallible `From<&str>`; [`ToolName::mcp`] shortens a long
//! `mcp__server__tool` name stably ([`stable_hash`], FNV-1a).
//! [`ToolDefinition`] is laid out `repr(C)` with the fields the resolver
//! reads first. A [`ToolOutput`] may carry a `display` for people beside
//! the content for the model (providers never send it). `access.rs` holds
//! the inputs of the engine's effects boundary: [`Access`], what a call
//! would touch, declared by [`ToolHandler::access`] before it runs, and
//! [`Confinement`], the OS sandbox of the processes it starts.
//!
//! Architecture invariant: no async runtime, no I/O, no clocks. Everything
//! here is a value that can be built, compared and serialised anywhere.

mod access;
mod builtin;
mod error;
mod handler;
mod id;
mod message;
mod name;
mod ordered;
mod similar;
mod skill;
mod tool;

pub use access::{Access, Confinement};
pub use builtin::{
    BuiltinName, BuiltinSpec, DEFAULT_BUILTINS, NotBuiltin, RESERVED_TOOL_NAMES, builtin_spec,
};
pub use error::{IdError, NameError, ToolError, error_chain};
pub use handler::{BoxFuture, ToolCall, ToolContext, ToolHandler, ToolOutput};
pub use id::{AgentId, SessionId};
pub use message::{
    ContentBlock, ImageSource, Message, MessageRole, StopReason, ToolResultContent, Usage, texts,
};
pub use name::{AgentName, MAX_TOOL_NAME_LEN, ServerName, SkillName, ToolName, stable_hash};
pub use ordered::ordered_entries;
pub use similar::edit_distance;
pub use skill::{SkillBody, SkillDefinition};
pub use tool::{Annotations, ToolDefinition, ToolOrigin};
