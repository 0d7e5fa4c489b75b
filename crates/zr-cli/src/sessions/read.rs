//! Reading one agent's transcript tolerantly, for `zr sessions` and
//! `zr sessions show`: each line is read as the engine wrote it (the
//! records of [`zr_protocol::transcript`]), a torn last line is ignored,
//! and a line that is not a record stops the reading of that file with a
//! warning naming the file and line. The engine's own reader repairs a
//! history for resuming; this one reports what the file says.

use std::path::Path;

use zr_protocol::transcript::{Header, Record};
use zr_types::{ContentBlock, Message, MessageRole, Usage};

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
    /// A message, when it was written if the transcript says.
    Message {
        message: Message,
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
                message,
                at_ms: Some(at),
            } if message.role == MessageRole::Assistant
                && message.content.iter().any(is_delegation) =>
            {
                Some(*at)
            }
            _ => None,
        })
    }

    /// Its tool calls in order: name and whether the result was an error
    /// (`None`: no result recorded).
    pub(crate) fn tool_calls(&self) -> Vec<(String, Option<bool>)> {
        let mut calls: Vec<(&str, &str, Option<bool>)> = Vec::new();
        for entry in &self.entries {
            let Entry::Message { message, .. } = entry else {
                continue;
            };
            for block in &message.content {
                match block {
                    ContentBlock::ToolUse { id, name, .. } => calls.push((id, name, None)),
                    ContentBlock::ToolResult {
                        tool_use_id,
                        is_error,
                        ..
                    } => {
                        if let Some(call) = calls.iter_mut().rev().find(|c| c.0 == tool_use_id) {
                            call.2 = Some(*is_error);
                        }
                    }
                    ContentBlock::Text { .. } | ContentBlock::Thinking { .. } => {}
                }
            }
        }
        calls
            .into_iter()
            .map(|(_, name, error)| (name.to_owned(), error))
            .collect()
    }
}

fn is_delegation(block: &ContentBlock) -> bool {
    matches!(block, ContentBlock::ToolUse { name, .. } if name == "Task" || name == "MultiTask")
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
        let record: Record = match serde_json::from_str(line) {
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
        apply(&mut file, record);
    }
    file
}

fn apply(file: &mut AgentFile, record: Record) {
    match record {
        Record::Header(header) => read_header(file, &header),
        Record::Message { message, at_ms } => {
            file.last_ms = at_ms.or(file.last_ms);
            file.messages += 1;
            file.ended = None;
            let own = file.messages > file.inherited;
            match message.role {
                MessageRole::Assistant if own => file.turns += 1,
                MessageRole::User if file.first_prompt.is_none() => {
                    file.first_prompt = zr_types::texts(&message.content).next().map(str::to_owned);
                }
                _ => {}
            }
            if own {
                file.entries.push(Entry::Message { message, at_ms });
            }
        }
        Record::HistoryReplaced { history } => file.entries.push(Entry::Replaced {
            messages: history.len(),
        }),
        Record::Finished(finished) => {
            file.last_ms = finished.at_ms.or(file.last_ms);
            file.usage = file.usage.plus(finished.usage);
            file.output = Some(finished.output);
            file.entries.push(Entry::Finished {
                status: finished.status.clone(),
                at_ms: finished.at_ms,
            });
            file.ended = Some(finished.status);
        }
        Record::QueryFailed { history } => {
            file.entries.push(Entry::Replaced {
                messages: history.len(),
            });
            file.ended = Some("failed".to_owned());
        }
        // A call about to run: nothing `zr sessions` shows.
        Record::CallStarted { .. } => {}
    }
}

fn read_header(file: &mut AgentFile, header: &Header) {
    file.model = Some(header.model.clone());
    file.agent_type = Some(header.agent_type.clone());
    file.colour = header
        .definition
        .as_ref()
        .and_then(|definition| definition.color.clone());
    file.parent = header.parent.as_ref().map(ToString::to_string);
    file.created_ms = Some(header.created_ms);
    file.last_ms = file.last_ms.or(file.created_ms);
    file.inherited = u64::try_from(header.inherited_messages).unwrap_or(u64::MAX);
    file.background = header.background;
}
