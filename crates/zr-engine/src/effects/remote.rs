//! A subagent described for another worker: what a durable backend sends
//! to run a typed subagent, foreground or background, of the root or of a
//! subagent that runs from a description itself (any depth), as a child
//! invocation
//! ([`Effects::remote_subagent`](crate::Effects::remote_subagent)), and
//! what the receiving worker rebuilds it from
//! ([`Agent::run_described`](crate::Agent::run_described)).
//!
//! The description holds the task as its call held it, and where it stands
//! in the session (call, index, id, parents). It holds no pool, prompt or
//! model: the receiving worker resolves those from its own project, from
//! the type and the parent's pool, exactly as a local run does. A
//! subagent of a subagent carries its parent's description
//! ([`SubagentSpec::parent`]): the receiving worker rebuilds the chain
//! from the root down (each ancestor's pool, depth and mode, not its
//! run) and the child under it.
//!
//! It also carries what the query's tree budget ([`TreeBudget`]) had left
//! when it started: the receiving side runs the subagent's whole subtree
//! within that, and hands back what the subtree spent ([`RemoteEnd`]),
//! which its parent books into its own query's total. A durable backend
//! sends the description as a journaled call's input, so a replay or
//! another worker sees the same budget: spending is never reset.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use zr_types::{AgentId, AgentName, SessionId, Usage};

use crate::model::budget::TreeBudget;
use crate::outcome::TaskResult;

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
    /// Its parents, the root first (`[root]` for a subagent of the root).
    pub parents: Vec<AgentId>,
    /// Its parent's own description, when its parent is a subagent (the
    /// last of [`SubagentSpec::parents`]); `None` for a child of the root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<Box<SubagentSpec>>,
    /// What the query's tree budget had left when the task started: the
    /// subagent and its own subagents spend within it.
    #[serde(default, skip_serializing_if = "is_unset")]
    pub budget: TreeBudget,
    /// It runs in the background (`run_in_background`, or its type's
    /// `background: true`): its call returned at once, and its parent
    /// hears of its end in a message. The receiving worker builds it as a
    /// background agent (its pool, its permission prompts denied).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub background: bool,
    /// The session it belongs to (a local session's remote agents are
    /// keyed by it on the server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionId>,
    /// Its type says `isolation: remote`: it must run elsewhere, and the
    /// engine fails its task when the effects do not run it there.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub remote: bool,
}

fn is_unset(budget: &TreeBudget) -> bool {
    !budget.is_set()
}

/// How a subagent run from its description ended: its result, and what
/// its whole subtree (itself and the subagents under it) spent, for its
/// parent's query total and tree budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RemoteEnd {
    /// The subagent's result.
    pub result: TaskResult,
    /// The tokens of every request of its subtree.
    #[serde(default)]
    pub usage: Usage,
    /// What those requests cost in US dollars (models without a price
    /// count as nothing).
    #[serde(default)]
    pub cost_usd: f64,
}

impl SubagentSpec {
    /// Its ancestors' descriptions from the top (a child of the root
    /// first), itself last.
    pub(crate) fn lineage(&self) -> Vec<&SubagentSpec> {
        let mut chain = vec![self];
        let mut at = self;
        while let Some(parent) = &at.parent {
            chain.push(parent);
            at = parent;
        }
        chain.reverse();
        chain
    }

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
