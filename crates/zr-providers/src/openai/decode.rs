//! Decodes Chat Completions chunks into model events and the final
//! response.

use std::collections::BTreeMap;

use serde::Deserialize;
use zr_types::{ContentBlock, StopReason, Usage};

use super::PROVIDER;
use crate::error::ProviderError;
use crate::http::{self, ApiError, Decoder, Failure, SseEvent, truncate};
use crate::provider::{ModelEvent, ModelResponse};

/// Error types (or codes) in the stream that another attempt may cure.
pub(super) const RETRYABLE: [&str; 7] = [
    "server_error",
    "api_error",
    "overloaded_error",
    "rate_limit_error",
    "rate_limit_exceeded",
    "service_unavailable",
    "timeout",
];

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Chunk {
    model: Option<String>,
    id: Option<String>,
    choices: Vec<Choice>,
    usage: Option<WireUsage>,
    error: Option<ApiError>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Choice {
    /// `message` in a whole (non-streamed) completion, which has the same
    /// fields.
    #[serde(alias = "message")]
    delta: Option<Delta>,
    finish_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Delta {
    content: Option<String>,
    /// Reasoning text, as local servers (llama.cpp, vLLM) and some hosted
    /// models stream it.
    reasoning_content: Option<String>,
    refusal: Option<String>,
    tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ToolCallDelta {
    /// Which call this piece belongs to. Servers that imitate the API may
    /// leave it out (Gemini) or give every call 0 (Ollama); see
    /// [`ChunkDecoder::call_for`].
    index: Option<u32>,
    id: Option<String>,
    function: Option<FunctionDelta>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct FunctionDelta {
    name: Option<String>,
    arguments: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct WireUsage {
    prompt_tokens: u64,
    completion_tokens: u64,
    prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PromptDetails {
    cached_tokens: Option<u64>,
}

/// A tool call being assembled.
#[derive(Debug, Default)]
struct Call {
    id: Option<String>,
    name: String,
    arguments: String,
    announced: bool,
}

/// The state of one attempt's stream.
#[derive(Debug, Default)]
pub(super) struct ChunkDecoder {
    thinking: String,
    text: String,
    /// The tool calls in the order they started.
    calls: Vec<Call>,
    /// A wire index -> the position in `calls` of the latest call with it.
    by_index: BTreeMap<u32, usize>,
    finish_reason: Option<String>,
    usage: Usage,
    /// Whether `ModelEvent::Metadata` was sent (every chunk repeats it).
    told_model: bool,
}

fn protocol(message: String) -> Failure {
    Failure::fatal(ProviderError::Protocol {
        provider: PROVIDER,
        message,
    })
}

impl ChunkDecoder {
    fn choice(&mut self, choice: Choice, out: &mut Vec<ModelEvent>) {
        if let Some(reason) = choice.finish_reason {
            self.finish_reason = Some(reason);
        }
        let Some(delta) = choice.delta else { return };
        if let Some(text) = delta.reasoning_content.filter(|text| !text.is_empty()) {
            self.thinking.push_str(&text);
            out.push(ModelEvent::ThinkingDelta { text });
        }
        for text in [delta.content, delta.refusal].into_iter().flatten() {
            if !text.is_empty() {
                self.text.push_str(&text);
                out.push(ModelEvent::TextDelta { text });
            }
        }
        for piece in delta.tool_calls.into_iter().flatten() {
            let id = piece.id.filter(|id| !id.is_empty());
            let position = self.call_for(piece.index, id.as_deref());
            let call = &mut self.calls[position];
            if id.is_some() {
                call.id = id;
            }
            if let Some(function) = piece.function {
                if let Some(name) = function.name {
                    call.name.push_str(&name);
                }
                if let Some(arguments) = function.arguments {
                    call.arguments.push_str(&arguments);
                }
            }
            if !call.announced && !call.name.is_empty() {
                call.announced = true;
                out.push(ModelEvent::ToolUseStarted {
                    id: call_id(position, call),
                    name: call.name.clone(),
                });
            }
        }
    }

    /// The position in `calls` of the call a piece with `index` and `id`
    /// belongs to, starting a new call when needed. A piece continues the
    /// latest call with its index (without an index: the latest call)
    /// unless it carries an id other than that call's: OpenAI sends the id
    /// only with a call's first piece, while servers that reuse or leave
    /// out the index send a new id with each new call.
    fn call_for(&mut self, index: Option<u32>, id: Option<&str>) -> usize {
        let latest = match index {
            Some(index) => self.by_index.get(&index).copied(),
            None => self.calls.len().checked_sub(1),
        }
        // `finish` empties `calls`; a piece after it starts afresh.
        .filter(|&position| position < self.calls.len());
        let position = match latest {
            Some(position)
                if id.is_none_or(|id| {
                    self.calls[position]
                        .id
                        .as_deref()
                        .is_none_or(|known| known == id)
                }) =>
            {
                position
            }
            _ => {
                self.calls.push(Call::default());
                self.calls.len() - 1
            }
        };
        if let Some(index) = index {
            self.by_index.insert(index, position);
        }
        position
    }

    fn finish(&mut self) -> Result<ModelEvent, Failure> {
        let Some(reason) = self.finish_reason.take() else {
            return Err(protocol("the stream ended without a finish_reason".into()));
        };
        let stop_reason = match reason.as_str() {
            "stop" => StopReason::EndTurn,
            "tool_calls" | "function_call" => StopReason::ToolUse,
            "length" => StopReason::MaxTokens,
            "content_filter" => StopReason::Refusal,
            _ => StopReason::Other(reason),
        };
        let mut content = Vec::new();
        if !self.thinking.is_empty() {
            content.push(ContentBlock::Thinking {
                thinking: std::mem::take(&mut self.thinking),
                signature: None,
            });
        }
        if !self.text.is_empty() {
            content.push(ContentBlock::Text {
                text: std::mem::take(&mut self.text),
            });
        }
        self.by_index.clear();
        for (position, call) in std::mem::take(&mut self.calls).into_iter().enumerate() {
            let id = call_id(position, &call);
            if call.name.is_empty() {
                return Err(protocol(format!(
                    "tool call {position} ({id}) has no function name"
                )));
            }
            let cut_off = stop_reason == StopReason::MaxTokens;
            let input = http::tool_input(PROVIDER, &id, &call.name, &call.arguments, cut_off)?;
            content.push(ContentBlock::ToolUse {
                id,
                name: call.name,
                input,
            });
        }
        Ok(ModelEvent::Completed(ModelResponse {
            content,
            stop_reason,
            usage: self.usage,
        }))
    }
}

/// The call's id, or a stable stand-in (its position) for servers that
/// send none.
fn call_id(position: usize, call: &Call) -> String {
    call.id
        .clone()
        .unwrap_or_else(|| format!("call_{position}"))
}

impl Decoder for ChunkDecoder {
    fn decode(&mut self, event: &SseEvent, out: &mut Vec<ModelEvent>) -> Result<(), Failure> {
        if event.data.trim() == "[DONE]" {
            out.push(self.finish()?);
            return Ok(());
        }
        let chunk: Chunk = serde_json::from_str(&event.data).map_err(|error| {
            protocol(format!(
                "a chunk is not valid JSON ({error}): {}",
                truncate(&event.data, 200)
            ))
        })?;
        self.chunk(chunk, out)
    }

    fn end(&mut self) -> Option<Result<ModelEvent, Failure>> {
        // Some servers close the stream without `[DONE]`: the message is
        // complete once it has a finish reason.
        self.finish_reason.is_some().then(|| self.finish())
    }

    /// A whole completion is decoded as one chunk whose `message` is the
    /// delta, and then the stream's end.
    fn whole(&mut self, body: &str, out: &mut Vec<ModelEvent>) -> Result<bool, Failure> {
        let Ok(chunk) = serde_json::from_str::<Chunk>(body) else {
            return Ok(false);
        };
        if chunk.error.is_none() && chunk.choices.is_empty() {
            return Ok(false);
        }
        self.chunk(chunk, out)?;
        match self.end() {
            Some(done) => {
                out.push(done?);
                Ok(true)
            }
            None => Ok(false),
        }
    }
}

impl ChunkDecoder {
    fn chunk(&mut self, chunk: Chunk, out: &mut Vec<ModelEvent>) -> Result<(), Failure> {
        if let Some(error) = chunk.error {
            // OpenAI names the error in `code` (`rate_limit_exceeded`), where
            // the type may only name the limit (`tokens`); servers that
            // imitate the API put a status there, as a number or a string.
            return Err(error.into_failure(PROVIDER, &RETRYABLE));
        }
        if let Some(usage) = chunk.usage {
            let cached = usage
                .prompt_tokens_details
                .and_then(|details| details.cached_tokens)
                .unwrap_or(0);
            self.usage = Usage {
                input_tokens: usage.prompt_tokens.saturating_sub(cached),
                output_tokens: usage.completion_tokens,
                cache_read_input_tokens: cached,
                cache_creation_input_tokens: 0,
            };
        }
        if !self.told_model
            && let Some(model) = chunk.model.filter(|m| !m.is_empty())
        {
            self.told_model = true;
            out.push(ModelEvent::Metadata {
                model,
                id: chunk.id,
            });
        }
        // zr never asks for more than one choice.
        if let Some(choice) = chunk.choices.into_iter().next() {
            self.choice(choice, out);
        }
        Ok(())
    }
}
