//! Structured answers: an agent's output schema, compiled once, and the
//! check of its final answer against it.
//!
//! An agent has an output schema when its type declares `output_schema`
//! or the `Task` call that started it passes one (the call's wins), or,
//! for the root, when [`AgentConfig::output_schema`](crate::AgentConfig::output_schema)
//! is set. Its final answer must then be one JSON value that the schema
//! accepts; the loop's end (`run/answer.rs`) asks for it and repairs it
//! once.
//!
//! A call's schema is recorded in the subagent's transcript header, so
//! that a revived subagent answers in it again, as it would have live
//! ([`subagent_output`] decides for both).

use std::fmt;
use std::sync::Arc;

use serde_json::Value;
use zr_caps::AgentDefinition;
use zr_providers::OutputFormat;
use zr_types::AgentId;

use crate::error::EngineError;

/// The most validation errors told to the model (and in a task's error).
const MAX_ERRORS: usize = 5;

/// An output schema, compiled.
pub(crate) struct Structured {
    /// What requests carry.
    pub(crate) format: Arc<OutputFormat>,
    validator: jsonschema::Validator,
    /// Whether a `Task` call passed it (replacing the type's).
    from_call: bool,
}

impl fmt::Debug for Structured {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Structured")
            .field("format", &self.format)
            .field("from_call", &self.from_call)
            .finish_non_exhaustive()
    }
}

impl Structured {
    /// Compiles `schema`.
    ///
    /// # Errors
    ///
    /// Why `schema` is not a JSON Schema (a sentence for the model or the
    /// host; the caller names where the schema came from).
    pub(crate) fn compile(schema: &Value) -> Result<Arc<Self>, String> {
        Self::compile_from(schema, false)
    }

    /// Compiles `schema`, which a `Task` call passed: see
    /// [`Structured::call_schema`].
    ///
    /// # Errors
    ///
    /// As [`Structured::compile`].
    pub(crate) fn compile_call(schema: &Value) -> Result<Arc<Self>, String> {
        Self::compile_from(schema, true)
    }

    fn compile_from(schema: &Value, from_call: bool) -> Result<Arc<Self>, String> {
        if !matches!(schema, Value::Object(_) | Value::Bool(_)) {
            return Err(format!(
                "expected a JSON Schema (an object), got {}",
                short(schema)
            ));
        }
        let validator = jsonschema::validator_for(schema)
            .map_err(|error| format!("not a valid JSON Schema: {error}"))?;
        Ok(Arc::new(Self {
            format: Arc::new(OutputFormat::new(schema.clone())),
            validator,
            from_call,
        }))
    }

    /// The schema, if a `Task` call passed it: what a transcript header
    /// records (a type's schema is read from the type again).
    pub(crate) fn call_schema(&self) -> Option<&Value> {
        self.from_call.then_some(&self.format.schema)
    }

    /// The value of `answer` if it is JSON that the schema accepts. A
    /// Markdown code fence around the JSON is allowed (models add one).
    ///
    /// # Errors
    ///
    /// What is wrong: not JSON, or up to five validation errors, each
    /// with the place in the answer (a JSON pointer).
    pub(crate) fn check(&self, answer: &str) -> Result<Value, String> {
        let text = unfence(answer);
        let value: Value = serde_json::from_str(text).map_err(|error| {
            format!("the answer is not one JSON value ({error}): {}", cut(text))
        })?;
        let errors: Vec<String> = self
            .validator
            .iter_errors(&value)
            .take(MAX_ERRORS)
            .map(|error| {
                let at = error.instance_path().to_string();
                let at = if at.is_empty() { "/".to_owned() } else { at };
                format!("at {at}: {error}")
            })
            .collect();
        if errors.is_empty() {
            Ok(value)
        } else {
            Err(format!(
                "the answer does not match the output schema: {}",
                errors.join("; ")
            ))
        }
    }
}

/// The schema subagent `agent` answers in: its call's (`call`, compiled
/// when the call was read), else its type's (`None` for a fork, which has
/// no type), else none.
///
/// # Errors
///
/// [`EngineError::OutputSchema`] when the type's schema is not one.
pub(crate) fn subagent_output(
    call: Option<Arc<Structured>>,
    definition: Option<&AgentDefinition>,
    agent: &AgentId,
) -> Result<Option<Arc<Structured>>, EngineError> {
    if call.is_some() {
        return Ok(call);
    }
    let Some((definition, schema)) =
        definition.and_then(|d| d.output_schema.as_ref().map(|s| (d, s)))
    else {
        return Ok(None);
    };
    Structured::compile(schema)
        .map(Some)
        .map_err(|message| EngineError::OutputSchema {
            agent: agent.clone(),
            from: format!("type {}", definition.name),
            message,
        })
}

/// `text` without a surrounding Markdown code fence (```` ```json ````).
fn unfence(text: &str) -> &str {
    let trimmed = text.trim();
    let Some(rest) = trimmed.strip_prefix("```") else {
        return trimmed;
    };
    let Some(body) = rest.strip_suffix("```") else {
        return trimmed;
    };
    // The info string (`json`) runs to the end of the first line.
    body.split_once('\n').map_or(body, |(_, body)| body).trim()
}

/// A value, shortened for a message.
fn short(value: &Value) -> String {
    cut(&value.to_string())
}

/// At most 200 characters of `text`.
fn cut(text: &str) -> String {
    match text.char_indices().nth(200) {
        Some((end, _)) => format!("{}...", &text[..end]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests;
