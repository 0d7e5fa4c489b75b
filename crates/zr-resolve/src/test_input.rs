//! Inputs the crate's unit tests share: a custom tool, a subagent's
//! capabilities made of custom tools, the Explore role.

use std::sync::Arc;

use zr_caps::{AgentCapabilities, AgentOptions, EffectiveCapabilities, derive};
use zr_types::{Annotations, ToolDefinition, ToolOrigin};

use crate::role::{DerivedKind, Role};

/// A custom tool called `name`.
pub(crate) fn custom(name: &str, read_only: bool) -> Arc<ToolDefinition> {
    Arc::new(
        ToolDefinition::new(
            name.parse().expect("test tool names are valid"),
            "a tool",
            ToolOrigin::Custom,
        )
        .with_annotations(Annotations {
            read_only,
            ..Annotations::default()
        }),
    )
}

/// A subagent's capabilities with exactly these custom tools.
pub(crate) fn caps_with(tools: Vec<Arc<ToolDefinition>>) -> EffectiveCapabilities {
    let caps = AgentCapabilities {
        custom_tools: Some(tools),
        ..AgentCapabilities::default()
    };
    derive(&AgentOptions::default(), &caps)
}

/// A foreground Explore subagent.
pub(crate) const EXPLORE: Role = Role::Derived {
    kind: DerivedKind::Explore,
    background: false,
};
