//! The end of an agent with an output schema: its final answer checked
//! against the schema, asked for in a request of its own when the
//! provider answers in a format only there (Anthropic's forced tool), and
//! repaired once.
//!
//! The sequence after the model ends its turn with text:
//!
//! 1. the text is checked; a match ends the run (`completed`, with the
//!    value);
//! 2. a provider of [`StructuredOutput::FinalRequest`] is asked for the
//!    answer ([`ToolChoice::Answer`](zr_providers::ToolChoice::Answer):
//!    tools disabled, the answer tool forced); a match ends the run;
//! 3. one repair turn: the model is told the validation error and asked
//!    again in the format; a match ends the run, anything else ends it
//!    `failed` with the validation error.

use zr_providers::{ProviderError, StructuredOutput};

use super::{model, stream_ended};
use crate::history::{push_user_text, text_of};
use crate::model::structured::Structured;
use crate::outcome::{RunOutcome, TaskStatus};
use crate::session::QueryCtx;
use crate::turn::agent_run::AgentRun;

/// What an agent whose provider needs an answer request of its own is
/// told before it (step 2).
const ANSWER_NOW: &str =
    "Give your final answer now, as one JSON value that matches the output schema.";

/// What the model is told on the repair turn (step 3).
fn repair(error: &str) -> String {
    format!(
        "Your answer was refused: {error}. Answer again with only one JSON value that matches the output schema."
    )
}

impl AgentRun {
    /// Ends the run of an agent with `output` whose model ended its turn
    /// at `turn` with `text`, as the module's sequence says.
    pub(super) async fn structured_answer(
        mut self,
        ctx: &QueryCtx,
        mut turn: u32,
        text: String,
        output: &Structured,
    ) -> RunOutcome {
        let mut error = match output.check(&text) {
            Ok(value) => return self.with_value(text, value),
            Err(error) => error,
        };
        let own_request =
            ctx.session.runtime.provider().structured_output() == StructuredOutput::FinalRequest;
        if own_request {
            match self.ask_answer(ctx, &mut turn, ANSWER_NOW, output).await {
                Ok(Ok((text, value))) => return self.with_value(text, value),
                Ok(Err(refused)) => error = refused,
                Err(failed) => return self.failed(Some(failed), None),
            }
        }
        tracing::info!(agent = %self.meta.id, %error, "answer refused; one repair turn");
        match self
            .ask_answer(ctx, &mut turn, &repair(&error), output)
            .await
        {
            Ok(Ok((text, value))) => self.with_value(text, value),
            Ok(Err(refused)) => self.failed(None, Some(refused)),
            Err(failed) => self.failed(Some(failed), None),
        }
    }

    /// Tells the model `message` and asks for the answer in the format
    /// (one more turn): the answer's text and value, or why it was
    /// refused.
    async fn ask_answer(
        &mut self,
        ctx: &QueryCtx,
        turn: &mut u32,
        message: &str,
        output: &Structured,
    ) -> Result<Result<(String, serde_json::Value), String>, ProviderError> {
        push_user_text(self.history_mut(), message);
        *turn += 1;
        self.sync_transcript(ctx);
        let response = model::answer_request(ctx, self.ask(ctx, *turn), &self.progress)
            .await?
            .ok_or_else(stream_ended)?;
        self.record(ctx, *turn, &response);
        let text = text_of(&response.content);
        self.push_answer(response.content);
        self.sync_transcript(ctx);
        Ok(output.check(&text).map(|value| (text, value)))
    }

    fn with_value(self, text: String, value: serde_json::Value) -> RunOutcome {
        let mut outcome = self.outcome(TaskStatus::Completed, text, None);
        outcome.value = Some(value);
        outcome
    }

    fn failed(self, error: Option<ProviderError>, invalid: Option<String>) -> RunOutcome {
        let output = self.written();
        let mut outcome = self.outcome(TaskStatus::Failed, output, error);
        outcome.invalid = invalid;
        outcome
    }
}
