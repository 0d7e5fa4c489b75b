//! The Messages API request body, built from zr's messages.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;
use zr_types::{ContentBlock, ImageSource, MessageRole, ToolResultContent};

use super::PROVIDER;
use crate::error::ProviderError;
use crate::provider::{ModelRequest, OutputFormat, ToolChoice};

/// The request body as JSON bytes.
pub(super) fn body(request: &ModelRequest) -> Result<Vec<u8>, ProviderError> {
    serde_json::to_vec(&Body::new(request)).map_err(|error| ProviderError::Protocol {
        provider: PROVIDER,
        message: format!("cannot encode the request: {error}"),
    })
}

/// `{"type": "ephemeral"}`: a prompt-cache breakpoint.
#[derive(Debug, Clone, Copy, Serialize)]
struct Ephemeral {
    #[serde(rename = "type")]
    kind: &'static str,
}

const EPHEMERAL: Option<Ephemeral> = Some(Ephemeral { kind: "ephemeral" });

/// The body. Its fields are written in this order, so that everything a
/// fork shares with its parent's last request (model, limits, system,
/// tools, the first messages) is one contiguous prefix of bytes; the
/// `tool_choice` of a summary request (tools disabled) and `thinking`
/// come after the messages and cannot break it.
#[derive(Debug, Serialize)]
struct Body<'a> {
    model: &'a str,
    max_tokens: u32,
    stream: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    system: Vec<Block<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Tool<'a>>,
    messages: Vec<Message<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Choice<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<Thinking>,
}

/// `{"type": "enabled", "budget_tokens": N}`: extended thinking.
#[derive(Debug, Serialize)]
struct Thinking {
    #[serde(rename = "type")]
    kind: &'static str,
    budget_tokens: u32,
}

#[derive(Debug, Serialize)]
struct Tool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: Cow<'a, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<Ephemeral>,
}

#[derive(Debug, Serialize)]
struct Choice<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
}

/// The description of the answer tool a [`ToolChoice::Answer`] request
/// forces.
const ANSWER_TOOL: &str = "Give your final answer: the input of this call is the answer, as its schema says. Call it once, with nothing else.";

/// The property that holds an answer whose schema is not an object's
/// (a tool's input must be an object).
pub(super) const WRAPPED: &str = "value";

/// The input schema of the answer tool of `format`, and whether the answer
/// is wrapped in [`WRAPPED`] (a tool's input must be an object).
pub(super) fn answer_schema(format: &OutputFormat) -> (Cow<'_, Value>, bool) {
    if format.schema.get("type").and_then(Value::as_str) == Some("object") {
        return (Cow::Borrowed(&format.schema), false);
    }
    let wrapped = serde_json::json!({
        "type": "object",
        "properties": {WRAPPED: format.schema},
        "required": [WRAPPED],
        "additionalProperties": false,
    });
    (Cow::Owned(wrapped), true)
}

#[derive(Debug, Serialize)]
struct Message<'a> {
    role: &'static str,
    content: Vec<Block<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block<'a> {
    Text {
        text: Cow<'a, str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<Ephemeral>,
    },
    Image {
        source: Source<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<Ephemeral>,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: &'a Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<Ephemeral>,
    },
    ToolResult {
        tool_use_id: &'a str,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        content: Vec<Block<'a>>,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<Ephemeral>,
    },
    Thinking {
        thinking: &'a str,
        signature: &'a str,
    },
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Source<'a> {
    Base64 { media_type: &'a str, data: &'a str },
    Url { url: &'a str },
}

