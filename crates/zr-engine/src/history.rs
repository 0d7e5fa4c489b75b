//! History helpers every floor shares: adding the user's text so that
//! roles alternate, reading the text of content blocks, readying a
//! history to continue without a prompt, the tools a history called, the
//! turn a kill left open at its end.

pub(crate) mod compact;

use std::collections::BTreeMap;

use zr_types::{ContentBlock, Message, MessageRole, ToolCall, ToolName, texts};

/// Adds `text` for the model as the user: into the last message when that
/// is the user's already (tool results, say), so that roles alternate as
/// strict APIs require; else as a new message.
pub(crate) fn push_user_text(history: &mut Vec<Message>, text: &str) {
    let block = ContentBlock::Text {
        text: text.to_owned(),
    };
    match history.last_mut() {
        Some(last) if last.role == MessageRole::User => last.content.push(block),
        _ => history.push(Message {
            role: MessageRole::User,
            content: vec![block],
        }),
    }
}

/// The text blocks of `content`, joined.
pub(crate) fn text_of(content: &[ContentBlock]) -> String {
    texts(content).collect()
}

/// What an agent continuing without a new prompt is told when its history
/// ends with its own message: a turn whose tool calls never ran (they were
/// dropped when the transcript was read) or a finished one.
pub(crate) const CONTINUE_NOTE: &str = "Your previous run was interrupted. Tool calls that had not returned were not run. Continue the task from where it stopped.";

/// Readies `history` to continue without a new prompt: a history that ends
/// with the user's message (a turn cut short before the model answered)
/// or with a turn whose calls still need results ([`open_turn`]) stays as
/// it is; else [`CONTINUE_NOTE`] is added.
pub(crate) fn continue_history(history: &mut Vec<Message>) {
    if open_turn(history).is_none()
        && history
            .last()
            .is_none_or(|m| m.role == MessageRole::Assistant)
    {
        push_user_text(history, CONTINUE_NOTE);
    }
}

/// The user message a query opens with: its prompt, with what hooks add
/// before it (SessionStart) and after it (UserPromptSubmit).
#[derive(Debug, Clone, Default)]
pub(crate) struct Opening {
    /// Added before the prompt.
    pub(crate) before: Vec<String>,
    /// The prompt; `None` continues the history as it is
    /// ([`continue_history`]).
    pub(crate) prompt: Option<String>,
    /// Added after the prompt.
    pub(crate) after: Vec<String>,
}

impl Opening {
    /// `prompt` alone.
    pub(crate) fn prompt(prompt: Option<String>) -> Self {
        Self {
            prompt,
            ..Self::default()
        }
    }

    /// Adds it to `history`, as one user message where it can (a history
    /// continued without a prompt is readied first).
    pub(crate) fn open(self, history: &mut Vec<Message>) {
        if self.prompt.is_none() {
            continue_history(history);
        }
        let texts = self.before.iter().chain(&self.prompt).chain(&self.after);
        for text in texts {
            push_user_text(history, text);
        }
    }
}

/// The turn a kill left open at the end of a history read back from a
/// transcript: the model's last answer has tool calls, and the message
/// after it (if any) holds results for only some of them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct OpenTurn {
    /// Where the answer is in the history.
    pub(crate) answer: usize,
    /// The answer's calls, in order.
    pub(crate) calls: Vec<ToolCall>,
    /// The results recorded for some of them, by call id.
    pub(crate) results: BTreeMap<String, ContentBlock>,
}

/// The tool calls of `content` (an answer of the model), in order.
pub(crate) fn calls_of(content: &[ContentBlock]) -> Vec<ToolCall> {
    content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolUse { id, name, input } => Some(ToolCall {
                id: id.clone(),
                name: name.clone(),
                input: input.clone(),
            }),
            _ => None,
        })
        .collect()
}

/// The turn left open at the end of `history`, if one is.
pub(crate) fn open_turn(history: &[Message]) -> Option<OpenTurn> {
    let answer = history
        .iter()
        .rposition(|m| m.role == MessageRole::Assistant)?;
    let after = history.get(answer + 1..).unwrap_or_default();
    let results: BTreeMap<String, ContentBlock> = match after {
        [] => BTreeMap::new(),
        [only] if only.role == MessageRole::User => {
            let mut results = BTreeMap::new();
            for block in &only.content {
                let ContentBlock::ToolResult { tool_use_id, .. } = block else {
                    return None;
                };
                results.insert(tool_use_id.clone(), block.clone());
            }
            results
        }
        _ => return None,
    };
    let calls = calls_of(&history.get(answer)?.content);
    let complete = calls.iter().all(|c| results.contains_key(&c.id));
    (!calls.is_empty() && !complete).then_some(OpenTurn {
        answer,
        calls,
        results,
    })
}

/// The tools `history` called, in the order of their first call. Loading
/// them again gives a resumed agent back the deferred tools it had loaded
/// through FindTool and used (`AgentTools::load` passes over the others);
/// the transcript does not record the loading itself.
pub(crate) fn called_tools(history: &[Message]) -> Vec<ToolName> {
    let mut names: Vec<ToolName> = Vec::new();
    let calls = history
        .iter()
        .filter(|m| m.role == MessageRole::Assistant)
        .flat_map(|m| &m.content);
    for block in calls {
        if let ContentBlock::ToolUse { name, .. } = block
            && let Ok(name) = name.parse::<ToolName>()
            && !names.contains(&name)
        {
            names.push(name);
        }
    }
    names
}
