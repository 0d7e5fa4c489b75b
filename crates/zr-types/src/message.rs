//! Conversation messages: what agents and models exchange.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageRole {
    /// The user, or the engine speaking for tools.
    User,
    /// The model.
    Assistant,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who wrote it.
    pub role: MessageRole,
    /// What it holds, in order.
    pub content: Vec<ContentBlock>,
}

impl Message {
    /// A user message of one text block.
    #[must_use]
    pub fn user_text(text: impl Into<String>) -> Self {
        Self {
            role: MessageRole::User,
            content: vec![ContentBlock::Text { text: text.into() }],
        }
    }

    /// An assistant message of one text block.
    #[must_use]
    pub fn assistant_text(text: impl Into<String>) -> Self {
        Self {
            role: MessageRole::Assistant,
            content: vec![ContentBlock::Text { text: text.into() }],
        }
    }
}

/// The source of an image.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ImageSource {
    /// Base64-encoded bytes.
    Base64 {
        /// MIME type, e.g. `image/png`.
        media_type: String,
        /// The encoded bytes.
        data: String,
    },
    /// A URL the provider fetches.
    Url {
        /// The address.
        url: String,
    },
}

/// A piece of a tool result that goes to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolResultContent {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image.
    Image {
        /// Its source.
        source: ImageSource,
    },
    /// Structured data (MCP `structuredContent`, a subagent's result).
    Json {
        /// The value.
        value: Value,
    },
}

/// A block of message content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// The model asks for a tool call.
    ToolUse {
        /// The provider's call id.
        id: String,
        /// The tool's name as the model sent it; not validated (it need not
        /// be a valid [`ToolName`](crate::ToolName)) — the engine checks it
        /// against the agent's pool and answers an unknown name with an
        /// error result, so a transcript holding one still loads.
        name: String,
        /// Its input.
        input: Value,
    },
    /// The answer to a tool call.
    ToolResult {
        /// The call it answers.
        tool_use_id: String,
        /// What the model sees.
        content: Vec<ToolResultContent>,
        /// Whether the call failed.
        is_error: bool,
        /// A human-readable rendering for the host's user interface. It never
        /// enters the model's context: providers must not send it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        display: Option<String>,
    },
    /// The model's reasoning.
    Thinking {
        /// The reasoning text.
        thinking: String,
        /// The provider's signature, echoed back verbatim.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
}

/// The text blocks of `content`, in order (tool calls, tool results and
/// thinking are skipped).
pub fn texts(content: &[ContentBlock]) -> impl Iterator<Item = &str> {
    content.iter().filter_map(|b| match b {
        ContentBlock::Text { text } => Some(text.as_str()),
        _ => None,
    })
}

/// Token counts of one request or of a whole agent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default)]
pub struct Usage {
    /// Input tokens not read from cache.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read_input_tokens: u64,
    /// Input tokens written to the prompt cache.
    pub cache_creation_input_tokens: u64,
}

impl Usage {
    /// Every token counted: input, output and both cache kinds
    /// (saturating). What a token budget spends.
    ///
    /// ```
    /// use zr_types::Usage;
    /// let usage = Usage { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 100, cache_creation_input_tokens: 1 };
    /// assert_eq!(usage.total(), 116);
    /// ```
    #[must_use]
    pub fn total(self) -> u64 {
        self.input_tokens
            .saturating_add(self.output_tokens)
            .saturating_add(self.cache_read_input_tokens)
            .saturating_add(self.cache_creation_input_tokens)
    }

    /// The sum of two usages (saturating).
    #[must_use]
    pub fn plus(self, other: Self) -> Self {
        Self {
            input_tokens: self.input_tokens.saturating_add(other.input_tokens),
            output_tokens: self.output_tokens.saturating_add(other.output_tokens),
            cache_read_input_tokens: self
                .cache_read_input_tokens
                .saturating_add(other.cache_read_input_tokens),
            cache_creation_input_tokens: self
                .cache_creation_input_tokens
                .saturating_add(other.cache_creation_input_tokens),
        }
    }
}

/// Why the model stopped.
///
/// (De)serialised as a string: `end_turn`, `tool_use`, `max_tokens`,
/// `stop_sequence` and `refusal` are the named variants; any other string is
/// [`StopReason::Other`] and serialises back to the same string.
/// `Other` holding one of the known strings reads back as that variant.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum StopReason {
    /// It finished its turn.
    EndTurn,
    /// It wants tool results.
    ToolUse,
    /// It hit the output-token limit.
    MaxTokens,
    /// It produced a stop sequence.
    StopSequence,
    /// It refused.
    Refusal,
    /// A reason this version does not know, kept verbatim.
    Other(String),
}

impl StopReason {
    /// The reason as the provider writes it.
    #[must_use]
    pub fn as_str(&self) -> &str {
        match self {
            Self::EndTurn => "end_turn",
            Self::ToolUse => "tool_use",
            Self::MaxTokens => "max_tokens",
            Self::StopSequence => "stop_sequence",
            Self::Refusal => "refusal",
            Self::Other(text) => text,
        }
    }
}

impl From<String> for StopReason {
    fn from(text: String) -> Self {
        match text.as_str() {
            "end_turn" => Self::EndTurn,
            "tool_use" => Self::ToolUse,
            "max_tokens" => Self::MaxTokens,
            "stop_sequence" => Self::StopSequence,
            "refusal" => Self::Refusal,
            _ => Self::Other(text),
        }
    }
}

impl From<StopReason> for String {
    fn from(reason: StopReason) -> Self {
        match reason {
            StopReason::Other(text) => text,
            known => known.as_str().to_owned(),
        }
    }
}

#[cfg(test)]
mod tests;
