//! Model answers as the three wires stream them, as SSE text a loopback
//! server ([`crate::replay`], [`crate::loopback`]) sends byte for byte:
//!
//! - the Anthropic Messages API: [`anthropic`] (text, then tool calls),
//!   [`anthropic_events`] (any events, framed);
//! - OpenAI Chat Completions: [`chat`] (text or one tool call),
//!   [`chat_chunks`] (any chunks, framed, `[DONE]` last);
//! - the OpenAI Responses API: [`responses`] (a [`ResponsesAnswer`]:
//!   reasoning, text, a function call), [`responses_events`].
//!
//! The recorded answers of each API are in [`crate::fixture`]; these
//! builders make the answers a scripted session needs, in the same shape.

use serde_json::{Value, json};

/// Anthropic `events` framed as SSE: `event: TYPE` and `data: JSON` each.
///
/// # Panics
///
/// When an event has no string `type`.
pub fn anthropic_events(events: impl IntoIterator<Item = Value>) -> String {
    let mut body = String::new();
    for event in events {
        body.push_str(&format!(
            "event: {}\ndata: {event}\n\n",
            event["type"].as_str().expect("every event has a type")
        ));
    }
    body
}

/// One Anthropic answer: `text` (if any), then `tools` calls (id, name,
/// input); 10 input tokens, 5 output tokens, `end_turn` without calls and
/// `tool_use` with them.
pub fn anthropic(text: Option<&str>, tools: &[(&str, &str, Value)]) -> String {
    let mut events = vec![
        json!({"type": "message_start", "message": {"id": "msg", "type": "message", "role": "assistant", "content": [], "model": "claude-test", "stop_reason": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
    ];
    let mut index = 0;
    if let Some(text) = text {
        events.extend([
            json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}}),
            json!({"type": "content_block_stop", "index": index}),
        ]);
        index += 1;
    }
    for (id, name, input) in tools {
        events.extend([
            json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
            json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}),
            json!({"type": "content_block_stop", "index": index}),
        ]);
        index += 1;
    }
    let stop = if tools.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    events.extend([
        json!({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 5}}),
        json!({"type": "message_stop"}),
    ]);
    anthropic_events(events)
}

/// Chat Completions `chunks` framed as SSE (`data: JSON` each, with the
/// id, object and model every chunk carries), then `data: [DONE]`.
pub fn chat_chunks(chunks: impl IntoIterator<Item = Value>) -> String {
    let mut body = String::new();
    for mut chunk in chunks {
        chunk["id"] = json!("chatcmpl-1");
        chunk["object"] = json!("chat.completion.chunk");
        chunk["model"] = json!("gpt-test");
        body.push_str(&format!("data: {chunk}\n\n"));
    }
    body.push_str("data: [DONE]\n\n");
    body
}

/// One Chat Completions answer: text, or one tool call (id, name,
/// arguments); 20 prompt tokens, 5 completion tokens.
pub fn chat(text: Option<&str>, call: Option<(&str, &str, &str)>) -> String {
    let mut chunks = vec![
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}]}),
    ];
    if let Some(text) = text {
        chunks.push(
            json!({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]}),
        );
    }
    if let Some((id, name, arguments)) = call {
        chunks.push(json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": id, "type": "function", "function": {"name": name, "arguments": arguments}}]}, "finish_reason": null}]}));
    }
    let finish = if call.is_some() { "tool_calls" } else { "stop" };
    chunks.push(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}));
    chunks.push(json!({"choices": [], "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}}));
    chat_chunks(chunks)
}

/// One Responses API answer, in output order: a reasoning item (id,
/// summary, encrypted content), a message, a function call (call id,
/// name, arguments); `cached` of its 20 input tokens were read from the
/// cache.
#[derive(Debug, Default, Clone, Copy)]
pub struct ResponsesAnswer<'a> {
    pub reasoning: Option<(&'a str, &'a str, &'a str)>,
    pub text: Option<&'a str>,
    pub call: Option<(&'a str, &'a str, &'a str)>,
    pub cached: u64,
}

impl<'a> ResponsesAnswer<'a> {
    /// An answer of `text`, or of one function `call` (call id, name,
    /// arguments), nothing cached.
    pub fn of(text: Option<&'a str>, call: Option<(&'a str, &'a str, &'a str)>) -> Self {
        Self {
            text,
            call,
            ..Self::default()
        }
    }
}

/// Responses API `events` framed as SSE, each given its
/// `sequence_number`.
///
/// # Panics
///
/// When an event has no string `type`.
pub fn responses_events(events: impl IntoIterator<Item = Value>) -> String {
    let mut body = String::new();
    for (n, mut event) in events.into_iter().enumerate() {
        event["sequence_number"] = json!(n);
        body.push_str(&format!(
            "event: {}\ndata: {event}\n\n",
            event["type"].as_str().expect("every event has a type")
        ));
    }
    body
}

/// `answer` as the Responses API streams it: `response.created`, each
/// output item added, its deltas and done, then `response.completed` with
/// the usage.
pub fn responses(answer: ResponsesAnswer<'_>) -> String {
    let mut events = vec![
        json!({"type": "response.created", "response": {"id": "resp_1", "object": "response", "status": "in_progress", "output": []}}),
    ];
    let mut output: Vec<Value> = Vec::new();
    if let Some((id, summary, encrypted)) = answer.reasoning {
        let item = json!({"id": id, "type": "reasoning", "encrypted_content": encrypted,
                          "summary": [{"type": "summary_text", "text": summary}]});
        events.push(json!({"type": "response.output_item.added", "output_index": 0, "item": {"id": id, "type": "reasoning", "summary": []}}));
        events.push(json!({"type": "response.reasoning_summary_text.delta", "item_id": id, "output_index": 0, "summary_index": 0, "delta": summary}));
        events.push(json!({"type": "response.output_item.done", "output_index": 0, "item": item}));
        output.push(item);
    }
    if let Some(text) = answer.text {
        let at = output.len();
        let item = json!({"id": "msg_1", "type": "message", "status": "completed", "role": "assistant",
                          "content": [{"type": "output_text", "annotations": [], "text": text}]});
        events.push(json!({"type": "response.output_item.added", "output_index": at, "item": {"id": "msg_1", "type": "message", "status": "in_progress", "role": "assistant", "content": []}}));
        events.push(json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": at, "content_index": 0, "delta": text}));
        events.push(json!({"type": "response.output_item.done", "output_index": at, "item": item}));
        output.push(item);
    }
    if let Some((id, name, arguments)) = answer.call {
        let at = output.len();
        let item = json!({"id": "fc_1", "type": "function_call", "status": "completed", "call_id": id, "name": name, "arguments": arguments});
        events.push(json!({"type": "response.output_item.added", "output_index": at, "item": {"id": "fc_1", "type": "function_call", "status": "in_progress", "call_id": id, "name": name, "arguments": ""}}));
        events.push(json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": at, "delta": arguments}));
        events.push(json!({"type": "response.output_item.done", "output_index": at, "item": item}));
        output.push(item);
    }
    events.push(json!({"type": "response.completed", "response": {"id": "resp_1", "object": "response", "status": "completed", "output": output,
        "usage": {"input_tokens": 20, "input_tokens_details": {"cached_tokens": answer.cached}, "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 3}, "total_tokens": 25}}}));
    responses_events(events)
}
