//! `AskUserQuestion` at the terminal: each question with its numbered
//! options; one number, several (`1,3`) when it allows several, or an
//! answer in the person's own words.

use std::fmt::Write as _;

use zr_tools::{AskUserService, Question, ServiceError, UserAnswer};
use zr_types::BoxFuture;

use super::{Asker, Reply};

/// How the reply `line` answers `question`: the chosen labels, or the
/// line itself as the person's own words. `None`: an empty line.
pub(crate) fn answer_of(question: &Question, line: &str) -> Option<Vec<String>> {
    let line = line.trim();
    if line.is_empty() {
        return None;
    }
    let picked: Option<Vec<String>> = line
        .split(',')
        .map(|part| {
            let n: usize = part.trim().parse().ok()?;
            question
                .options
                .get(n.checked_sub(1)?)
                .map(|o| o.label.clone())
        })
        .collect();
    match picked {
        Some(labels) if labels.len() == 1 || (question.multi_select && !labels.is_empty()) => {
            Some(labels)
        }
        _ => Some(vec![line.to_owned()]),
    }
}

/// The question as the terminal shows it.
pub(crate) fn shown(question: &Question, index: usize, of: usize) -> String {
    let mut text = String::from("\n");
    let header = question.header.trim();
    let counter = if of > 1 {
        format!(" ({}/{of})", index + 1)
    } else {
        String::new()
    };
    let _ = writeln!(
        text,
        "? {}{counter}{}",
        if header.is_empty() {
            "Question"
        } else {
            header
        },
        format_args!(": {}", question.question.trim())
    );
    for (i, option) in question.options.iter().enumerate() {
        let description = option.description.trim();
        if description.is_empty() {
            let _ = writeln!(text, "  {}. {}", i + 1, option.label);
        } else {
            let _ = writeln!(text, "  {}. {} - {description}", i + 1, option.label);
        }
    }
    if question.multi_select {
        text.push_str("Answer with numbers (e.g. 1,3) or in your own words: ");
    } else {
        text.push_str("Answer with a number or in your own words: ");
    }
    text
}

impl AskUserService for Asker {
    fn ask<'a>(
        &'a self,
        questions: Vec<Question>,
    ) -> BoxFuture<'a, Result<Vec<UserAnswer>, ServiceError>> {
        Box::pin(async move {
            let mut turn = self.turn().await;
            let mut answers = Vec::new();
            let of = questions.len();
            for (i, question) in questions.into_iter().enumerate() {
                let mut prompt = shown(&question, i, of);
                let labels = loop {
                    match turn.line(&prompt).await {
                        Reply::Line(line) => match answer_of(&question, &line) {
                            Some(labels) => break labels,
                            None => prompt = "Please answer (a number or words): ".to_owned(),
                        },
                        // The run is being stopped (the signal reached
                        // `drive`): nothing more is asked or answered.
                        Reply::Interrupted => return std::future::pending().await,
                        Reply::Closed => return Err(ServiceError::NoAnswer),
                    }
                };
                answers.push(UserAnswer {
                    question: question.question,
                    answers: labels,
                });
            }
            Ok(answers)
        })
    }
}
