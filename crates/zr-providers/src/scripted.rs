//! The scripted provider: deterministic replies from a script, for tests,
//! benchmarks and the offline demo.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_util::{StreamExt as _, stream};
use serde::Deserialize;
use serde_json::Value;
use zr_types::{AgentId, ContentBlock, MessageRole, StopReason, Usage, texts};

use crate::error::ProviderError;
use crate::provider::{
    ModelEvent, ModelProvider, ModelRequest, ModelResponse, ModelStream, ToolChoice,
};

/// A script: what each agent type answers, turn by turn.
///
/// Read from JSON (`zr run --provider scripted --script FILE`):
///
/// ```json
/// {
///   "agents": {
///     "root": [{ "turns": [
///       { "tool_calls": [{ "name": "MultiTask", "input": { "tasks": [] } }] },
///       { "text": "All done." }
///     ]}],
///     "explore": [
///       { "match": "slow", "turns": [{ "delay_ms": 60000, "text": "late" }] },
///       { "turns": [{ "text": "found it" }], "summary": "I looked around." }
///     ]
///   }
/// }
/// ```
///
/// An agent's script is chosen at its first request: the first entry of its
/// type (`root`, `fork` or the subagent type's name; else `*`) whose
/// `match` text occurs in the last user message, or the first entry
/// without `match`. The agent's Nth request gets the script's Nth turn,
/// counted across queries (a root's second query continues where the
/// first one stopped). A request
/// with tools disabled (the summary asked for at the turn limit) gets
/// `summary`; one that asks for the final answer in an output format
/// ([`ToolChoice::Answer`], a repair turn) gets the next turn, whose text
/// is the answer.
///
/// With `"turns_from": "history"`, an agent's first request in this
/// process starts at the number of its own answers in the conversation
/// (the assistant messages after a fork's shared `cache_prefix`), and
/// `match` is looked for in the agent's own first message (its task)
/// rather than the last, so that a session killed and resumed in a new
/// process continues each agent's script where it stopped; tool call ids
/// then name the agent too (`toolu_01_0_root_0001_fork`), unique in the
/// session.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// Scripts per agent type.
    #[serde(default)]
    pub agents: BTreeMap<String, Vec<AgentScript>>,
    /// Where an agent's turns start counting in this process.
    #[serde(default)]
    pub turns_from: TurnsFrom,
}

/// Where an agent's turn count starts (see [`Script`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnsFrom {
    /// At 0: every process plays an agent's script from its first turn.
    #[default]
    Requests,
    /// At the number of the agent's own answers in its first request.
    History,
}

/// The replies of one agent.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentScript {
    /// Chosen only when this text occurs in the agent's first prompt.
    #[serde(default, rename = "match")]
    pub matches: Option<String>,
    /// The reply to each request, in order.
    #[serde(default)]
    pub turns: Vec<ScriptTurn>,
    /// The reply when tools are disabled (the summary at the turn limit).
    #[serde(default)]
    pub summary: Option<String>,
}

/// One scripted reply.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptTurn {
    /// Text before any tool calls.
    #[serde(default)]
    pub text: Option<String>,
    /// Reasoning, sent before the text.
    #[serde(default)]
    pub thinking: Option<String>,
    /// Tool calls, in order.
    #[serde(default)]
    pub tool_calls: Vec<ScriptCall>,
    /// A wait before the reply (a slow or hanging model).
    #[serde(default)]
    pub delay_ms: Option<u64>,
    /// Usage to report instead of the estimate (a quarter of the characters
    /// of the request, and of the reply).
    #[serde(default)]
    pub usage: Option<Usage>,
    /// The stop reason to report instead of `tool_use` (with tool calls) or
    /// `end_turn`, e.g. `max_tokens`.
    #[serde(default)]
    pub stop_reason: Option<StopReason>,
}

/// A scripted tool call.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptCall {
    /// The tool's name (any text: a script may call a tool that does not
    /// exist).
    pub name: String,
    /// The input.
    #[serde(default = "empty_object")]
    pub input: Value,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

