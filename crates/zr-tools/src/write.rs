//! `Write`: creates or overwrites a file; overwriting needs a prior `Read`
//! of the same file by the same agent in this session.

use std::path::Path;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use zr_types::{Access, BoxFuture, BuiltinName, ToolContext, ToolError, ToolOutput};

use crate::ledger::{FileStamp, ReadLedger, check_fresh};
use crate::path::resolve;
use crate::state::{AgentKey, AgentStates};
use crate::toolkit::{Builtin, Hints};

/// Input of `Write`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WriteInput {
    /// The file to write; relative paths are resolved against the working directory.
    file_path: String,
    /// The whole new content of the file.
    content: String,
}

/// The `Write` tool.
#[derive(Debug)]
pub(crate) struct WriteTool {
    states: Arc<AgentStates<ReadLedger>>,
}

impl WriteTool {
    pub(crate) fn new(states: Arc<AgentStates<ReadLedger>>) -> Self {
        Self { states }
    }
}

impl Builtin for WriteTool {
    type Input = WriteInput;
    const NAME: BuiltinName = BuiltinName::Write;
    const HINTS: Hints = Hints::local_change(true, true);

    fn details(&self) -> String {
        "Writes `content` as the whole file, creating missing parent folders. An existing file is overwritten only if you have read it with Read in this session and it has not changed since; otherwise the call is refused. Prefer Edit for changes to existing files.".to_owned()
    }

    fn access(input: &Self::Input, cwd: &Path) -> Vec<Access> {
        vec![Access::Write(resolve(cwd, &input.file_path))]
    }

    fn run<'a>(
        &'a self,
        input: WriteInput,
        ctx: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            if input.file_path.is_empty() {
                return Ok(ToolOutput::error("Write: `file_path` is empty."));
            }
            let path = resolve(&ctx.cwd, &input.file_path);
            let key = AgentKey::of(&ctx);
            let existed = match tokio::fs::metadata(&path).await {
                Ok(meta) if meta.is_dir() => {
                    return Ok(ToolOutput::error(format!(
                        "Write: {} is a directory; give a file path.",
                        path.display()
                    )));
                }
                Ok(meta) => {
                    if let Err(msg) =
                        check_fresh("Write", &path, self.states.read_stamp(&key, &path), &meta)
                    {
                        return Ok(ToolOutput::error(msg));
                    }
                    true
                }
                Err(_) => {
                    // A dangling link: writing would create its target,
                    // somewhere other than the path the model named.
                    if let Ok(meta) = tokio::fs::symlink_metadata(&path).await
                        && meta.is_symlink()
                    {
                        let target = match tokio::fs::read_link(&path).await {
                            Ok(t) => t.display().to_string(),
                            Err(e) => format!("an unreadable target ({e})"),
                        };
                        return Ok(ToolOutput::error(format!(
                            "Write: {} is a symbolic link to {target}, which does not exist (or cannot be resolved); nothing was written. Write to the target path itself, or to another path.",
                            path.display()
                        )));
                    }
                    false
                }
            };
            if let Some(parent) = path.parent()
                && let Err(e) = tokio::fs::create_dir_all(parent).await
            {
                return Ok(ToolOutput::error(format!(
                    "Write: cannot create the folder {}: {e}",
                    parent.display()
                )));
            }
            if let Err(e) = tokio::fs::write(&path, input.content.as_bytes()).await {
                return Ok(ToolOutput::error(format!(
                    "Write: cannot write {}: {e}",
                    path.display()
                )));
            }
            if let Ok(meta) = tokio::fs::metadata(&path).await {
                self.states.record_read(&key, &path, FileStamp::of(&meta));
            }
            let lines = input.content.lines().count();
            let verb = if existed { "Overwrote" } else { "Created" };
            Ok(ToolOutput::text(format!(
                "{verb} {} ({lines} lines, {} bytes).",
                path.display(),
                input.content.len()
            )))
        })
    }
}
