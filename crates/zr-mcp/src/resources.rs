//! A server's resources as two read-only tools of that server, `ListMcpResources` and `ReadMcpResource`: their definitions and what they answer.
//!
//! They are materialised with the server's own tools, as connection tools
//! of that server (`mcp__{server}__ListMcpResources`,
//! `mcp__{server}__ReadMcpResource`), so the resolver gives them to
//! exactly the agents that get the server's tools, and a pattern such as
//! `mcp__files` allows or denies them with the rest.

use rmcp::model::{ReadResourceResult, Resource, ResourceTemplate};
use serde_json::json;
use zr_types::{Annotations, ServerName, ToolDefinition, ToolName, ToolOrigin, ToolOutput};

use crate::materialise::Materialised;
use crate::result::{bound, map_resource};

/// The name of the tool that lists a server's resources.
pub const LIST_RESOURCES: &str = "ListMcpResources";

/// The name of the tool that reads one resource.
pub const READ_RESOURCE: &str = "ReadMcpResource";

/// The two tools of a server that offers resources.
pub(crate) fn resource_tools(server: &ServerName, defer: Option<bool>) -> Vec<Materialised> {
    let annotations = Annotations {
        read_only: true,
        destructive: Some(false),
        idempotent: Some(true),
        open_world: Some(false),
    };
    let tool = |local: &str, description: String, schema: serde_json::Value| {
        let name = ToolName::mcp(server, local).ok()?;
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
        Some(Materialised {
            definition,
            remote_name: local.to_owned(),
        })
    };
    [
        tool(
            LIST_RESOURCES,
            format!(
                "List the resources (files, documents, records) the MCP server '{server}' offers: \
                 one line each with its URI, name, MIME type and description, then its URI \
                 templates. Read one with mcp__{server}__{READ_RESOURCE}."
            ),
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
        ),
        tool(
            READ_RESOURCE,
            format!("Read one resource of the MCP server '{server}' by its URI."),
            json!({
                "type": "object",
                "properties": {"uri": {"type": "string", "description": "The resource's URI, as listed"}},
                "required": ["uri"],
                "additionalProperties": false
            }),
        ),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The listing as the model reads it.
pub(crate) fn listing(
    server: &ServerName,
    resources: &[Resource],
    templates: &[ResourceTemplate],
    max_bytes: usize,
) -> ToolOutput {
    let mut text = String::new();
    if resources.is_empty() && templates.is_empty() {
        text = format!("MCP server '{server}' lists no resources.");
    }
    for r in resources {
        text.push_str(&line(
            &r.uri,
            &r.name,
            r.mime_type.as_deref(),
            r.description.as_deref(),
        ));
    }
    if !templates.is_empty() {
        text.push_str("URI templates (fill in the {placeholders} to read one):\n");
        for t in templates {
            text.push_str(&line(
                &t.uri_template,
                &t.name,
                t.mime_type.as_deref(),
                t.description.as_deref(),
            ));
        }
    }
    ToolOutput {
        content: bound(vec![zr_types::ToolResultContent::Text { text }], max_bytes),
        is_error: false,
        display: None,
    }
}

fn line(uri: &str, name: &str, mime: Option<&str>, description: Option<&str>) -> String {
    let mut line = format!("{uri} - {name}");
    if let Some(mime) = mime {
        line.push_str(&format!(" ({mime})"));
    }
    if let Some(description) = description.map(str::trim).filter(|d| !d.is_empty()) {
        line.push_str(&format!(": {}", description.replace('\n', " ")));
    }
    line.push('\n');
    line
}

/// A read resource as the model reads it.
pub(crate) fn read(result: ReadResourceResult, max_bytes: usize) -> ToolOutput {
    let blocks = result.contents.into_iter().map(map_resource).collect();
    ToolOutput {
        content: bound(blocks, max_bytes),
        is_error: false,
        display: None,
    }
}
