//! What a `tracing` field of the engine's spans is in OpenTelemetry's
//! terms: a span property (`otel.*`, as `tracing-opentelemetry` named
//! them), message content (exported only with `capture_content`), a typed
//! attribute the engine cannot write as such (the finish reasons, a
//! string array), or a plain attribute; and how a span is named.

/// The attributes that hold message content.
pub(crate) const CONTENT_ATTRIBUTES: [&str; 5] = [
    "gen_ai.system_instructions",
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
];

/// A string array in the conventions; the engine records it
/// comma-separated.
pub(crate) const FINISH_REASONS: &str = "gen_ai.response.finish_reasons";

/// An event's field that names it.
pub(crate) const MESSAGE: &str = "message";

/// What a span's field is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// `otel.name`: the whole span name.
    Name,
    /// `otel.kind`: `client`, `server`, ...
    Kind,
    /// `otel.status_code`: `ok` or `error`.
    StatusCode,
    /// `otel.status_description`: an error's message.
    StatusDescription,
    /// The finish reasons.
    FinishReasons,
    /// Message content.
    Content,
    /// Any other field: an attribute of its own name.
    Attribute,
}

/// What the field `name` is for.
pub(crate) fn role(name: &str) -> Role {
    if let Some(property) = name.strip_prefix("otel.") {
        return match property {
            "name" => Role::Name,
            "kind" => Role::Kind,
            "status_code" => Role::StatusCode,
            "status_description" => Role::StatusDescription,
            _ => Role::Attribute,
        };
    }
    if name == FINISH_REASONS {
        Role::FinishReasons
    } else if CONTENT_ATTRIBUTES.contains(&name) {
        Role::Content
    } else {
        Role::Attribute
    }
}

/// The attribute whose value follows the operation in a span's name
/// (`invoke_agent worker`, `chat claude-sonnet-4-5`, `execute_tool Bash`),
/// for a `tracing` span called `span_name`.
pub(crate) fn naming_attribute(span_name: &str) -> Option<&'static str> {
    match span_name {
        "invoke_agent" => Some("gen_ai.agent.name"),
        "chat" => Some("gen_ai.request.model"),
        "execute_tool" => Some("gen_ai.tool.name"),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
