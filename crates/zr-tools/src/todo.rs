//! `TodoWrite`: each agent's own todo list, replaced whole on each call and
//! returned in full.

use std::fmt::Write as _;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use zr_types::{BoxFuture, BuiltinName, ToolContext, ToolError, ToolOutput};

use crate::state::{AgentKey, AgentStates};
use crate::toolkit::{Builtin, Hints};

/// Items a list may hold.
pub(crate) const MAX_TODOS: usize = 100;

/// The state of a todo item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
}

/// One item of an agent's todo list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodoItem {
    /// What to do, in the imperative ("Run the tests").
    pub content: String,
    /// Its state.
    pub status: TodoStatus,
    /// The same in the present continuous ("Running the tests"), shown while in progress.
    #[serde(
        rename = "activeForm",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub active_form: Option<String>,
}

/// TodoWrite's per-agent state: the agent's list.
#[derive(Debug, Default)]
pub(crate) struct TodoList {
    /// The items, as last written.
    pub(crate) items: Vec<TodoItem>,
}

/// Input of `TodoWrite`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TodoWriteInput {
    /// The whole updated list; it replaces the previous one.
    todos: Vec<TodoItem>,
}

/// The `TodoWrite` tool.
#[derive(Debug)]
pub(crate) struct TodoWriteTool {
    states: Arc<AgentStates<TodoList>>,
}

impl TodoWriteTool {
    pub(crate) fn new(states: Arc<AgentStates<TodoList>>) -> Self {
        Self { states }
    }
}

/// The list as the model sees it.
pub(crate) fn render(todos: &[TodoItem]) -> String {
    if todos.is_empty() {
        return "The todo list is now empty.".to_owned();
    }
    let count = |s| todos.iter().filter(|t| t.status == s).count();
    let mut text = format!(
        "Todo list ({} items: {} completed, {} in progress, {} pending):\n",
        todos.len(),
        count(TodoStatus::Completed),
        count(TodoStatus::InProgress),
        count(TodoStatus::Pending)
    );
    for (i, t) in todos.iter().enumerate() {
        let mark = match t.status {
            TodoStatus::Pending => "[ ]",
            TodoStatus::InProgress => "[>]",
            TodoStatus::Completed => "[x]",
        };
        let _ = writeln!(text, "{}. {mark} {}", i + 1, t.content);
    }
    text
}

impl Builtin for TodoWriteTool {
    type Input = TodoWriteInput;
    const NAME: BuiltinName = BuiltinName::TodoWrite;
    const HINTS: Hints = Hints::local_change(false, true);

    fn details(&self) -> String {
        format!(
            "Send the whole list every time (it replaces the previous one): each item has `content`, `status` (pending, in_progress or completed) and optionally `activeForm`. Keep one item in_progress at a time and mark items completed as soon as they are done. The list is this agent's alone; the full list is returned after each change. At most {MAX_TODOS} items."
        )
    }

    fn run<'a>(
        &'a self,
        input: TodoWriteInput,
        ctx: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            if input.todos.len() > MAX_TODOS {
                return Ok(ToolOutput::error(format!(
                    "TodoWrite: {} items; at most {MAX_TODOS} are kept. Merge or drop some.",
                    input.todos.len()
                )));
            }
            if let Some(i) = input.todos.iter().position(|t| t.content.trim().is_empty()) {
                return Ok(ToolOutput::error(format!(
                    "TodoWrite: item {} (todos[{i}]) has an empty `content`.",
                    i + 1
                )));
            }
            let text = render(&input.todos);
            let display = text.clone();
            self.states
                .with(&AgentKey::of(&ctx), |s| s.items = input.todos);
            Ok(ToolOutput::text(text).with_display(display))
        })
    }
}