/// Replies from a [`Script`]; deterministic for a given script and
/// conversation.
#[derive(Debug)]
pub struct ScriptedProvider {
    script: Arc<Script>,
    /// Per agent: the chosen script, and how many turns it has served
    /// (only looked up, never walked: a hash map, as ordering ids segment
    /// by segment cost a tenth of a 1,000-subagent fan-out's instructions).
    chosen: Mutex<HashMap<AgentId, (Option<usize>, usize)>>,
}

impl ScriptedProvider {
    /// A provider playing `script`.
    #[must_use]
    pub fn new(script: Script) -> Self {
        Self {
            script: Arc::new(script),
            chosen: Mutex::new(HashMap::new()),
        }
    }

    /// Parses a script from JSON.
    ///
    /// # Errors
    ///
    /// [`ProviderError::Script`] naming the JSON path and what is wrong.
    pub fn from_json(text: &str) -> Result<Self, ProviderError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let script: Script =
            serde_path_to_error::deserialize(de).map_err(|e| ProviderError::Script {
                message: format!("invalid script at {}: {}", e.path(), e.inner()),
            })?;
        Ok(Self::new(script))
    }

    /// The agent's script, and the index of the turn to serve (counted per
    /// agent across queries; summary requests do not count).
    fn choose(&self, request: &ModelRequest) -> Option<(&AgentScript, usize)> {
        let ty: &str = &request.origin.agent_type;
        let entries = self
            .script
            .agents
            .get(ty)
            .or_else(|| self.script.agents.get("*"))?;
        // A panic elsewhere cannot leave the map half-written (every
        // update is one statement), so a poisoned lock is taken as it is.
        let mut chosen = self.chosen.lock().unwrap_or_else(PoisonError::into_inner);
        let (index, served) = chosen
            .entry(request.origin.agent.clone())
            .or_insert_with(|| {
                let prompt = match self.script.turns_from {
                    TurnsFrom::Requests => last_user_text(request),
                    TurnsFrom::History => first_own_text(request),
                };
                let index = entries
                    .iter()
                    .position(|e| {
                        e.matches
                            .as_ref()
                            .is_some_and(|m| prompt.contains(m.as_str()))
                    })
                    .or_else(|| entries.iter().position(|e| e.matches.is_none()));
                let served = match self.script.turns_from {
                    TurnsFrom::Requests => 0,
                    TurnsFrom::History => own_answers(request),
                };
                (index, served)
            });
        let turn = *served;
        if request.tool_choice != ToolChoice::None {
            *served += 1;
        }
        index
            .and_then(|i| entries.get(i))
            .map(|script| (script, turn))
    }

    fn reply(&self, request: &ModelRequest) -> Result<(ModelResponse, Duration), ProviderError> {
        let origin = &request.origin;
        let missing = |what: String| ProviderError::Script {
            message: format!(
                "no reply for agent {} (type '{}') at turn {}: {what}",
                origin.agent, origin.agent_type, origin.turn
            ),
        };
        let (script, index) = self.choose(request).ok_or_else(|| {
            missing(format!(
                "the script has no entry for '{}' or '*'",
                origin.agent_type
            ))
        })?;
        if request.tool_choice == ToolChoice::None {
            let text = script.summary.clone().ok_or_else(|| {
                missing("tools are disabled and the script has no 'summary'".to_owned())
            })?;
            let usage = estimate(request_chars(request), text.len());
            let content = vec![ContentBlock::Text { text }];
            return Ok((
                response(content, StopReason::EndTurn, usage),
                Duration::ZERO,
            ));
        }
        let turn = script
            .turns
            .get(index)
            .ok_or_else(|| missing(format!("the script has {} turns", script.turns.len())))?;
        let mut content = Vec::new();
        if let Some(thinking) = &turn.thinking {
            content.push(ContentBlock::Thinking {
                thinking: thinking.clone(),
                signature: None,
            });
        }
        if let Some(text) = &turn.text {
            content.push(ContentBlock::Text { text: text.clone() });
        }
        for (i, call) in turn.tool_calls.iter().enumerate() {
            let id = match self.script.turns_from {
                TurnsFrom::Requests => format!("toolu_{:02}_{i}", index + 1),
                // Unique in the session: a fork's history holds its
                // parent's calls beside its own.
                TurnsFrom::History => format!(
                    "toolu_{:02}_{i}_{}",
                    index + 1,
                    origin.agent.as_str().replace(['.', '-'], "_")
                ),
            };
            content.push(ContentBlock::ToolUse {
                id,
                name: call.name.clone(),
                input: call.input.clone(),
            });
        }
        let stop = match &turn.stop_reason {
            Some(reason) => reason.clone(),
            None if turn.tool_calls.is_empty() => StopReason::EndTurn,
            None => StopReason::ToolUse,
        };
        let usage = turn.usage.unwrap_or_else(|| {
            let reply_chars = serde_json::to_string(&content).map_or(0, |s| s.len());
            estimate(request_chars(request), reply_chars)
        });
        let delay = Duration::from_millis(turn.delay_ms.unwrap_or(0));
        Ok((response(content, stop, usage), delay))
    }
}

