//! Decodes the Messages API's stream events into model events and the
//! final response.

use serde::Deserialize;
use serde_json::Value;
use zr_types::{ContentBlock, StopReason, Usage};

use super::PROVIDER;
use crate::error::ProviderError;
use crate::http::{self, ApiError, Decoder, Failure, SseEvent, truncate};
use crate::provider::{ModelEvent, ModelResponse};

/// Error types in the stream that another attempt may cure (besides a
/// code of 429 or 5xx, which proxies send).
const RETRYABLE: [&str; 4] = [
    "overloaded_error",
    "api_error",
    "rate_limit_error",
    "timeout_error",
];

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum StreamEvent {
    MessageStart {
        message: MessageStart,
    },
    ContentBlockStart {
        index: usize,
        content_block: StartBlock,
    },
    ContentBlockDelta {
        index: usize,
        delta: Delta,
    },
    ContentBlockStop {
        index: usize,
    },
    MessageDelta {
        delta: MessageDelta,
        #[serde(default)]
        usage: Option<WireUsage>,
    },
    MessageStop,
    Ping,
    Error {
        error: ApiError,
    },
    /// Event types added after this version: ignored, as the API asks.
    #[serde(other)]
    Unknown,
}

/// A whole answer, from a server that did not stream: the Messages API's
/// message, or an error object.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WholeAnswer {
    Message {
        content: Vec<StartBlock>,
        #[serde(default)]
        stop_reason: Option<String>,
        #[serde(default)]
        usage: Option<WireUsage>,
        #[serde(default)]
        model: Option<String>,
        #[serde(default)]
        id: Option<String>,
    },
    Error {
        error: ApiError,
    },
}

#[derive(Debug, Deserialize)]
struct MessageStart {
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    id: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum StartBlock {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Option<Value>,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        signature: Option<String>,
    },
    /// Block types zr has no vocabulary for (`redacted_thinking`, server
    /// tools): skipped with their deltas.
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Delta {
    #[serde(rename = "text_delta")]
    Text { text: String },
    #[serde(rename = "input_json_delta")]
    InputJson { partial_json: String },
    #[serde(rename = "thinking_delta")]
    Thinking { thinking: String },
    #[serde(rename = "signature_delta")]
    Signature { signature: String },
    /// `citations_delta` and later additions.
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
struct MessageDelta {
    #[serde(default)]
    stop_reason: Option<String>,
}

/// Usage as the API reports it; `message_delta` repeats the counts that
/// changed.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
}

/// A content block being assembled.
#[derive(Debug)]
enum Building {
    Text(String),
    Thinking {
        text: String,
        signature: Option<String>,
    },
    ToolUse {
        id: String,
        name: String,
        json: String,
        start_input: Option<Value>,
    },
    Skipped,
}

/// The state of one attempt's stream.
#[derive(Debug, Default)]
pub(super) struct MessageDecoder {
    blocks: Vec<Building>,
    usage: Usage,
    stop_reason: Option<String>,
}

fn protocol(message: String) -> Failure {
    Failure::fatal(ProviderError::Protocol {
        provider: PROVIDER,
        message,
    })
}

impl MessageDecoder {
    fn add_usage(&mut self, usage: Option<WireUsage>) {
        let Some(usage) = usage else { return };
        let fields = [
            (usage.input_tokens, &mut self.usage.input_tokens),
            (usage.output_tokens, &mut self.usage.output_tokens),
            (
                usage.cache_read_input_tokens,
                &mut self.usage.cache_read_input_tokens,
            ),
            (
                usage.cache_creation_input_tokens,
                &mut self.usage.cache_creation_input_tokens,
            ),
        ];
        for (value, field) in fields {
            if let Some(value) = value {
                *field = value;
            }
        }
    }

