//! The Chat Completions request body, built from zr's messages.
//!
//! Mapping of a zr user message: each tool result becomes a `tool` message
//! (one per result, in order; its text and JSON parts joined by blank
//! lines, prefixed `Error: ` when the call failed; a result of images only
//! says so in a short placeholder). Tool messages must follow the
//! assistant's `tool_calls` directly, so everything else of the user message (text blocks, and the images of tool results, which `tool`
//! messages cannot carry, each announced by a text part naming its call)
//! goes into one `user` message after them. An assistant message becomes
//! its text blocks (joined by blank lines) and its `tool_calls` (arguments
//! as a JSON string); thinking blocks are not sent (the API has no field
//! for them).

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;
use zr_types::{ContentBlock, ImageSource, MessageRole, ToolResultContent};

use super::{MaxTokensField, PROVIDER};
use crate::error::ProviderError;
use crate::provider::{ModelRequest, OutputFormat, ToolChoice};

/// The `tool` message of a result that holds only images, which follow in
/// the `user` message after the tool messages: an empty message would
/// leave the model to guess whether the call returned anything.
const IMAGE_ONLY: &str = "(the result is an image, sent in the next user message)";

/// The request body as JSON bytes.
pub(super) fn body(
    request: &ModelRequest,
    field: MaxTokensField,
) -> Result<Vec<u8>, ProviderError> {
    serde_json::to_vec(&Body::new(request, field)).map_err(|error| ProviderError::Protocol {
        provider: PROVIDER,
        message: format!("cannot encode the request: {error}"),
    })
}

#[derive(Debug, Serialize)]
struct Body<'a> {
    model: &'a str,
    messages: Vec<Message<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    stream: bool,
    stream_options: StreamOptions,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<ResponseFormat<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_effort: Option<&'static str>,
}

/// `{"type": "json_schema", "json_schema": {name, schema, strict}}`.
#[derive(Debug, Serialize)]
struct ResponseFormat<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    json_schema: &'a OutputFormat,
}

#[derive(Debug, Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Debug, Serialize)]
struct Tool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: Function<'a>,
}

#[derive(Debug, Serialize)]
struct Function<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

#[derive(Debug, Serialize)]
#[serde(tag = "role", rename_all = "snake_case")]
enum Message<'a> {
    System {
        content: &'a str,
    },
    User {
        content: UserContent<'a>,
    },
    Assistant {
        #[serde(skip_serializing_if = "Option::is_none")]
        content: Option<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: String,
    },
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
enum UserContent<'a> {
    Text(Cow<'a, str>),
    Parts(Vec<Part<'a>>),
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Part<'a> {
    Text { text: Cow<'a, str> },
    ImageUrl { image_url: ImageUrl },
}

#[derive(Debug, Serialize)]
struct ImageUrl {
    url: String,
}

#[derive(Debug, Serialize)]
struct ToolCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: FunctionCall<'a>,
}

#[derive(Debug, Serialize)]
struct FunctionCall<'a> {
    name: &'a str,
    arguments: String,
}

impl<'a> Body<'a> {
    fn new(request: &'a ModelRequest, field: MaxTokensField) -> Self {
        let mut messages = Vec::with_capacity(request.messages.len() + 1);
        if !request.system.is_empty() {
            messages.push(Message::System {
                content: &request.system,
            });
        }
        for message in request.messages.iter() {
            match message.role {
                MessageRole::User => push_user(&message.content, &mut messages),
                MessageRole::Assistant => messages.push(assistant(&message.content)),
            }
        }
        let tools = request
            .tools
            .iter()
            .map(|tool| Tool {
                kind: "function",
                function: Function {
                    name: tool.name.as_str(),
                    description: &tool.description,
                    parameters: &tool.input_schema,
                },
            })
            .collect();
        let (max_completion_tokens, max_tokens) = match field {
            MaxTokensField::MaxCompletionTokens => (Some(request.max_tokens), None),
            MaxTokensField::MaxTokens => (None, Some(request.max_tokens)),
        };
        Self {
            model: &request.model,
            messages,
            max_completion_tokens,
            max_tokens,
            stream: true,
            stream_options: StreamOptions {
                include_usage: true,
            },
            tools,
            // An answer in the output format is an answer without tools.
            tool_choice: match request.tool_choice {
                ToolChoice::Auto => None,
                _ => Some("none"),
            },
            response_format: request.output.as_deref().map(|format| ResponseFormat {
                kind: "json_schema",
                json_schema: format,
            }),
            reasoning_effort: request.effort.map(crate::provider::Effort::openai),
        }
    }
}

