//! A server's prompts: what it lists, positional and `name=value` arguments bound to the declared ones, the messages it returns as text.

use rmcp::model::{GetPromptResult, JsonObject, Prompt, Role};
use serde_json::Value;
use zr_types::{ServerName, ToolResultContent};

use crate::error::McpError;
use crate::result::map_block;

/// One prompt a server offers.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct McpPrompt {
    /// Its name on the server.
    pub name: String,
    /// What it does, when the server says.
    pub description: Option<String>,
    /// Its arguments, in the declared order.
    pub arguments: Vec<PromptArgument>,
}

/// One declared argument of a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PromptArgument {
    /// Its name.
    pub name: String,
    /// What it is for.
    pub description: Option<String>,
    /// Whether it must be given.
    pub required: bool,
}

/// Who speaks a message of a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptRole {
    /// The user.
    User,
    /// The assistant.
    Assistant,
}

/// One message of a prompt, as text (an image or resource is described in
/// words, as in tool results).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PromptMessage {
    /// Who speaks it.
    pub role: PromptRole,
    /// What it says.
    pub text: String,
}

impl McpPrompt {
    pub(crate) fn of(prompt: &Prompt) -> Self {
        Self {
            name: prompt.name.clone(),
            description: prompt.description.clone(),
            arguments: prompt
                .arguments
                .iter()
                .flatten()
                .map(|a| PromptArgument {
                    name: a.name.clone(),
                    description: a.description.clone(),
                    required: a.required.unwrap_or(false),
                })
                .collect(),
        }
    }

    /// `/server:name <required> [optional]`.
    #[must_use]
    pub fn usage(&self, server: &ServerName) -> String {
        let mut usage = format!("/{server}:{}", self.name);
        for argument in &self.arguments {
            if argument.required {
                usage.push_str(&format!(" <{}>", argument.name));
            } else {
                usage.push_str(&format!(" [{}]", argument.name));
            }
        }
        usage
    }

    /// Binds `words` to the declared arguments: `name=value` sets that
    /// argument (when `name` is declared); any other word fills the next
    /// declared argument not yet set, in order.
    ///
    /// # Errors
    ///
    /// [`McpError::PromptArguments`] for a word with no argument left to
    /// fill, an argument given twice, or a required argument missing.
    pub fn bind(&self, server: &ServerName, words: &[String]) -> Result<JsonObject, McpError> {
        let fail = |problem: String| McpError::PromptArguments {
            server: server.clone(),
            prompt: self.name.clone(),
            problem,
            usage: self.usage(server),
        };
        let mut bound = JsonObject::new();
        for word in words {
            let named = word
                .split_once('=')
                .filter(|(name, _)| self.arguments.iter().any(|a| a.name == *name));
            let (name, value) = match named {
                Some((name, value)) => (name.to_owned(), value.to_owned()),
                None => {
                    let next = self
                        .arguments
                        .iter()
                        .find(|a| !bound.contains_key(&a.name))
                        .ok_or_else(|| {
                            fail(format!(
                                "'{word}' is one argument too many (it takes {})",
                                self.arguments.len()
                            ))
                        })?;
                    (next.name.clone(), word.clone())
                }
            };
            if bound.contains_key(&name) {
                return Err(fail(format!("'{name}' is given twice")));
            }
            bound.insert(name, Value::String(value));
        }
        let missing: Vec<&str> = self
            .arguments
            .iter()
            .filter(|a| a.required && !bound.contains_key(&a.name))
            .map(|a| a.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(fail(format!(
                "missing the required argument{} {}",
                if missing.len() == 1 { "" } else { "s" },
                missing
                    .iter()
                    .map(|m| format!("'{m}'"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        Ok(bound)
    }
}

/// The prompt's messages as text.
pub(crate) fn messages(result: GetPromptResult) -> Vec<PromptMessage> {
    result
        .messages
        .into_iter()
        .map(|m| PromptMessage {
            role: match m.role {
                Role::User => PromptRole::User,
                Role::Assistant => PromptRole::Assistant,
            },
            text: match map_block(m.content) {
                ToolResultContent::Text { text } => text,
                ToolResultContent::Image { .. } => "[image]".to_owned(),
                ToolResultContent::Json { value } => value.to_string(),
            },
        })
        .collect()
}

#[cfg(test)]
mod tests;
