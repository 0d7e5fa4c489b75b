//! The Responses API request body, built from zr's messages.
//!
//! A zr user message becomes its tool results as `function_call_output`
//! items (one per result, in order, as Chat Completions' `tool` messages
//! say them: `openai/wire.rs`'s `result_text`), then one `user`
//! message with its text and the results' images (each announced by a
//! text part naming its call). A zr assistant message becomes, in block
//! order, `reasoning` items (thinking blocks that carry one), an
//! `assistant` message of its text and `function_call` items.

use serde::Serialize;
use serde_json::Value;
use zr_types::{ContentBlock, MessageRole};

use super::{PROVIDER, Reasoning};
use crate::error::ProviderError;
use crate::openai::wire::{image_url, result_text};
use crate::provider::{ModelRequest, OutputFormat, ToolChoice};

/// The request body as JSON bytes.
pub(super) fn body(request: &ModelRequest) -> Result<Vec<u8>, ProviderError> {
    serde_json::to_vec(&Body::new(request)).map_err(|error| ProviderError::Protocol {
        provider: PROVIDER,
        message: format!("cannot encode the request: {error}"),
    })
}

#[derive(Debug, Serialize)]
struct Body<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    instructions: &'a str,
    input: Vec<Item<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<&'static str>,
    max_output_tokens: u32,
    stream: bool,
    store: bool,
    include: [&'static str; 1],
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<ReasoningParam>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<TextParam<'a>>,
}

#[derive(Debug, Serialize)]
struct ReasoningParam {
    effort: &'static str,
}

#[derive(Debug, Serialize)]
struct TextParam<'a> {
    format: Format<'a>,
}

/// `{"type": "json_schema", name, schema, strict}`.
#[derive(Debug, Serialize)]
struct Format<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    format: &'a OutputFormat,
}

#[derive(Debug, Serialize)]
struct Tool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
    /// The API's default is `true`, which refuses schemas outside its
    /// strict subset; pool schemas are sent as they are.
    strict: bool,
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Item<'a> {
    Message {
        role: &'static str,
        content: Content<'a>,
    },
    FunctionCall {
        call_id: &'a str,
        name: &'a str,
        arguments: String,
    },
    FunctionCallOutput {
        call_id: &'a str,
        output: String,
    },
    Reasoning {
        id: String,
        summary: Vec<Summary<'a>>,
        encrypted_content: String,
    },
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
enum Content<'a> {
    Text(String),
    Parts(Vec<Part<'a>>),
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Part<'a> {
    InputText {
        text: &'a str,
    },
    InputImage {
        image_url: String,
        detail: &'static str,
    },
    // An owned text part (an image's announcement).
    #[serde(rename = "input_text")]
    Note {
        text: String,
    },
}

#[derive(Debug, Serialize)]
struct Summary<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

impl<'a> Body<'a> {
    fn new(request: &'a ModelRequest) -> Self {
        let mut input = Vec::with_capacity(request.messages.len());
        for message in request.messages.iter() {
            match message.role {
                MessageRole::User => push_user(&message.content, &mut input),
                MessageRole::Assistant => push_assistant(&message.content, &mut input),
            }
        }
        let tools = request
            .tools
            .iter()
            .map(|tool| Tool {
                kind: "function",
                name: tool.name.as_str(),
                description: &tool.description,
                parameters: &tool.input_schema,
                strict: false,
            })
            .collect();
        Self {
            model: &request.model,
            instructions: &request.system,
            input,
            tools,
            tool_choice: match request.tool_choice {
                ToolChoice::Auto => None,
                _ => Some("none"),
            },
            max_output_tokens: request.max_tokens,
            stream: true,
            store: false,
            include: ["reasoning.encrypted_content"],
            reasoning: request.effort.map(|effort| ReasoningParam {
                effort: effort.openai(),
            }),
            text: request.output.as_deref().map(|format| TextParam {
                format: Format {
                    kind: "json_schema",
                    format,
                },
            }),
        }
    }
}

/// Appends the items a zr user message becomes.
fn push_user<'a>(content: &'a [ContentBlock], input: &mut Vec<Item<'a>>) {
    let mut parts = Vec::new();
    let mut images = Vec::new();
    for block in content {
        match block {
            ContentBlock::Text { text } => parts.push(Part::InputText { text }),
            // `display` is deliberately not read: it never reaches the model.
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
                display: _,
            } => {
                let (output, pictures) = result_text(content, *is_error);
                images.extend(pictures.into_iter().map(|p| (tool_use_id.as_str(), p)));
                input.push(Item::FunctionCallOutput {
                    call_id: tool_use_id,
                    output,
                });
            }
            // Not expected in a user message; the API has no place for them.
            ContentBlock::ToolUse { .. } | ContentBlock::Thinking { .. } => {}
        }
    }
    let mut all = Vec::new();
    for (id, source) in images {
        all.push(Part::Note {
            text: format!("Image returned by tool call {id}:"),
        });
        all.push(Part::InputImage {
            image_url: image_url(source),
            detail: "auto",
        });
    }
    all.append(&mut parts);
    let content = match all.as_slice() {
        [] => return,
        [Part::InputText { text }] => Content::Text((*text).to_owned()),
        _ => Content::Parts(all),
    };
    input.push(Item::Message {
        role: "user",
        content,
    });
}

/// Appends the items a zr assistant message becomes, in block order
/// (consecutive text blocks are one message).
fn push_assistant<'a>(content: &'a [ContentBlock], input: &mut Vec<Item<'a>>) {
    let mut text: Vec<&str> = Vec::new();
    let flush = |text: &mut Vec<&str>, input: &mut Vec<Item<'a>>| {
        if !text.is_empty() {
            input.push(Item::Message {
                role: "assistant",
                content: Content::Text(text.join("\n\n")),
            });
            text.clear();
        }
    };
    for block in content {
        match block {
            ContentBlock::Text { text: body } if !body.is_empty() => text.push(body),
            ContentBlock::Text { .. } | ContentBlock::ToolResult { .. } => {}
            ContentBlock::Thinking {
                thinking,
                signature,
            } => {
                // Only the API's own reasoning items can be sent back.
                let Some(item) = signature.as_deref().and_then(Reasoning::from_signature) else {
                    continue;
                };
                flush(&mut text, input);
                let summary = if thinking.is_empty() {
                    Vec::new()
                } else {
                    vec![Summary {
                        kind: "summary_text",
                        text: thinking,
                    }]
                };
                input.push(Item::Reasoning {
                    id: item.id,
                    summary,
                    encrypted_content: item.encrypted_content,
                });
            }
            ContentBlock::ToolUse {
                id,
                name,
                input: args,
            } => {
                flush(&mut text, input);
                input.push(Item::FunctionCall {
                    call_id: id,
                    name,
                    arguments: args.to_string(),
                });
            }
        }
    }
    flush(&mut text, input);
}
