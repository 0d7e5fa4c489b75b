//! How the GenAI conventions name a span: `{operation} {target}`, the
//! target being the value of one attribute of the operation's.

/// The attribute whose value follows the operation in a span's name
/// (`invoke_agent worker`, `chat claude-sonnet-4-5`, `execute_tool Bash`).
pub(crate) fn naming_attribute(operation: &str) -> Option<&'static str> {
    match operation {
        "invoke_agent" => Some("gen_ai.agent.name"),
        "chat" => Some("gen_ai.request.model"),
        "execute_tool" => Some("gen_ai.tool.name"),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
