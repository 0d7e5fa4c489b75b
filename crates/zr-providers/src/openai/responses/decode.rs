//! Decodes the Responses API's stream events into model events and the
//! final response.

use std::collections::BTreeMap;

use serde::Deserialize;
use zr_types::{ContentBlock, StopReason, Usage};

use super::{PROVIDER, Reasoning};
use crate::error::ProviderError;
use crate::http::{self, ApiError, Decoder, Failure, SseEvent, truncate};
use crate::openai::decode::RETRYABLE;
use crate::provider::{ModelEvent, ModelResponse};

/// One event; only the fields zr reads.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Event {
    #[serde(rename = "type")]
    kind: String,
    output_index: Option<u64>,
    item: Option<OutputItem>,
    delta: Option<String>,
    response: Option<Response>,
    // The `error` event: its fields at the top level, or (some servers)
    // inside `error`.
    code: Option<serde_json::Value>,
    message: Option<String>,
    error: Option<ApiError>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Response {
    /// `resp_...`, and the model that answered (`gpt-5-2025-08-07` for a
    /// request of `gpt-5`): for telemetry's `gen_ai.response.*`.
    id: Option<String>,
    model: Option<String>,
    output: Vec<OutputItem>,
    usage: Option<WireUsage>,
    error: Option<ApiError>,
    incomplete_details: Option<Incomplete>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Incomplete {
    reason: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum OutputItem {
    Message {
        #[serde(default)]
        content: Vec<MessagePart>,
    },
    FunctionCall {
        call_id: String,
        name: String,
        #[serde(default)]
        arguments: String,
    },
    Reasoning {
        id: String,
        #[serde(default)]
        summary: Vec<TextPart>,
        /// Reasoning text, as open models served through the API send it.
        #[serde(default)]
        content: Option<Vec<TextPart>>,
        #[serde(default)]
        encrypted_content: Option<String>,
    },
    /// Built-in tools' items (web search, ...), which zr does not ask for.
    #[serde(other)]
    Other,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum MessagePart {
    OutputText {
        text: String,
    },
    Refusal {
        refusal: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Debug, Clone, Deserialize)]
struct TextPart {
    #[serde(default)]
    text: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct WireUsage {
    input_tokens: u64,
    output_tokens: u64,
    input_tokens_details: Option<InputDetails>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct InputDetails {
    cached_tokens: Option<u64>,
}

/// The state of one attempt's stream.
#[derive(Debug, Default)]
pub(super) struct EventDecoder {
    /// Finished output items by their index.
    done: BTreeMap<u64, OutputItem>,
    /// Whether `ModelEvent::Metadata` was sent (`response.created`,
    /// `response.in_progress` and `response.completed` each repeat it).
    told_model: bool,
}

fn protocol(message: String) -> Failure {
    Failure::fatal(ProviderError::Protocol {
        provider: PROVIDER,
        message,
    })
}

impl EventDecoder {
    /// The model and id of the first response object that names a model,
    /// as `ModelEvent::Metadata`, once.
    fn tell_model(&mut self, response: &Response, out: &mut Vec<ModelEvent>) {
        if let Some(model) = response.model.as_ref().filter(|m| !m.is_empty())
            && !self.told_model
        {
            self.told_model = true;
            out.push(ModelEvent::Metadata {
                model: model.clone(),
                id: response.id.clone(),
            });
        }
    }

    /// The whole answer: the finished items in output order (those of
    /// `response.output` if no item was seen finishing).
    fn finish(&mut self, response: Response, incomplete: bool) -> Result<ModelEvent, Failure> {
        let items: Vec<OutputItem> = if self.done.is_empty() {
            response.output
        } else {
            std::mem::take(&mut self.done).into_values().collect()
        };
        let mut content = Vec::new();
        let mut called = false;
        for item in items {
            match item {
                OutputItem::Message { content: parts } => {
                    let text: String = parts
                        .into_iter()
                        .filter_map(|part| match part {
                            MessagePart::OutputText { text } => Some(text),
                            MessagePart::Refusal { refusal } => Some(refusal),
                            MessagePart::Other => None,
                        })
                        .collect();
                    if !text.is_empty() {
                        content.push(ContentBlock::Text { text });
                    }
                }
                OutputItem::FunctionCall {
                    call_id,
                    name,
                    arguments,
                } => {
                    let input =
                        http::tool_input(PROVIDER, &call_id, &name, &arguments, incomplete)?;
                    called = true;
                    content.push(ContentBlock::ToolUse {
                        id: call_id,
                        name,
                        input,
                    });
                }
                OutputItem::Reasoning {
                    id,
                    summary,
                    content: text,
                    encrypted_content,
                } => {
                    let parts = if summary.is_empty() {
                        text.unwrap_or_default()
                    } else {
                        summary
                    };
                    let thinking: Vec<String> = parts.into_iter().map(|p| p.text).collect();
                    let signature = encrypted_content.map(|encrypted_content| {
                        Reasoning {
                            id,
                            encrypted_content,
                        }
                        .signature()
                    });
                    content.push(ContentBlock::Thinking {
                        thinking: thinking.join("\n\n"),
                        signature,
                    });
                }
                OutputItem::Other => {}
            }
        }
        let stop_reason = if incomplete {
            match response
                .incomplete_details
                .and_then(|details| details.reason)
                .as_deref()
            {
                Some("max_output_tokens") | None => StopReason::MaxTokens,
                Some("content_filter") => StopReason::Refusal,
                Some(other) => StopReason::Other(other.to_owned()),
            }
        } else if called {
            StopReason::ToolUse
        } else {
            StopReason::EndTurn
        };
        let usage = response.usage.map_or_else(Usage::default, |usage| {
            let cached = usage
                .input_tokens_details
                .and_then(|details| details.cached_tokens)
                .unwrap_or(0);
            Usage {
                input_tokens: usage.input_tokens.saturating_sub(cached),
                output_tokens: usage.output_tokens,
                cache_read_input_tokens: cached,
                cache_creation_input_tokens: 0,
            }
        });
        Ok(ModelEvent::Completed(ModelResponse {
            content,
            stop_reason,
            usage,
        }))
    }
}

impl Decoder for EventDecoder {
    fn decode(&mut self, event: &SseEvent, out: &mut Vec<ModelEvent>) -> Result<(), Failure> {
        let parsed: Event = serde_json::from_str(&event.data).map_err(|error| {
            protocol(format!(
                "an event is not valid JSON ({error}): {}",
                truncate(&event.data, 200)
            ))
        })?;
        if let Some(response) = &parsed.response {
            self.tell_model(response, out);
        }
        match parsed.kind.as_str() {
            "response.output_text.delta"
            | "response.refusal.delta"
            | "response.reasoning_summary_text.delta"
            | "response.reasoning_text.delta" => {
                let text = parsed.delta.unwrap_or_default();
                if !text.is_empty() {
                    out.push(if parsed.kind.starts_with("response.reasoning") {
                        ModelEvent::ThinkingDelta { text }
                    } else {
                        ModelEvent::TextDelta { text }
                    });
                }
            }
            "response.output_item.added" => {
                if let Some(OutputItem::FunctionCall { call_id, name, .. }) = parsed.item {
                    out.push(ModelEvent::ToolUseStarted { id: call_id, name });
                }
            }
            "response.output_item.done" => {
                let (Some(index), Some(item)) = (parsed.output_index, parsed.item) else {
                    return Err(protocol(format!(
                        "response.output_item.done without output_index or item: {}",
                        truncate(&event.data, 200)
                    )));
                };
                self.done.insert(index, item);
            }
            "response.completed" | "response.incomplete" => {
                let incomplete = parsed.kind == "response.incomplete";
                out.push(self.finish(parsed.response.unwrap_or_default(), incomplete)?);
            }
            "response.failed" => {
                let error = parsed
                    .response
                    .and_then(|response| response.error)
                    .unwrap_or_default();
                return Err(error.into_failure(PROVIDER, &RETRYABLE));
            }
            "error" => {
                let error = parsed.error.unwrap_or(ApiError {
                    kind: None,
                    code: parsed.code,
                    message: parsed.message,
                });
                return Err(error.into_failure(PROVIDER, &RETRYABLE));
            }
            // `response.created`, `response.in_progress`, content parts,
            // `*.done` of deltas, argument deltas (the finished item has
            // the whole arguments), and events newer than this code.
            _ => {}
        }
        Ok(())
    }

    fn end(&mut self) -> Option<Result<ModelEvent, Failure>> {
        // Without `response.completed` the answer is not whole: a cut
        // connection, retried.
        None
    }

    /// A whole (non-streamed) response object, or an error object.
    fn whole(&mut self, body: &str, out: &mut Vec<ModelEvent>) -> Result<bool, Failure> {
        #[derive(Deserialize)]
        struct Whole {
            #[serde(default)]
            object: Option<String>,
            #[serde(default)]
            status: Option<String>,
            #[serde(default)]
            error: Option<ApiError>,
            #[serde(flatten)]
            response: Response,
        }
        let Ok(whole) = serde_json::from_str::<Whole>(body) else {
            return Ok(false);
        };
        match (
            whole.object.as_deref(),
            whole.status.as_deref(),
            whole.error,
        ) {
            (Some("response"), Some("failed"), error) | (None, _, error @ Some(_)) => {
                Err(error.unwrap_or_default().into_failure(PROVIDER, &RETRYABLE))
            }
            (Some("response"), status, _) => {
                let incomplete = status == Some("incomplete");
                self.tell_model(&whole.response, out);
                out.push(self.finish(whole.response, incomplete)?);
                Ok(true)
            }
            _ => Ok(false),
        }
    }
}
