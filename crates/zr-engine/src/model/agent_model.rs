//! Which model a typed subagent runs on: its definition's `model` with the
//! session's aliases resolved (`sonnet` -> `claude-sonnet-4-5`), before its
//! first request, and the effort it asks of the provider. The one place a
//! definition's model is read.

use zr_caps::{AgentDefinition, ModelAliases, ModelResolution};

/// The model of a subagent of `definition` whose parent runs on `parent`:
/// the alias's id, the id as written, or the parent's model for `inherit`
/// and for an alias the session's provider has no id for (logged; hosts
/// report it when the types load, not when a request fails).
pub(crate) fn subagent_model(
    aliases: &ModelAliases,
    definition: &AgentDefinition,
    parent: &str,
) -> String {
    if let ModelResolution::Unmapped { alias } = aliases.resolve(&definition.model) {
        tracing::warn!(
            agent_type = %definition.name,
            alias,
            model = parent,
            "model alias has no id on this provider (set one in the session's model aliases); the agent runs on its parent's model"
        );
    }
    aliases.model_for(&definition.model, parent)
}

/// The effort a definition's `effort` asks of the provider.
pub(crate) fn effort(effort: zr_caps::Effort) -> zr_providers::Effort {
    match effort {
        zr_caps::Effort::Low => zr_providers::Effort::Low,
        zr_caps::Effort::Medium => zr_providers::Effort::Medium,
        zr_caps::Effort::High => zr_providers::Effort::High,
        zr_caps::Effort::Max => zr_providers::Effort::Max,
    }
}

/// A host's check of the model a subagent would run on, before its task
/// starts ([`AgentConfig::model_check`](crate::AgentConfig::model_check)):
/// `Err` is why it cannot run there (a `NAME:` that names no provider
/// profile), and the Task call fails with it, nothing started.
pub trait ModelCheck: Send + Sync + std::fmt::Debug {
    /// Whether a subagent of `definition`'s type can run on `model` (its
    /// type's or its call's, aliases already resolved).
    ///
    /// # Errors
    ///
    /// What is wrong and what to set, for the delegating model and the
    /// user.
    fn check(&self, definition: &AgentDefinition, model: &str) -> Result<(), String>;
}
