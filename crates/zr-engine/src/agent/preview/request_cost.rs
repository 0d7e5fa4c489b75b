//! What every model request of an agent costs before its first message:
//! the bytes its system prompt and tool definitions add to the request
//! body, as the provider sends them (`zr resolve` prints them).

use std::sync::Arc;

use serde_json::json;
use zr_providers::{ModelProvider, ModelRequest, RequestOrigin, ToolChoice};
use zr_types::{AgentId, ToolDefinition};

use crate::agent::Agent;
use crate::error::EngineError;
use crate::session::pools::{root_system_prompt, system_prompt};

/// The fixed part of one agent's model requests
/// ([`Agent::preview_request_costs`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RequestCost {
    /// `root`, a subagent type's name, or `fork`.
    pub agent: String,
    /// The bytes its system prompt and tool definitions add to each
    /// request body: the body with them less the body without them.
    pub bytes: usize,
    /// Whether `bytes` were measured on the provider's own body; `false`:
    /// estimated from the prompt's text and each tool's name, description
    /// and schema as JSON (a provider that sends no body, such as the
    /// scripted one).
    pub measured: bool,
}

impl RequestCost {
    /// A rough count of tokens: `bytes / 4`, rounded up (English text and
    /// JSON run near four bytes a token; the model's tokenizer decides).
    #[must_use]
    pub fn estimated_tokens(&self) -> usize {
        self.bytes.div_ceil(4)
    }
}

impl Agent {
    /// The fixed cost of each agent's requests, in the order of
    /// [`Agent::preview_pools`]: what its system prompt (a typed
    /// subagent's definition's, a fork's its parent's) and its advertised
    /// tools, listings included, add to every request body, measured on
    /// the body `wire` would send (default: the runtime's provider).
    /// Nothing is sent and nothing runs.
    ///
    /// # Errors
    ///
    /// As [`Agent::preview_pools`].
    pub fn preview_request_costs(
        &self,
        wire: Option<&dyn ModelProvider>,
    ) -> Result<Vec<RequestCost>, EngineError> {
        let session = self.session();
        let provider = wire.unwrap_or(&**session.runtime.provider());
        let model: Arc<str> = Arc::from(session.runtime.settings().model.as_str());
        let instructions = session.catalog.current().instructions.clone();
        let root = root_system_prompt(&session.config.system_prompt, instructions.as_deref());
        let max_tokens = session.runtime.max_tokens();
        let mut out = Vec::new();
        self.each_agent(|agent, _, definition, tools| {
            let system = definition.map_or_else(
                || Arc::clone(&root),
                |d| system_prompt(d, instructions.as_deref()),
            );
            let request = |system: Arc<str>, tools: Vec<Arc<ToolDefinition>>| ModelRequest {
                model: Arc::clone(&model),
                system,
                tools,
                messages: Arc::new(Vec::new()),
                max_tokens,
                tool_choice: ToolChoice::Auto,
                origin: RequestOrigin {
                    agent: AgentId::root(),
                    agent_type: Arc::from(agent),
                    turn: 1,
                },
                cache_prefix: None,
                output: None,
                effort: None,
            };
            let full = request(Arc::clone(&system), tools.advertised());
            let bare = request(Arc::from(""), Vec::new());
            let cost = match (provider.request_body(&full), provider.request_body(&bare)) {
                (Some(full), Some(bare)) => RequestCost {
                    agent: agent.to_owned(),
                    bytes: full.len().saturating_sub(bare.len()),
                    measured: true,
                },
                _ => RequestCost {
                    agent: agent.to_owned(),
                    bytes: system.len() + full.tools.iter().map(|t| tool_bytes(t)).sum::<usize>(),
                    measured: false,
                },
            };
            out.push(cost);
        })?;
        Ok(out)
    }
}

/// `tool` as JSON: its name, description and input schema.
fn tool_bytes(tool: &ToolDefinition) -> usize {
    json!({
        "name": tool.name.as_str(),
        "description": tool.description,
        "input_schema": tool.input_schema,
    })
    .to_string()
    .len()
}