impl<'a> Body<'a> {
    fn new(request: &'a ModelRequest) -> Self {
        let system = if request.system.trim().is_empty() {
            Vec::new()
        } else {
            vec![Block::Text {
                text: Cow::Borrowed(&request.system),
                cache_control: EPHEMERAL,
            }]
        };
        let mut tools: Vec<Tool<'a>> = request
            .tools
            .iter()
            .map(|tool| Tool {
                name: tool.name.as_str(),
                description: &tool.description,
                input_schema: Cow::Borrowed(&tool.input_schema),
                cache_control: None,
            })
            .collect();
        // The breakpoint goes on the last tool of the pool, which earlier
        // requests cached, not on the answer tool after it.
        if let Some(last) = tools.last_mut() {
            last.cache_control = EPHEMERAL;
        }
        // The answer is forced as a tool call: the API's way to constrain
        // an answer to a schema.
        let answer = match (request.tool_choice, &request.output) {
            (ToolChoice::Answer, Some(format)) => {
                tools.push(Tool {
                    name: &format.name,
                    description: ANSWER_TOOL,
                    input_schema: answer_schema(format).0,
                    cache_control: None,
                });
                Some(format.name.as_str())
            }
            _ => None,
        };
        // A message left without blocks is not sent: the API rejects empty
        // content, and merges the consecutive same-role messages this may
        // leave behind. `shared` counts the messages sent from the first
        // `cache_prefix` ones.
        let prefix = request.cache_prefix.unwrap_or(0);
        let mut shared = 0;
        let mut messages: Vec<Message<'a>> = Vec::with_capacity(request.messages.len());
        for (i, message) in request.messages.iter().enumerate() {
            let content: Vec<Block<'a>> =
                message.content.iter().filter_map(Block::from_zr).collect();
            if content.is_empty() {
                continue;
            }
            messages.push(Message {
                role: match message.role {
                    MessageRole::User => "user",
                    MessageRole::Assistant => "assistant",
                },
                content,
            });
            if i < prefix {
                shared = messages.len();
            }
        }
        // Breakpoints (the API allows four): the system block, the last
        // tool, the end of a prefix shared with another request (a fork's
        // parent wrote it to the cache), and the last block.
        for at in [shared.checked_sub(1), messages.len().checked_sub(1)]
            .into_iter()
            .flatten()
        {
            if let Some(block) = messages
                .get_mut(at)
                .and_then(|message| message.content.last_mut())
            {
                block.mark_cache();
            }
        }
        Self {
            model: &request.model,
            max_tokens: request.max_tokens,
            stream: true,
            system,
            tools,
            messages,
            tool_choice: match (request.tool_choice, answer) {
                (_, Some(name)) => Some(Choice {
                    kind: "tool",
                    name: Some(name),
                }),
                (ToolChoice::Auto, None) => None,
                (_, None) => Some(Choice {
                    kind: "none",
                    name: None,
                }),
            },
            // The API refuses thinking with a forced tool call.
            thinking: match answer {
                Some(_) => None,
                None => request
                    .effort
                    .and_then(|effort| effort.thinking_budget(request.max_tokens))
                    .map(|budget_tokens| Thinking {
                        kind: "enabled",
                        budget_tokens,
                    }),
            },
        }
    }
}

/// A text block, or `None` for blank text: the API rejects text blocks
/// that are empty or only whitespace (the model itself sometimes answers
/// `"\n\n"` before a tool call, and tools may return nothing).
fn text(text: &str) -> Option<Block<'_>> {
    (!text.trim().is_empty()).then_some(Block::Text {
        text: Cow::Borrowed(text),
        cache_control: None,
    })
}

impl<'a> Block<'a> {
    /// The wire block of `block`, or `None` for what the API would reject:
    /// blank text, and thinking without a signature (which only the API can
    /// produce, so an unsigned one came from another provider).
    fn from_zr(block: &'a ContentBlock) -> Option<Self> {
        Some(match block {
            ContentBlock::Text { text: body } => return text(body),
            ContentBlock::ToolUse { id, name, input } => Self::ToolUse {
                id,
                name,
                input,
                cache_control: None,
            },
            // `display` is deliberately not read: it never reaches the model.
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
                display: _,
            } => Self::ToolResult {
                tool_use_id,
                content: content.iter().filter_map(Self::from_result).collect(),
                is_error: *is_error,
                cache_control: None,
            },
            ContentBlock::Thinking {
                thinking,
                signature,
            } => Self::Thinking {
                thinking,
                signature: signature.as_deref()?,
            },
        })
    }

    fn from_result(content: &'a ToolResultContent) -> Option<Self> {
        Some(match content {
            ToolResultContent::Text { text: body } => return text(body),
            ToolResultContent::Image { source } => Self::Image {
                source: match source {
                    ImageSource::Base64 { media_type, data } => Source::Base64 { media_type, data },
                    ImageSource::Url { url } => Source::Url { url },
                },
                cache_control: None,
            },
            ToolResultContent::Json { value } => Self::Text {
                text: Cow::Owned(value.to_string()),
                cache_control: None,
            },
        })
    }

    /// Puts a cache breakpoint on this block, if its type takes one
    /// (thinking blocks do not).
    fn mark_cache(&mut self) {
        match self {
            Self::Text { cache_control, .. }
            | Self::Image { cache_control, .. }
            | Self::ToolUse { cache_control, .. }
            | Self::ToolResult { cache_control, .. } => *cache_control = EPHEMERAL,
            Self::Thinking { .. } => {}
        }
    }
}
