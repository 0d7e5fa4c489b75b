//! Root merge (C1) and subagent derivation (C2).

use std::sync::Arc;

use zr_types::ToolDefinition;

use crate::capabilities::{
    AgentCapabilities, AgentOptions, EffectiveCapabilities, SkillView, ToolList,
};

/// The top level's tools, then the capability's. Same-name entries are
/// kept: the resolver's R1 replaces an earlier entry with a later one of the
/// same name *in place* and records the replacement in its trace, which a
/// merge here would lose.
fn top_level_first(
    top: &[Arc<ToolDefinition>],
    own: Option<&Vec<Arc<ToolDefinition>>>,
) -> ToolList {
    top.iter()
        .chain(own.into_iter().flatten())
        .cloned()
        .collect()
}

/// The root's effective capabilities (C1).
///
/// The effective definition of a request is the constructor's capabilities
/// with every field that `query_override` sets replaced. Then:
///
/// - `connection = options.mcp_tools ++ caps.connection_tools` and
///   `custom = options.custom_tools ++ caps.custom_tools`; an entry named
///   like an earlier one replaces it in place when the resolver assembles
///   the pool (R1), which records the replacement;
/// - `skills`, when set, replaces the registry view; unset means all skills;
/// - `allowed_tools`, when set, replaces the options' allow list;
/// - deny lists accumulate: the options' list is session-wide and the
///   capabilities' list adds to it (a capability can narrow the pool, never
///   lift a top-level deny).
///
/// ```
/// use zr_caps::{merge_root, AgentCapabilities, AgentOptions, SkillView};
/// let caps = merge_root(&AgentOptions::default(), &AgentCapabilities::default(), None);
/// assert_eq!(caps.skills, SkillView::All);
/// assert!(caps.allowed_tools.is_none());
/// ```
#[must_use]
pub fn merge_root(
    options: &AgentOptions,
    constructor: &AgentCapabilities,
    query_override: Option<&AgentCapabilities>,
) -> EffectiveCapabilities {
    let caps = match query_override {
        Some(over) => constructor.overridden_by(over),
        None => constructor.clone(),
    };
    EffectiveCapabilities {
        custom_tools: top_level_first(&options.custom_tools, caps.custom_tools.as_ref()),
        connection_tools: top_level_first(&options.mcp_tools, caps.connection_tools.as_ref()),
        skills: caps.skills.map_or(SkillView::All, SkillView::Only),
        allowed_tools: caps.allowed_tools.or_else(|| options.allowed_tools.clone()),
        disallowed_tools: caps.disallowed_tools.unwrap_or_default(),
        session_disallowed_tools: options.disallowed_tools.clone().unwrap_or_default(),
    }
}

/// A subagent's effective capabilities (C2): exactly its definition's.
///
/// There is no fallback to the parent: unset tool lists and skills are
/// empty; an unset allow list means no constraint on builtins. Only the
/// session-wide deny list of the top-level options applies, as it does to
/// every agent of the session.
///
/// ```
/// use zr_caps::{derive, AgentCapabilities, AgentOptions, SkillView};
/// let caps = derive(&AgentOptions::default(), &AgentCapabilities::default());
/// assert!(caps.custom_tools.is_empty());
/// assert_eq!(caps.skills, SkillView::Only(vec![]));
/// ```
#[must_use]
pub fn derive(options: &AgentOptions, definition: &AgentCapabilities) -> EffectiveCapabilities {
    EffectiveCapabilities {
        // No top level for a subagent (C2): its own lists alone.
        custom_tools: top_level_first(&[], definition.custom_tools.as_ref()),
        connection_tools: top_level_first(&[], definition.connection_tools.as_ref()),
        skills: SkillView::Only(definition.skills.clone().unwrap_or_default()),
        allowed_tools: definition.allowed_tools.clone(),
        disallowed_tools: definition.disallowed_tools.clone().unwrap_or_default(),
        session_disallowed_tools: options.disallowed_tools.clone().unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests;
