//! Fake host services for the builtin tools (feature `tools`): a user
//! who answers every question by picking the same option.

use zr_tools::{AskUserService, Question, ServiceError, UserAnswer};
use zr_types::BoxFuture;

/// A user who answers every question with its option at this index
/// (0: the first).
#[derive(Debug, Clone, Copy)]
pub struct PicksOption(pub usize);

impl AskUserService for PicksOption {
    fn ask<'a>(
        &'a self,
        questions: Vec<Question>,
    ) -> BoxFuture<'a, Result<Vec<UserAnswer>, ServiceError>> {
        Box::pin(async move {
            Ok(questions
                .into_iter()
                .map(|q| UserAnswer {
                    answers: vec![q.options[self.0].label.clone()],
                    question: q.question,
                })
                .collect())
        })
    }
}
