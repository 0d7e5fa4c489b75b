//! The zr capability model.
//!
//! What an agent may use is split in two (DESIGN.md section 3):
//!
//! - the runtime environment, global to a session and inherited by every
//!   agent (provider, model, working directory, environment, services); its
//!   plain-data part is [`RuntimeSettings`];
//! - [`AgentCapabilities`], local to one agent and never inherited: custom
//!   tools, connection tools, skills, allow and deny lists.
//!
//! This crate holds the rules that turn those into an agent's
//! [`EffectiveCapabilities`]: the root merge (C1, [`merge_root`]), derivation
//! of subagents (C2, [`derive()`]), the permission-mode lattice (C4,
//! [`PermissionMode`]), the 2.x -> 3.0 migration (C5, [`migrate_v2`]) and
//! Markdown agent-type files (C6, [`parse_agent_file`]), and the table of
//! model aliases (`sonnet`, `opus`, `haiku`, `small`: [`MODEL_ALIASES`],
//! [`ModelAliases`]), and permission rules in Claude Code's grammar
//! ([`PermissionRule`], [`PermissionRules`]). The resolver (`zr-resolve`) consumes the result.
//!
//! Architecture invariant: no I/O. Agent-type files are parsed from text the
//! caller read.
//! [`derive()`] does not take the parent: a subagent's capabilities cannot
//! depend on its parent's, because the function has no way to see them.
//!
//! # Structure
//!
//! - `capabilities.rs`: [`AgentCapabilities`] (every field an `Option`:
//!   unset differs from empty), [`AgentOptions`], [`EffectiveCapabilities`]
//!   (its tool lists are [`ToolList`]s, `Arc<[Arc<ToolDefinition>]>`, that
//!   resolved pools share); `definition.rs`: [`AgentDefinition`].
//! - `merge.rs`: [`merge_root`] (C1) and [`derive()`] (C2); `pattern.rs`:
//!   [`ToolPattern`]; `permission.rs`: [`PermissionMode`] and its clamp (C4).
//! - `rules.rs` (+ `rules/`): permission rules. `rules/shell.rs` splits a
//!   Bash command into simple commands, `rules/command.rs`,
//!   `rules/path.rs` and `rules/domain.rs` are the `Bash(...)`, path and
//!   `WebFetch(domain:...)` specifiers, `rules/call.rs` one call as the
//!   rules see it.
//! - `agent_file.rs` (+ `agent_file/`): agent-type files (C6), Claude
//!   Code's tool names included; `migrate.rs` (+ `migrate/`): C5;
//!   `model_alias.rs`; `render.rs`: stable text forms for snapshots.

mod agent_file;
mod capabilities;
mod definition;
mod error;
mod merge;
mod migrate;
mod model_alias;
mod pattern;
mod permission;
mod render;
mod rules;

pub use agent_file::{
    AgentFileWarning, CLAUDE_CODE_TOOLS, ClaudeCodeTool, ExtraKey, FrontMatter, FrontMatterEntry,
    InlineServer, ParsedAgentFile, parse_agent_file, parse_front_matter,
};
pub use capabilities::{
    AgentCapabilities, AgentOptions, EffectiveCapabilities, RuntimeSettings, SkillView, ToolList,
};
pub use definition::{
    AgentDefinition, AgentType, Budget, Effort, Isolation, MemoryScope, ModelChoice, RuleRefusal,
};
pub use error::{
    AgentFileError, AgentFileProblem, MigrateError, PatternError, RuleError, UnknownPermissionMode,
};
pub use merge::{derive, merge_root};
pub use migrate::{Migration, MigrationChange, migrate, migrate_v2, v2};
pub use model_alias::{
    MODEL_ALIASES, ModelAlias, ModelAliases, ModelFamily, ModelResolution, is_builtin_alias,
};
pub use pattern::{PatternKind, ToolPattern};
pub use permission::PermissionMode;
pub use rules::{
    CommandPattern, DomainPattern, PathPattern, PermissionRule, PermissionRules, RuleBase,
    RuleMatch, Specifier, Subject, Verdict,
};
