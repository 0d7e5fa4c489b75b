//! The host's tools and agent types: each host tool is a custom tool to
//! the resolver (the root gets them all, a host-defined agent type those
//! its `tools` name), run by a handler that sends the call over the
//! protocol and waits for its result. Pools, isolation, FindTool, budgets
//! and the effects boundary treat them as any custom tool.

use std::collections::BTreeMap;
use std::sync::Arc;

use zr_caps::{AgentCapabilities, AgentDefinition, ModelChoice, ToolPattern};
use zr_protocol::{AgentSpec, HostMessage, HostTool, ZrMessage};
use zr_types::{
    AgentName, Annotations, BoxFuture, ToolCall, ToolContext, ToolDefinition, ToolError,
    ToolHandler, ToolName, ToolOrigin, ToolOutput,
};

use super::wire::Wire;
use crate::error::CliError;

/// Runs a host tool through the protocol.
#[derive(Debug)]
pub(crate) struct HostToolHandler {
    wire: Arc<Wire>,
}

impl HostToolHandler {
    pub(crate) fn new(wire: Arc<Wire>) -> Self {
        Self { wire }
    }
}

impl ToolHandler for HostToolHandler {
    fn call<'a>(
        &'a self,
        call: &'a ToolCall,
        ctx: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let answer = self
                .wire
                .ask(|id| ZrMessage::ToolCall {
                    id,
                    tool: call.name.clone(),
                    input: call.input.clone(),
                    agent: ctx.agent.to_string(),
                    session: ctx.session.to_string(),
                })
                .await;
            match answer {
                Some(HostMessage::ToolResult {
                    content, is_error, ..
                }) => Ok(if is_error {
                    ToolOutput::error(content)
                } else {
                    ToolOutput::text(content)
                }),
                Some(other) => Ok(ToolOutput::error(format!(
                    "the host answered the call of {} with a {other:?} instead of a tool_result",
                    call.name
                ))),
                None => Err(ToolError::Unavailable {
                    tool: call.name.clone(),
                    reason: "the host closed zr's standard input".to_owned(),
                }),
            }
        })
    }
}

/// The definitions of the host's tools, by name.
///
/// # Errors
///
/// [`CliError::Usage`] for a name that is no tool name, or one of zr's
/// own tools.
pub(crate) fn definitions(
    tools: &[HostTool],
) -> Result<BTreeMap<String, Arc<ToolDefinition>>, CliError> {
    let mut out = BTreeMap::new();
    for tool in tools {
        let name: ToolName = tool.name.parse().map_err(|e| {
            CliError::usage(
                format!("host tool '{}': {e}", tool.name),
                "name a tool with letters, digits, '_' and '-'",
            )
        })?;
        if zr_types::RESERVED_TOOL_NAMES.contains(&name.as_str())
            || zr_types::builtin_spec(name.as_str()).is_some()
        {
            return Err(CliError::usage(
                format!("host tool '{name}' has the name of one of zr's own tools"),
                "give it another name",
            ));
        }
        let annotations = if tool.read_only {
            Annotations::read_only()
        } else {
            Annotations::default()
        };
        let definition = ToolDefinition::new(name, tool.description.clone(), ToolOrigin::Custom)
            .with_schema(tool.input_schema.clone())
            .with_annotations(annotations);
        out.insert(tool.name.clone(), Arc::new(definition));
    }
    Ok(out)
}

/// The agent type `spec` defines as `name`: its `tools` that are host
/// tools become its custom tools, the others its allow list.
///
/// # Errors
///
/// [`CliError::Usage`] for a bad name or tool pattern.
pub(crate) fn agent(
    name: &str,
    spec: &AgentSpec,
    host_tools: &BTreeMap<String, Arc<ToolDefinition>>,
) -> Result<AgentDefinition, CliError> {
    let agent_name: AgentName = name.parse().map_err(|e| {
        CliError::usage(
            format!("agent type '{name}': {e}"),
            "name it with lowercase letters, digits and '-'",
        )
    })?;
    let mut capabilities = AgentCapabilities::default();
    if let Some(tools) = &spec.tools {
        let (custom, builtin): (Vec<&String>, Vec<&String>) =
            tools.iter().partition(|t| host_tools.contains_key(*t));
        capabilities.custom_tools = Some(
            custom
                .iter()
                .filter_map(|t| host_tools.get(*t).map(Arc::clone))
                .collect(),
        );
        capabilities.allowed_tools = Some(patterns(name, "tools", &builtin)?);
    }
    if let Some(denied) = &spec.disallowed_tools {
        let denied: Vec<&String> = denied.iter().collect();
        capabilities.disallowed_tools = Some(patterns(name, "disallowed_tools", &denied)?);
    }
    let mut definition = AgentDefinition::new(agent_name, &spec.description, &spec.prompt)
        .with_capabilities(capabilities);
    definition.max_turns = spec.max_turns;
    if let Some(model) = &spec.model {
        definition.model = ModelChoice::parse(model);
    }
    Ok(definition)
}

fn patterns(agent: &str, key: &str, list: &[&String]) -> Result<Vec<ToolPattern>, CliError> {
    list.iter()
        .map(|t| {
            t.parse().map_err(|e| {
                CliError::usage(
                    format!("agent type '{agent}' {key}: '{t}': {e}"),
                    "name a tool (Read, Bash, a host tool) or a pattern such as mcp__github__*",
                )
            })
        })
        .collect()
}