/// Appends the messages a zr user message becomes: its tool results as
/// `tool` messages, then the rest as one `user` message.
fn push_user<'a>(content: &'a [ContentBlock], messages: &mut Vec<Message<'a>>) {
    let mut parts = Vec::new();
    let mut images = Vec::new();
    for block in content {
        match block {
            ContentBlock::Text { text } => parts.push(Part::Text {
                text: Cow::Borrowed(text),
            }),
            // `display` is deliberately not read: it never reaches the model.
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
                display: _,
            } => {
                let (text, pictures) = result_text(content, *is_error);
                images.extend(pictures.into_iter().map(|p| (tool_use_id.as_str(), p)));
                messages.push(Message::Tool {
                    tool_call_id: tool_use_id,
                    content: text,
                });
            }
            // Not expected in a user message; the API has no place for them.
            ContentBlock::ToolUse { .. } | ContentBlock::Thinking { .. } => {}
        }
    }
    let mut image_parts = Vec::new();
    for (id, source) in images {
        image_parts.push(Part::Text {
            text: Cow::Owned(format!("Image returned by tool call {id}:")),
        });
        image_parts.push(Part::ImageUrl {
            image_url: ImageUrl {
                url: image_url(source),
            },
        });
    }
    image_parts.append(&mut parts);
    let content = match image_parts.as_mut_slice() {
        [] => return,
        [Part::Text { text }] => UserContent::Text(std::mem::take(text)),
        _ => UserContent::Parts(image_parts),
    };
    messages.push(Message::User { content });
}

/// A tool result as OpenAI's APIs take it (a `tool` message, a
/// `function_call_output`): its text and JSON parts joined by blank lines
/// ([`IMAGE_ONLY`] when it holds only images), prefixed `Error: ` when the
/// call failed; and its images, which go in a `user` message after the
/// results.
pub(super) fn result_text(
    content: &[ToolResultContent],
    is_error: bool,
) -> (String, Vec<&ImageSource>) {
    let mut texts = Vec::new();
    let mut images = Vec::new();
    for piece in content {
        match piece {
            ToolResultContent::Text { text } => texts.push(text.clone()),
            ToolResultContent::Json { value } => texts.push(value.to_string()),
            ToolResultContent::Image { source } => images.push(source),
        }
    }
    if texts.is_empty() && !images.is_empty() {
        texts.push(IMAGE_ONLY.to_owned());
    }
    let mut text = texts.join("\n\n");
    if is_error {
        text.insert_str(0, "Error: ");
    }
    (text, images)
}

/// An image as OpenAI's APIs take it: its URL, or a `data:` URL.
pub(super) fn image_url(source: &ImageSource) -> String {
    match source {
        ImageSource::Base64 { media_type, data } => format!("data:{media_type};base64,{data}"),
        ImageSource::Url { url } => url.clone(),
    }
}

fn assistant(content: &[ContentBlock]) -> Message<'_> {
    let mut texts = Vec::new();
    let mut tool_calls = Vec::new();
    for block in content {
        match block {
            ContentBlock::Text { text } => texts.push(text.as_str()),
            ContentBlock::ToolUse { id, name, input } => tool_calls.push(ToolCall {
                id,
                kind: "function",
                function: FunctionCall {
                    name,
                    arguments: input.to_string(),
                },
            }),
            ContentBlock::ToolResult { .. } | ContentBlock::Thinking { .. } => {}
        }
    }
    let text = texts.join("\n\n");
    Message::Assistant {
        content: if text.is_empty() && !tool_calls.is_empty() {
            None
        } else {
            Some(text)
        },
        tool_calls,
    }
}
