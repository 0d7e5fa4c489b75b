//! What the journal holds for each kind of step: plain, serialisable
//! copies of the engine's results, and the way back.

use serde::{Deserialize, Serialize};
use zr_engine::{ModelResponse, ProviderError};
use zr_types::{ContentBlock, StopReason, ToolError, ToolOutput, ToolResultContent, Usage};

/// A model request's outcome, as journaled.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum ModelRecord {
    /// The model's complete answer.
    Answer {
        content: Vec<ContentBlock>,
        stop_reason: StopReason,
        usage: Usage,
    },
    /// A failure retrying cannot help (4xx, a malformed answer), or the
    /// last of the retried ones.
    Failed { message: String },
}

impl ModelRecord {
    /// The record of `outcome`.
    pub(crate) fn of(outcome: Result<ModelResponse, ProviderError>) -> Self {
        match outcome {
            Ok(response) => Self::Answer {
                content: response.content,
                stop_reason: response.stop_reason,
                usage: response.usage,
            },
            Err(error) => Self::Failed {
                message: zr_types::error_chain(&error),
            },
        }
    }

    /// What the engine gets: the same on the first run and on a replay.
    pub(crate) fn into_outcome(self) -> Result<ModelResponse, ProviderError> {
        match self {
            Self::Answer {
                content,
                stop_reason,
                usage,
            } => Ok(ModelResponse {
                content,
                stop_reason,
                usage,
            }),
            Self::Failed { message } => Err(journaled_failure(message)),
        }
    }
}

/// A provider error read back from the journal.
pub(crate) fn journaled_failure(message: String) -> ProviderError {
    ProviderError::Protocol {
        provider: "restate",
        message,
    }
}

/// Whether retrying the request later may help: a transport failure, a
/// timeout, 429 or 5xx after the provider's own retries. Such a failure is
/// not journaled; the step is retried by Restate.
pub(crate) fn retryable(error: &ProviderError) -> bool {
    matches!(
        error,
        ProviderError::Status { .. }
            | ProviderError::Transport { .. }
            | ProviderError::RetriesExhausted { .. }
            | ProviderError::Timeout { .. }
    )
}

/// A tool call's outcome, as journaled.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum ToolRecord {
    /// The handler's output.
    Output {
        content: Vec<ToolResultContent>,
        is_error: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        display: Option<String>,
    },
    /// The call could not be carried out (`Err(ToolError)`).
    Failed { tool: String, message: String },
}

impl ToolRecord {
    /// The record of `outcome`.
    pub(crate) fn of(tool: &str, outcome: Result<ToolOutput, ToolError>) -> Self {
        match outcome {
            Ok(output) => Self::Output {
                content: output.content,
                is_error: output.is_error,
                display: output.display,
            },
            Err(error) => Self::Failed {
                tool: tool.to_owned(),
                message: zr_types::error_chain(&error),
            },
        }
    }

    /// What the engine gets.
    pub(crate) fn into_outcome(self) -> Result<ToolOutput, ToolError> {
        match self {
            Self::Output {
                content,
                is_error,
                display,
            } => Ok(ToolOutput {
                content,
                is_error,
                display,
            }),
            Self::Failed { tool, message } => Err(ToolError::Unavailable {
                tool,
                reason: message,
            }),
        }
    }
}