fn response(content: Vec<ContentBlock>, stop_reason: StopReason, usage: Usage) -> ModelResponse {
    ModelResponse {
        content,
        stop_reason,
        usage,
    }
}

fn estimate(request_chars: usize, reply_chars: usize) -> Usage {
    let tokens = |chars: usize| u64::try_from(chars.div_ceil(4)).unwrap_or(u64::MAX);
    Usage {
        input_tokens: tokens(request_chars),
        output_tokens: tokens(reply_chars),
        ..Usage::default()
    }
}

fn request_chars(request: &ModelRequest) -> usize {
    let messages = serde_json::to_string(request.messages.as_slice()).map_or(0, |s| s.len());
    request.system.len() + messages
}

/// The assistant messages of `request` that are its agent's own: those
/// after a fork's prefix shared with its parent (the parent's history up
/// to and including the answer that forked it).
fn own_answers(request: &ModelRequest) -> usize {
    let start = request.cache_prefix.map_or(0, |shared| shared + 1);
    request
        .messages
        .iter()
        .skip(start)
        .filter(|m| m.role == MessageRole::Assistant)
        .count()
}

/// The text of the first message of `request` that is its agent's own
/// (after a fork's shared prefix): its task.
fn first_own_text(request: &ModelRequest) -> String {
    let start = request.cache_prefix.map_or(0, |shared| shared + 1);
    request
        .messages
        .get(start)
        .map(|m| texts(&m.content).collect::<Vec<_>>().join("\n"))
        .unwrap_or_default()
}

fn last_user_text(request: &ModelRequest) -> String {
    request
        .messages
        .iter()
        .rev()
        .find(|m| m.role == MessageRole::User)
        .map(|m| texts(&m.content).collect::<Vec<_>>().join("\n"))
        .unwrap_or_default()
}

/// The events of a reply: its text in pieces of a few words, then the
/// whole response.
fn events(response: ModelResponse) -> Vec<Result<ModelEvent, ProviderError>> {
    let mut out = Vec::new();
    for block in &response.content {
        match block {
            ContentBlock::Thinking { thinking, .. } => out.push(Ok(ModelEvent::ThinkingDelta {
                text: thinking.clone(),
            })),
            ContentBlock::Text { text } => {
                for piece in text.split_inclusive(' ').collect::<Vec<_>>().chunks(4) {
                    out.push(Ok(ModelEvent::TextDelta {
                        text: piece.concat(),
                    }));
                }
            }
            ContentBlock::ToolUse { id, name, .. } => out.push(Ok(ModelEvent::ToolUseStarted {
                id: id.clone(),
                name: name.clone(),
            })),
            ContentBlock::ToolResult { .. } => {}
        }
    }
    out.push(Ok(ModelEvent::Completed(response)));
    out
}

impl ModelProvider for ScriptedProvider {
    fn name(&self) -> &'static str {
        "zr.scripted"
    }

    fn stream(&self, request: ModelRequest) -> ModelStream {
        match self.reply(&request) {
            Err(e) => Box::pin(stream::iter([Err(e)])),
            Ok((response, delay)) if delay.is_zero() => Box::pin(stream::iter(events(response))),
            Ok((response, delay)) => Box::pin(
                stream::once(async move {
                    tokio::time::sleep(delay).await;
                    stream::iter(events(response))
                })
                .flatten(),
            ),
        }
    }
}

#[cfg(test)]
mod tests;
