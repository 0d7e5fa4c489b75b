//! The zr query engine: agent loop, model providers, Task and MultiTask
//! delegation, FindTool, budgets and events.
//!
//! Architecture invariant: the engine never filters, renames or adds tools
//! on its own. It advertises to the model exactly what the resolver put in
//! an agent's `advertised` pool (plus what the agent loaded through
//! `FindTool`), runs only `executable` tools, and answers any other name
//! with an error result naming the agent, without running anything.

mod agent;
mod anthropic;
mod error;
mod event;
mod exec;
mod find_tool;
mod http;
mod openai;
mod provider;
mod run;
mod runtime;
mod scripted;
mod session;
mod task;
mod tools;

pub use agent::{Agent, Query, QueryOverrides, QueryResult};

pub use anthropic::{AnthropicConfig, AnthropicProvider};
pub use error::{EngineError, ProviderError};
pub use event::{Event, EventKind};
pub use http::{HttpSettings, RetryPolicy};
pub use openai::{MaxTokensField, OpenAiConfig, OpenAiProvider};
pub use provider::{
    ModelEvent, ModelProvider, ModelRequest, ModelResponse, ModelStream, RequestOrigin, ToolChoice,
};
pub use runtime::{AgentObserver, DEFAULT_MAX_TOKENS, RuntimeEnvironment};
pub use scripted::{AgentScript, Script, ScriptCall, ScriptTurn, ScriptedProvider};
pub use session::{AgentConfig, DEFAULT_MAX_TURNS, SubagentConfig};
pub use task::{TaskResult, TaskStatus};
