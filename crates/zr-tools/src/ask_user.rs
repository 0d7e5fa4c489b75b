//! `AskUserQuestion`: delegates to the host's way of asking its user;
//! without one it says so and never invents an answer.

use std::fmt::{self, Write as _};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use zr_types::{BoxFuture, BuiltinName, ToolContext, ToolError, ToolOutput};

use crate::error::ServiceError;
use crate::toolkit::{Builtin, Hints, tool_failed};

/// One option of a question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuestionOption {
    /// The choice, in 1-5 words.
    pub label: String,
    /// What choosing it means.
    #[serde(default)]
    pub description: String,
}

/// One question for the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Question {
    /// The full question.
    pub question: String,
    /// A very short label for it (at most 12 characters).
    #[serde(default)]
    pub header: String,
    /// 2 to 4 choices; the user may also answer in their own words.
    pub options: Vec<QuestionOption>,
    /// Whether several options may be chosen.
    #[serde(rename = "multiSelect", default)]
    pub multi_select: bool,
}

/// The user's answer to one question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserAnswer {
    /// The question answered.
    pub question: String,
    /// The chosen labels, or the user's own words.
    pub answers: Vec<String>,
}

/// The host's way of asking its user.
pub trait AskUserService: Send + Sync + fmt::Debug {
    /// Asks `questions` and waits for the answers (one per question, in order).
    ///
    /// # Errors
    ///
    /// [`ServiceError::NoAnswer`] when the user declines; other variants when
    /// the host cannot ask.
    fn ask<'a>(
        &'a self,
        questions: Vec<Question>,
    ) -> BoxFuture<'a, Result<Vec<UserAnswer>, ServiceError>>;
}

/// Input of `AskUserQuestion`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AskInput {
    /// 1 to 4 questions.
    questions: Vec<Question>,
}

/// The `AskUserQuestion` tool.
#[derive(Debug)]
pub(crate) struct AskUserQuestionTool {
    service: Option<Arc<dyn AskUserService>>,
}

impl AskUserQuestionTool {
    pub(crate) fn new(service: Option<Arc<dyn AskUserService>>) -> Self {
        Self { service }
    }
}

fn check(questions: &[Question]) -> Result<(), String> {
    if !(1..=4).contains(&questions.len()) {
        return Err(format!(
            "AskUserQuestion: {} questions; ask 1 to 4 at a time.",
            questions.len()
        ));
    }
    for (i, q) in questions.iter().enumerate() {
        if q.question.trim().is_empty() {
            return Err(format!(
                "AskUserQuestion: questions[{i}].question is empty."
            ));
        }
        if !(2..=4).contains(&q.options.len()) {
            return Err(format!(
                "AskUserQuestion: questions[{i}] has {} options; give 2 to 4.",
                q.options.len()
            ));
        }
    }
    Ok(())
}

impl Builtin for AskUserQuestionTool {
    type Input = AskInput;
    const NAME: BuiltinName = BuiltinName::AskUserQuestion;
    const HINTS: Hints = Hints::OPEN_WORLD;

    fn details(&self) -> String {
        "Use it when a decision needs the user: 1 to 4 questions, each with 2 to 4 options (`label`, `description`) and `multiSelect`; the user may also answer in their own words. Waits for the answer.".to_owned()
    }

    fn run<'a>(
        &'a self,
        input: AskInput,
        _ctx: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let Some(service) = &self.service else {
                return Ok(ToolOutput::error(
                    "AskUserQuestion: this host has no way to ask the user, so nothing was asked. Decide with the information you have and state your assumption.",
                ));
            };
            if let Err(msg) = check(&input.questions) {
                return Ok(ToolOutput::error(msg));
            }
            match service.ask(input.questions).await {
                Ok(answers) => {
                    let mut text = String::from("The user answered:\n");
                    for a in &answers {
                        let _ = writeln!(text, "- {} -> {}", a.question, a.answers.join(", "));
                    }
                    Ok(ToolOutput::text(text))
                }
                Err(ServiceError::NoAnswer) => Ok(ToolOutput::error(
                    "AskUserQuestion: the user did not answer. Continue with your best judgement and say what you assumed.",
                )),
                Err(e) => Err(tool_failed(Self::NAME.as_str(), e)),
            }
        })
    }
}
