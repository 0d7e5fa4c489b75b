//! Shared helpers: a tool kit in a temp folder, calls, process checks.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tempfile::TempDir;
use zr_tools::BuiltinTools;
use zr_types::{
    AgentId, SessionId, ToolCall, ToolContext, ToolHandler, ToolOutput, ToolResultContent,
};

pub(crate) struct Kit {
    pub(crate) tools: BuiltinTools,
    pub(crate) handlers: HashMap<String, Arc<dyn ToolHandler>>,
    pub(crate) dir: TempDir,
}

impl Kit {
    pub(crate) fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let tools = BuiltinTools::new(dir.path().join("state/cron.json"));
        Self::with(tools, dir)
    }

    pub(crate) fn with(tools: BuiltinTools, dir: TempDir) -> Self {
        let handlers = tools
            .tools()
            .into_iter()
            .map(|(d, h)| (d.name.as_str().to_owned(), h))
            .collect();
        Self {
            tools,
            handlers,
            dir,
        }
    }

    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub(crate) fn write(&self, rel: &str, content: &str) -> PathBuf {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, content).unwrap();
        p
    }

    /// Writes `rel` on disk, then reads it with `Read` as the root agent
    /// (so `Write` and `Edit` may change it).
    pub(crate) async fn read_then(&self, rel: &str, content: &str) -> PathBuf {
        let p = self.write(rel, content);
        self.call_read(rel).await;
        p
    }

    /// Calls `Read` on `rel` as the root agent.
    pub(crate) async fn call_read(&self, rel: &str) -> ToolOutput {
        self.call("Read", json!({"file_path": rel})).await
    }

    /// Calls `Write` with `content` for `rel` as the root agent.
    pub(crate) async fn call_write(&self, rel: &str, content: &str) -> ToolOutput {
        self.call("Write", json!({"file_path": rel, "content": content}))
            .await
    }

    /// Calls `Edit` replacing `old` by `new` in `rel` as the root agent.
    pub(crate) async fn call_edit(&self, rel: &str, old: &str, new: &str) -> ToolOutput {
        self.call(
            "Edit",
            json!({"file_path": rel, "old_string": old, "new_string": new}),
        )
        .await
    }

    pub(crate) fn ctx(&self) -> ToolContext {
        ctx_for(self.dir.path(), AgentId::root())
    }

    pub(crate) async fn call(&self, tool: &str, input: Value) -> ToolOutput {
        self.call_as(tool, input, self.ctx()).await
    }

    pub(crate) async fn call_as(&self, tool: &str, input: Value, ctx: ToolContext) -> ToolOutput {
        let handler = &self.handlers[tool];
        let call = ToolCall {
            id: "toolu_test".to_owned(),
            name: tool.to_owned(),
            input,
        };
        handler.call(&call, ctx).await.unwrap()
    }
}

pub(crate) fn session() -> SessionId {
    SessionId::from_parts(0x18c_0000_0000, 0xdead_beef)
}

pub(crate) fn ctx_for(cwd: &Path, agent: AgentId) -> ToolContext {
    let mut env = BTreeMap::new();
    env.insert("PATH".to_owned(), "/usr/bin:/bin".to_owned());
    env.insert("ZR_VISIBLE".to_owned(), "yes".to_owned());
    ToolContext::new(session(), agent, cwd.to_path_buf(), env)
}

/// The text of a result (all text blocks joined).
pub(crate) fn text(out: &ToolOutput) -> String {
    out.content
        .iter()
        .filter_map(|c| match c {
            ToolResultContent::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Asserts that `out` is an error result whose text contains `needle`.
#[track_caller]
pub(crate) fn assert_error(out: &ToolOutput, needle: &str) {
    let t = text(out);
    assert!(out.is_error, "expected an error result, got: {t}");
    assert!(t.contains(needle), "{needle:?} is not in: {t}");
}

/// Whether a process is alive (exists and is not a zombie).
pub(crate) fn alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let state = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.trim_start().chars().next());
    !matches!(state, Some(Some('Z' | 'X')) | None)
}

/// Waits up to `limit` for `pid` to die.
pub(crate) async fn dies_within(pid: u32, limit: Duration) -> bool {
    let end = tokio::time::Instant::now() + limit;
    while tokio::time::Instant::now() < end {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    !alive(pid)
}

/// Waits up to `limit` for a file holding a pid, and returns the pid.
pub(crate) async fn pid_from(path: &Path, limit: Duration) -> u32 {
    let end = tokio::time::Instant::now() + limit;
    loop {
        if let Ok(s) = std::fs::read_to_string(path)
            && let Ok(pid) = s.trim().parse()
        {
            return pid;
        }
        assert!(
            tokio::time::Instant::now() < end,
            "no pid in {}",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
