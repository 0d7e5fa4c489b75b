//! An MCP server's form at the terminal (elicitation): the server's
//! message, then accept, decline or cancel; on accept each field in turn,
//! with its kind, its options and its default (an empty line takes the
//! default, or leaves an optional field out).

use std::fmt::Write as _;

use serde_json::Map;
use zr_mcp::{ElicitationAnswer, ElicitationRequest, Elicitor, FieldKind, FormField};
use zr_types::BoxFuture;

use super::{Asker, Reply, Turn};

/// The first question: what the server wants, and whether to answer.
pub(crate) fn shown(request: &ElicitationRequest) -> String {
    let mut text = String::from("\n");
    let asked_by = match request.agents.as_slice() {
        [] => String::new(),
        agents => format!(
            " (during a call of {})",
            agents
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let _ = writeln!(
        text,
        "? MCP server '{}' asks{asked_by}: {}",
        request.server,
        request.message.trim()
    );
    let _ = writeln!(
        text,
        "  {} field{}: {}",
        request.fields.len(),
        if request.fields.len() == 1 { "" } else { "s" },
        request
            .fields
            .iter()
            .map(|f| f.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    text.push_str("  1. Fill in the form\n  2. Decline\n  3. Cancel\nAnswer 1-3: ");
    text
}

/// One field's prompt.
pub(crate) fn field_prompt(field: &FormField) -> String {
    let mut text = format!("  {}", field.title.as_deref().unwrap_or(&field.name));
    if let Some(description) = field.description.as_deref().map(str::trim)
        && !description.is_empty()
    {
        let _ = write!(text, " - {description}");
    }
    let kind = match &field.kind {
        FieldKind::Text {
            format: Some(f), ..
        } => f.clone(),
        FieldKind::Text { .. } => "text".to_owned(),
        FieldKind::Number { integer: true, .. } => "whole number".to_owned(),
        FieldKind::Number { .. } => "number".to_owned(),
        FieldKind::Boolean => "yes/no".to_owned(),
        FieldKind::Choice {
            multiple, options, ..
        } => {
            text.push('\n');
            for (i, option) in options.iter().enumerate() {
                let _ = writeln!(text, "    {}. {}", i + 1, option.label);
            }
            text.push_str("   ");
            if *multiple {
                "numbers, e.g. 1,3".to_owned()
            } else {
                "a number".to_owned()
            }
        }
        _ => "value".to_owned(),
    };
    let _ = write!(text, " ({kind}");
    if field.required {
        text.push_str(", required");
    }
    text.push(')');
    if let Some(default) = &field.default {
        let shown = match default {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let _ = write!(text, " [{shown}]");
    }
    text.push_str(": ");
    text
}

/// How the person answered one prompt of the form.
enum Step<T> {
    Value(T),
    /// Ctrl-C: the run is being stopped.
    Interrupted,
    /// Standard input ended.
    Closed,
}

async fn choose(turn: &mut Turn<'_>, request: &ElicitationRequest) -> Step<u8> {
    let mut prompt = shown(request);
    loop {
        match turn.line(&prompt).await {
            Reply::Line(line) => match line.as_str() {
                "1" => return Step::Value(1),
                "2" => return Step::Value(2),
                "3" => return Step::Value(3),
                _ => prompt = "Please answer 1, 2 or 3: ".to_owned(),
            },
            Reply::Interrupted => return Step::Interrupted,
            Reply::Closed => return Step::Closed,
        }
    }
}

async fn fill(turn: &mut Turn<'_>, fields: &[FormField]) -> Step<Map<String, serde_json::Value>> {
    let mut answers = Map::new();
    for field in fields {
        let mut prompt = field_prompt(field);
        loop {
            match turn.line(&prompt).await {
                Reply::Line(line) => match field.read(&line) {
                    Ok(value) => {
                        if let Some(value) = value {
                            answers.insert(field.name.clone(), value);
                        }
                        break;
                    }
                    Err(why) => prompt = format!("  {why}; {}: ", field.name),
                },
                Reply::Interrupted => return Step::Interrupted,
                Reply::Closed => return Step::Closed,
            }
        }
    }
    Step::Value(answers)
}

impl Elicitor for Asker {
    fn elicit<'a>(&'a self, request: &'a ElicitationRequest) -> BoxFuture<'a, ElicitationAnswer> {
        Box::pin(async move {
            let mut turn = self.turn().await;
            let answer = match choose(&mut turn, request).await {
                Step::Value(1) => match fill(&mut turn, &request.fields).await {
                    Step::Value(answers) => ElicitationAnswer::Accept(answers),
                    Step::Interrupted => return std::future::pending().await,
                    Step::Closed => ElicitationAnswer::Cancel,
                },
                Step::Value(2) => ElicitationAnswer::Decline,
                Step::Value(_) | Step::Closed => ElicitationAnswer::Cancel,
                // The run is being stopped (the signal reached `drive`):
                // nothing more is asked or answered.
                Step::Interrupted => return std::future::pending().await,
            };
            turn.say("\n");
            answer
        })
    }
}
