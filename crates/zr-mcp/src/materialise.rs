//! MCP tools as zr tool definitions: namespaced names, schemas kept, annotations mapped.

use serde_json::Value;
use zr_types::{Annotations, ServerName, ToolDefinition, ToolName, ToolOrigin};

/// A server's tool as the model sees it, with the name the server knows it
/// by.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Materialised {
    pub(crate) definition: ToolDefinition,
    pub(crate) remote_name: String,
}

/// Turns the server's tool list into definitions. A tool with an empty name
/// is skipped with a warning (no name can be made for it); so is a second
/// tool whose namespaced name is already taken.
pub(crate) fn materialise(
    server: &ServerName,
    defer: Option<bool>,
    tools: &[rmcp::model::Tool],
) -> Vec<Materialised> {
    let mut out: Vec<Materialised> = Vec::with_capacity(tools.len());
    for tool in tools {
        let Ok(name) = ToolName::mcp(server, &tool.name) else {
            tracing::warn!(server = %server, "MCP tool with an empty name skipped");
            continue;
        };
        if out.iter().any(|m| m.definition.name == name) {
            tracing::warn!(server = %server, tool = %tool.name, name = %name, "MCP tool name taken twice; later tool skipped");
            continue;
        }
        let annotations = tool
            .annotations
            .as_ref()
            .map(|a| Annotations {
                // A tool that also says it is destructive is not read-only.
                read_only: a.read_only_hint.unwrap_or(false) && a.destructive_hint != Some(true),
                destructive: a.destructive_hint,
                idempotent: a.idempotent_hint,
                open_world: a.open_world_hint,
            })
            .unwrap_or_default();
        let description = tool
            .description
            .as_deref()
            .or(tool.title.as_deref())
            .unwrap_or_default()
            .to_owned();
        let schema = Value::Object((*tool.input_schema).clone());
        let definition = ToolDefinition::new(
            name,
            description,
            ToolOrigin::Connection {
                server: server.clone(),
            },
        )
        .with_schema(schema)
        .with_annotations(annotations)
        .with_defer(defer);
        out.push(Materialised {
            definition,
            remote_name: tool.name.to_string(),
        });
    }
    out
}

#[cfg(test)]
mod tests;
