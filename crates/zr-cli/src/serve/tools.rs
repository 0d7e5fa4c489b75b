//! The MCP tools of `zr mcp serve`: one per agent type, named after it,
//! with the input of a `Task` call (its `prompt` and `description`; the
//! type is the tool), and the task a call's arguments make.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use rmcp::model::{JsonObject, Tool};
use serde_json::{Value, json};
use zr_caps::AgentDefinition;
use zr_engine::HostTask;
use zr_types::AgentName;

/// The first message of a subagent called without a `prompt`: a type
/// whose instructions say the whole job (a test runner, a reviewer of the
/// current diff) needs no more.
pub(crate) const DEFAULT_PROMPT: &str =
    "Carry out the task your instructions describe, then answer with your conclusion.";

/// The input keys a tool takes: `output_schema` only for a type that
/// declares no schema of its own (a declared one is the tool's
/// `outputSchema`, which a call must not contradict).
const FIELDS: &str = "prompt, description";
const FIELDS_WITH_SCHEMA: &str = "prompt, description, output_schema";

/// The agent types as MCP tools, in name order, and the way back from a
/// tool's name to its type.
#[derive(Debug)]
pub(crate) struct AgentTools {
    tools: Vec<Tool>,
    types: BTreeMap<String, Served>,
}

/// What a tool stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Served {
    /// The agent type.
    pub(crate) agent_type: AgentName,
    /// Whether a call may give an `output_schema` (the type declares
    /// none that the tool advertises).
    pub(crate) takes_schema: bool,
}

/// The MCP name of an agent type: its name in snake case (`code-reviewer`
/// is `code_reviewer`), the way MCP tools are usually named. Agent names
/// hold no `_`, so two types meet only when they differ by `-` against
/// `.`; the later one keeps its own name then.
fn tool_name(name: &AgentName) -> String {
    name.as_str().replace(['-', '.'], "_")
}

impl AgentTools {
    /// One tool per type of `types`.
    pub(crate) fn new(types: &BTreeMap<AgentName, AgentDefinition>) -> Self {
        let plain = Arc::new(input_schema(false));
        let with_schema = Arc::new(input_schema(true));
        let mut tools = Vec::new();
        let mut by_name = BTreeMap::new();
        for (name, definition) in types {
            let mut mcp = tool_name(name);
            if by_name.contains_key(&mcp) {
                mcp = name.as_str().to_owned();
            }
            let description = format!(
                "{} (zr subagent '{name}': runs with its own context, tools and budget in the project, and returns only its conclusion.)",
                definition.description.trim_end()
            );
            // MCP's outputSchema describes an object: a type whose answer
            // is another JSON value still answers it, as text.
            let output = definition
                .output_schema
                .as_ref()
                .and_then(Value::as_object)
                .filter(|schema| schema.get("type") == Some(&json!("object")))
                .cloned();
            let takes_schema = definition.output_schema.is_none();
            let input = if takes_schema { &with_schema } else { &plain };
            let mut tool = Tool::new(Cow::Owned(mcp.clone()), description, Arc::clone(input));
            tool.title = Some(name.as_str().to_owned());
            tool.output_schema = output.map(Arc::new);
            tools.push(tool);
            by_name.insert(
                mcp,
                Served {
                    agent_type: name.clone(),
                    takes_schema,
                },
            );
        }
        Self {
            tools,
            types: by_name,
        }
    }

    /// The tools, for `tools/list`.
    pub(crate) fn list(&self) -> &[Tool] {
        &self.tools
    }

    /// What a tool name stands for.
    pub(crate) fn served(&self, tool: &str) -> Option<&Served> {
        self.types.get(tool)
    }
}

/// `{prompt?, description?}` (and `output_schema?`), nothing else.
fn input_schema(takes_schema: bool) -> JsonObject {
    let mut schema = json!({
        "type": "object",
        "properties": {
            "prompt": {
                "type": "string",
                "description": "The task for the subagent: everything it needs to know, since it sees nothing of your conversation. Leave it out when the agent's own instructions say the whole job."
            },
            "description": {
                "type": "string",
                "description": "A short (3-5 word) description of the task, shown in zr's transcript."
            }
        },
        "additionalProperties": false
    });
    if takes_schema {
        schema["properties"]["output_schema"] = json!({
            "type": "object",
            "description": "A JSON Schema the subagent's answer must match; the answer is then that JSON value."
        });
    }
    match schema {
        Value::Object(map) => map,
        _ => unreachable!("the schema is an object literal"),
    }
}

/// The task a call of `agent_type`'s tool with `arguments` asks for; `Err`
/// names the field that is wrong, for the caller's model.
pub(crate) fn task_of(served: &Served, arguments: Option<&JsonObject>) -> Result<HostTask, String> {
    let agent_type = &served.agent_type;
    let empty = JsonObject::new();
    let arguments = arguments.unwrap_or(&empty);
    let fields = if served.takes_schema {
        FIELDS_WITH_SCHEMA
    } else {
        FIELDS
    };
    if let Some(key) = arguments
        .keys()
        .find(|k| !fields.split(", ").any(|f| f == k.as_str()))
    {
        return Err(format!("unknown argument '{key}'; arguments: {fields}"));
    }
    let text = |key: &str| match arguments.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Err(format!("{key}: must not be empty")),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!("{key}: expected a string, got {other}")),
    };
    let prompt = text("prompt")?;
    let description = match text("description")? {
        Some(description) => description,
        None => prompt.as_deref().map_or_else(
            || format!("{agent_type} task"),
            |p| p.split_whitespace().take(5).collect::<Vec<_>>().join(" "),
        ),
    };
    Ok(HostTask {
        subagent_type: agent_type.clone(),
        description,
        prompt: prompt.unwrap_or_else(|| DEFAULT_PROMPT.to_owned()),
        output_schema: arguments.get("output_schema").cloned(),
    })
}

#[cfg(test)]
mod tests;
