//! Reading one agent's transcript tolerantly, for `zr sessions` and
//! `zr sessions show`: a torn last line is ignored, and a line that is not
//! a record stops the reading of that file with a warning naming the file
//! and line. Independent of the engine's reader (which repairs a history
//! for resuming; this one reports what the file says).

use std::path::Path;

use serde_json::Value;
use zr_types::Usage;

/// What one transcript file says.
#[derive(Debug, Default)]
pub(crate) struct AgentFile {
    /// `root`, `fork` or the subagent type's name (the header's).
    pub(crate) agent_type: Option<String>,
    /// Its type's `color` (the definition the header recorded).
    pub(crate) colour: Option<String>,
    /// The delegating agent's id (the header's).
    pub(crate) parent: Option<String>,
    pub(crate) model: Option<String>,
    /// When its first run began (the header's `created_ms`).
    pub(crate) created_ms: Option<u64>,
    pub(crate) first_prompt: Option<String>,
    /// Model replies of its own (a fork's inherited ones not counted).
    pub(crate) turns: u64,
    /// Tokens of the runs that wrote a `finished` record.
    pub(crate) usage: Usage,
    /// The last run's end: `Some(status)` after a `finished` or
    /// `query_failed` record, `None` when a message followed it.
    pub(crate) ended: Option<String>,
    /// The last `finished` record's answer.
    pub(crate) output: Option<String>,
    /// The time of the last record that has one.
    pub(crate) last_ms: Option<u64>,
    pub(crate) messages: u64,
    /// How many first message records the agent inherited (a fork's
    /// parent's conversation): not its turns.
    pub(crate) inherited: u64,
    /// Whether the header says it runs in the background.
    pub(crate) background: bool,
    /// Its own records in order: messages, history replacements, ends.
    pub(crate) entries: Vec<Entry>,
}

/// One record of an agent's own work, as `zr sessions show --agent`
/// prints it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Entry {
    /// A message (`role`, its content blocks as JSON), when it was written
    /// if the transcript says.
    Message {
        role: String,
        content: Vec<Value>,
        at_ms: Option<u64>,
    },
    /// The history was rewritten (compaction, or a failed root query),
    /// leaving `messages` messages.
    Replaced { messages: usize },
    /// A run ended with `status`.
    Finished { status: String, at_ms: Option<u64> },
}

impl AgentFile {
    /// The times of its own replies that delegate (call `Task` or
    /// `MultiTask`): where its subagents' queueing starts.
    pub(crate) fn delegations(&self) -> impl Iterator<Item = u64> + '_ {
        self.entries.iter().filter_map(|entry| match entry {
            Entry::Message {
                role,
                content,
                at_ms: Some(at),
            } if role == "assistant" && content.iter().any(is_delegation) => Some(*at),
            _ => None,
        })
    }

    /// Its tool calls in order: name and whether the result was an error
    /// (`None`: no result recorded).
    pub(crate) fn tool_calls(&self) -> Vec<(String, Option<bool>)> {
        let mut calls: Vec<(String, String, Option<bool>)> = Vec::new();
        for entry in &self.entries {
            let Entry::Message { content, .. } = entry else {
                continue;
            };
            for block in content {
                match block.get("type").and_then(Value::as_str) {
                    Some("tool_use") => {
                        calls.push((text_of(block, "id"), text_of(block, "name"), None))
                    }
                    Some("tool_result") => {
                        let id = text_of(block, "tool_use_id");
                        let error = block
                            .get("is_error")
                            .and_then(Value::as_bool)
                            .unwrap_or(false);
                        if let Some(call) = calls.iter_mut().rev().find(|c| c.0 == id) {
                            call.2 = Some(error);
                        }
                    }
                    _ => {}
                }
            }
        }
        calls
            .into_iter()
            .map(|(_, name, error)| (name, error))
            .collect()
    }
}

fn is_delegation(block: &Value) -> bool {
    block.get("type").and_then(Value::as_str) == Some("tool_use")
        && matches!(
            block.get("name").and_then(Value::as_str),
            Some("Task" | "MultiTask")
        )
}