    fn delta(
        &mut self,
        index: usize,
        delta: Delta,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), Failure> {
        let Some(block) = self.blocks.get_mut(index) else {
            return Err(protocol(format!(
                "content_block_delta for block {index}, which was not started"
            )));
        };
        match (block, delta) {
            (Building::Text(text), Delta::Text { text: piece }) => {
                text.push_str(&piece);
                out.push(ModelEvent::TextDelta { text: piece });
            }
            (Building::Thinking { text, .. }, Delta::Thinking { thinking }) => {
                text.push_str(&thinking);
                out.push(ModelEvent::ThinkingDelta { text: thinking });
            }
            (Building::Thinking { signature, .. }, Delta::Signature { signature: piece }) => {
                signature.get_or_insert_with(String::new).push_str(&piece);
            }
            (Building::ToolUse { json, .. }, Delta::InputJson { partial_json }) => {
                json.push_str(&partial_json);
            }
            (Building::Skipped, _) | (_, Delta::Other) => {}
            (block, delta) => {
                return Err(protocol(format!(
                    "content block {index}: a {} delta does not fit a {} block",
                    delta.name(),
                    block.name()
                )));
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<ModelEvent, Failure> {
        let Some(stop_reason) = self.stop_reason.take() else {
            return Err(protocol("message_stop arrived before a stop_reason".into()));
        };
        let cut_off = stop_reason == "max_tokens";
        let mut content = Vec::with_capacity(self.blocks.len());
        for block in std::mem::take(&mut self.blocks) {
            content.push(match block {
                Building::Text(text) => ContentBlock::Text { text },
                Building::Thinking { text, signature } => ContentBlock::Thinking {
                    thinking: text,
                    signature,
                },
                Building::ToolUse {
                    id,
                    name,
                    json,
                    start_input,
                } => {
                    let input = match start_input {
                        Some(input) if json.trim().is_empty() && input.is_object() => input,
                        _ => http::tool_input(PROVIDER, &id, &name, &json, cut_off)?,
                    };
                    ContentBlock::ToolUse { id, name, input }
                }
                Building::Skipped => continue,
            });
        }
        Ok(ModelEvent::Completed(ModelResponse {
            content,
            stop_reason: StopReason::from(stop_reason),
            usage: self.usage,
        }))
    }
}

impl Decoder for MessageDecoder {
    fn decode(&mut self, event: &SseEvent, out: &mut Vec<ModelEvent>) -> Result<(), Failure> {
        let parsed: StreamEvent = serde_json::from_str(&event.data).map_err(|error| {
            protocol(format!(
                "event '{}' is not valid JSON ({error}): {}",
                event.event,
                truncate(&event.data, 200)
            ))
        })?;
        self.event(parsed, out)
    }

    fn end(&mut self) -> Option<Result<ModelEvent, Failure>> {
        None
    }

    /// A whole message is decoded as the events that would have streamed
    /// it: its start, each block started whole, its stop.
    fn whole(&mut self, body: &str, out: &mut Vec<ModelEvent>) -> Result<bool, Failure> {
        let Ok(answer) = serde_json::from_str::<WholeAnswer>(body) else {
            return Ok(false);
        };
        let (content, stop_reason, start) = match answer {
            WholeAnswer::Error { error } => return Err(error.into_failure(PROVIDER, &RETRYABLE)),
            WholeAnswer::Message {
                content,
                stop_reason,
                usage,
                model,
                id,
            } => (content, stop_reason, MessageStart { usage, model, id }),
        };
        self.event(StreamEvent::MessageStart { message: start }, out)?;
        for (index, content_block) in content.into_iter().enumerate() {
            self.event(
                StreamEvent::ContentBlockStart {
                    index,
                    content_block,
                },
                out,
            )?;
        }
        self.event(
            StreamEvent::MessageDelta {
                delta: MessageDelta { stop_reason },
                usage: None,
            },
            out,
        )?;
        self.event(StreamEvent::MessageStop, out)?;
        Ok(true)
    }
}

impl MessageDecoder {
    fn event(&mut self, parsed: StreamEvent, out: &mut Vec<ModelEvent>) -> Result<(), Failure> {
        match parsed {
            StreamEvent::MessageStart { message } => {
                if let Some(model) = message.model {
                    out.push(ModelEvent::Metadata {
                        model,
                        id: message.id,
                    });
                }
                self.add_usage(message.usage);
            }
            StreamEvent::ContentBlockStart {
                index,
                content_block,
            } => {
                if index != self.blocks.len() {
                    return Err(protocol(format!(
                        "content_block_start for block {index}, expected block {}",
                        self.blocks.len()
                    )));
                }
                self.blocks.push(match content_block {
                    StartBlock::Text { text } => {
                        if !text.is_empty() {
                            out.push(ModelEvent::TextDelta { text: text.clone() });
                        }
                        Building::Text(text)
                    }
                    StartBlock::Thinking {
                        thinking,
                        signature,
                    } => {
                        if !thinking.is_empty() {
                            out.push(ModelEvent::ThinkingDelta {
                                text: thinking.clone(),
                            });
                        }
                        Building::Thinking {
                            text: thinking,
                            signature: signature.filter(|signature| !signature.is_empty()),
                        }
                    }
                    StartBlock::ToolUse { id, name, input } => {
                        out.push(ModelEvent::ToolUseStarted {
                            id: id.clone(),
                            name: name.clone(),
                        });
                        Building::ToolUse {
                            id,
                            name,
                            json: String::new(),
                            start_input: input,
                        }
                    }
                    StartBlock::Other => Building::Skipped,
                });
            }
            StreamEvent::ContentBlockDelta { index, delta } => self.delta(index, delta, out)?,
            StreamEvent::ContentBlockStop { index } => {
                if index >= self.blocks.len() {
                    return Err(protocol(format!(
                        "content_block_stop for block {index}, which was not started"
                    )));
                }
            }
            StreamEvent::MessageDelta { delta, usage } => {
                if delta.stop_reason.is_some() {
                    self.stop_reason = delta.stop_reason;
                }
                self.add_usage(usage);
            }
            StreamEvent::MessageStop => out.push(self.finish()?),
            StreamEvent::Ping | StreamEvent::Unknown => {}
            StreamEvent::Error { error } => return Err(error.into_failure(PROVIDER, &RETRYABLE)),
        }
        Ok(())
    }
}

impl Building {
    fn name(&self) -> &'static str {
        match self {
            Self::Text(_) => "text",
            Self::Thinking { .. } => "thinking",
            Self::ToolUse { .. } => "tool_use",
            Self::Skipped => "skipped",
        }
    }
}

impl Delta {
    fn name(&self) -> &'static str {
        match self {
            Self::Text { .. } => "text_delta",
            Self::InputJson { .. } => "input_json_delta",
            Self::Thinking { .. } => "thinking_delta",
            Self::Signature { .. } => "signature_delta",
            Self::Other => "unknown",
        }
    }
}
