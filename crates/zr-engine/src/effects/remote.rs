//! A subagent described for another worker: what a durable backend sends
//! to run one of the root's subagents, foreground or background, as a
//! child invocation
//! ([`Effects::remote_subagent`](crate::Effects::remote_subagent)), and
//! what the receiving worker rebuilds it from
//! ([`Agent::run_described`](crate::Agent::run_described)).
//!
//! The description holds the task as its call held it, and where it stands
//! in the session (call, index, id, parents). It holds no pool, prompt or
//! model: the receiving worker resolves those from its own project, from
//! the type and the parent's pool, exactly as a local run does.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use zr_types::{AgentId, AgentName};

/// One task of a Task or MultiTask call, with the id its parent gave it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubagentSpec {
    /// The subagent type.
    pub subagent_type: AgentName,
    /// The task's short description.
    pub description: String,
    /// The task: the subagent's first message.
    pub prompt: String,
    /// The call's own `output_schema` for this task, as the call held it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// The call's own `model` for this task, as the call held it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The id of the delegating call.
    pub call: String,
    /// The task's index in its call.
    pub index: usize,
    /// The subagent's id (`root.0003-worker`).
    pub agent: AgentId,
    /// Its parents, the root first (today always `[root]`: subagents do
    /// not delegate).
    pub parents: Vec<AgentId>,
    /// It runs in the background (`run_in_background`, or its type's
    /// `background: true`): its call returned at once, and its parent
    /// hears of its end in a message. The receiving worker builds it as a
    /// background agent (its pool, its permission prompts denied).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub background: bool,
}

impl SubagentSpec {
    /// The task as its call's input held it (`parse_task`'s input).
    pub(crate) fn task_input(&self) -> Value {
        let mut input = serde_json::json!({
            "description": self.description,
            "prompt": self.prompt,
            "subagent_type": self.subagent_type.as_str(),
        });
        if let (Some(schema), Some(map)) = (&self.output_schema, input.as_object_mut()) {
            map.insert("output_schema".to_owned(), schema.clone());
        }
        if let (Some(model), Some(map)) = (&self.model, input.as_object_mut()) {
            map.insert("model".to_owned(), Value::String(model.clone()));
        }
        input
    }
}