fn text_of(block: &Value, key: &str) -> String {
    block
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// The largest transcript read, as the engine's.
const TRANSCRIPT_LIMIT: u64 = 1024 * 1024 * 1024;

/// Reads one transcript; `shown` is the path warnings name.
pub(crate) fn read_agent(path: &Path, shown: &str, warnings: &mut Vec<String>) -> AgentFile {
    let mut file = AgentFile::default();
    let bytes = match zr_tools::read_regular(path, TRANSCRIPT_LIMIT) {
        Ok(bytes) => bytes,
        Err(e) => {
            warnings.push(format!("cannot read {shown}: {e}"));
            return file;
        }
    };
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.split('\n').collect();
    let last_nonblank = lines.iter().rposition(|l| !l.trim().is_empty());
    for (index, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let record: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            // A torn last line: the process was killed while writing it.
            Err(_) if Some(index) == last_nonblank => break,
            Err(e) => {
                warnings.push(format!(
                    "{}:{}: not a transcript record ({e}); the rest of this file is ignored",
                    shown,
                    index + 1
                ));
                break;
            }
        };
        apply(&mut file, &record);
    }
    file
}

fn apply(file: &mut AgentFile, record: &Value) {
    let at_ms = record.get("at_ms").and_then(Value::as_u64);
    if at_ms.is_some() {
        file.last_ms = at_ms;
    }
    match record.get("kind").and_then(Value::as_str) {
        Some("header") => {
            let text = |key: &str| record.get(key).and_then(Value::as_str).map(str::to_owned);
            file.model = text("model");
            file.agent_type = text("agent_type");
            file.colour = record
                .pointer("/definition/color")
                .and_then(Value::as_str)
                .map(str::to_owned);
            file.parent = text("parent");
            file.created_ms = record.get("created_ms").and_then(Value::as_u64);
            file.last_ms = file.last_ms.or(file.created_ms);
            file.inherited = record
                .get("inherited_messages")
                .and_then(Value::as_u64)
                .unwrap_or(0);
            file.background = record
                .get("background")
                .and_then(Value::as_bool)
                .unwrap_or(false);
        }
        Some("message") => {
            let message = record.get("message").unwrap_or(&Value::Null);
            file.messages += 1;
            file.ended = None;
            let own = file.messages > file.inherited;
            let role = message
                .get("role")
                .and_then(Value::as_str)
                .unwrap_or_default();
            match role {
                "assistant" if own => file.turns += 1,
                "user" if file.first_prompt.is_none() => file.first_prompt = first_text(message),
                _ => {}
            }
            if own {
                file.entries.push(Entry::Message {
                    role: role.to_owned(),
                    content: message
                        .get("content")
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default(),
                    at_ms,
                });
            }
        }
        Some("history_replaced") => file.entries.push(Entry::Replaced {
            messages: history_len(record),
        }),
        Some("finished") => {
            let usage: Usage = record
                .get("usage")
                .and_then(|u| serde_json::from_value(u.clone()).ok())
                .unwrap_or_default();
            file.usage = file.usage.plus(usage);
            let status = record
                .get("status")
                .and_then(Value::as_str)
                .unwrap_or("finished")
                .to_owned();
            file.output = record
                .get("output")
                .and_then(Value::as_str)
                .map(str::to_owned);
            file.entries.push(Entry::Finished {
                status: status.clone(),
                at_ms,
            });
            file.ended = Some(status);
        }
        Some("query_failed") => {
            file.entries.push(Entry::Replaced {
                messages: history_len(record),
            });
            file.ended = Some("failed".to_owned());
        }
        _ => {}
    }
}

fn history_len(record: &Value) -> usize {
    record
        .get("history")
        .and_then(Value::as_array)
        .map_or(0, Vec::len)
}

/// The first text block of a message, if any.
fn first_text(message: &Value) -> Option<String> {
    message
        .get("content")?
        .as_array()?
        .iter()
        .find_map(|b| b.get("text").and_then(Value::as_str))
        .map(str::to_owned)
}
