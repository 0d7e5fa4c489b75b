//! Cutting oversized tool results: the model gets the head and the tail
//! with a marker saying how much was cut and which file holds the whole
//! result; nothing is ever cut silently.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use zr_types::{AgentId, SessionId, ToolCall, ToolOutput, ToolResultContent};

/// The folder where a session's oversized tool results are written in full:
/// `<sessions_dir>/<session>/tool-results` (kept), or without a sessions
/// folder a private temporary folder, removed when the session ends.
#[derive(Debug)]
pub(crate) struct Spill {
    dir: PathBuf,
    temporary: bool,
    /// Whether `dir` exists yet (made at the first write).
    made: Mutex<bool>,
    seq: AtomicU64,
}

impl Spill {
    pub(crate) fn new(session: &SessionId, sessions_dir: Option<&Path>) -> Self {
        let (dir, temporary) = match sessions_dir {
            Some(dir) => (dir.join(session.as_str()).join("tool-results"), false),
            None => (
                std::env::temp_dir().join(format!(
                    "zr-{}-{:08x}-tool-results",
                    session.as_str(),
                    fastrand::u32(..)
                )),
                true,
            ),
        };
        Self {
            dir,
            temporary,
            made: Mutex::new(false),
            seq: AtomicU64::new(0),
        }
    }

    /// The folder the results are written in (made at the first write).
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes `bytes` to a new file named after the agent and the call;
    /// returns its path. Blocking.
    pub(super) fn write(
        &self,
        agent: &AgentId,
        call_id: &str,
        bytes: &[u8],
    ) -> std::io::Result<PathBuf> {
        self.make_dir()?;
        let call: String = call_id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(64)
            .collect();
        // A resumed session numbers from 1 again, and some providers
        // repeat call ids across processes: a number whose file exists is
        // skipped, never written over.
        let (path, mut file) = loop {
            let seq = self.seq.fetch_add(1, Ordering::Relaxed) + 1;
            let path = self.dir.join(format!("{agent}-{seq}-{call}.txt"));
            match fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(file) => break (path, file),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
        };
        file.write_all(bytes)?;
        file.flush()?;
        Ok(path)
    }

    fn make_dir(&self) -> std::io::Result<()> {
        // Held only for the synchronous creation, never across an await.
        let mut made = crate::sync::lock(&self.made);
        if *made {
            return Ok(());
        }
        if self.temporary {
            // A new folder only for us (an existing one is an error: in a
            // shared temporary folder it might be someone else's), private.
            let mut builder = fs::DirBuilder::new();
            #[cfg(unix)]
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
            builder.create(&self.dir)?;
        } else {
            fs::create_dir_all(&self.dir)?;
        }
        *made = true;
        Ok(())
    }
}

impl Drop for Spill {
    fn drop(&mut self) {
        let made = *self
            .made
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if self.temporary
            && made
            && let Err(error) = fs::remove_dir_all(&self.dir)
        {
            tracing::warn!(dir = %self.dir.display(), %error, "could not remove the session's tool-result folder");
        }
    }
}

/// Cuts `output` to the session's `max_tool_result_bytes` when its text
/// (text blocks and JSON as compact text, joined by newlines) is longer:
/// the whole text goes to a file of `spill` and the model
/// gets one text block (head, marker, tail) followed by the result's
/// images. The marker is also appended to the `display`, so the host's
/// `ToolCallFinished` says the result was cut.
pub(crate) async fn limit_result(
    spill: &Arc<Spill>,
    limit: Option<usize>,
    agent: &AgentId,
    call: &ToolCall,
    output: ToolOutput,
) -> ToolOutput {
    let Some(limit) = limit else {
        return output;
    };
    // The bound is a walk of the values; the exact length, which writes
    // every byte's escape, only when the bound is over the limit.
    if text_len_bound(&output.content) <= limit || text_len(&output.content) <= limit {
        return output;
    }
    let full = text_of(&output.content);
    let (head, tail) = cut(&full, limit);
    let (head, tail) = (head.to_owned(), tail.to_owned());
    let total = full.len();
    let lines = full.lines().count();
    let spill = Arc::clone(spill);
    let (agent_id, call_id) = (agent.clone(), call.id.clone());
    let saved = tokio::task::spawn_blocking(move || {
        spill
            .write(&agent_id, &call_id, full.as_bytes())
            .map_err(|e| e.to_string())
    })
    .await
    .unwrap_or_else(|e| Err(format!("the writer stopped: {e}")));
    let kept = head.len() + tail.len();
    let saved = saved.as_ref().map(PathBuf::as_path).map_err(String::as_str);
    let note = marker(total - kept, total, lines, saved);
    tracing::info!(tool = %call.name, call_id = %call.id, total, kept, "tool result cut");
    let mut content = vec![ToolResultContent::Text {
        text: format!("{head}\n{note}\n{tail}"),
    }];
    content.extend(
        output
            .content
            .into_iter()
            .filter(|c| matches!(c, ToolResultContent::Image { .. })),
    );
    ToolOutput {
        content,
        is_error: output.is_error,
        display: output.display.map(|d| format!("{d}\n{note}")),
    }
}

/// What the model reads in place of the cut part.
pub(crate) fn marker(cut: usize, total: usize, lines: usize, saved: Result<&Path, &str>) -> String {
    match saved {
        Ok(path) => format!(
            "[... cut {cut} of {total} bytes here; the full output ({lines} lines) is in {}: read it with Read (offset and limit, a few hundred lines at a time) or search it with Grep ...]",
            path.display()
        ),
        Err(error) => format!(
            "[... cut {cut} of {total} bytes here; the full output could not be saved ({error}) ...]"
        ),
    }
}

/// The length of `value` as compact JSON, without making the text.
pub(crate) fn json_len<T: serde::Serialize + ?Sized>(value: &T) -> usize {
    /// Counts what JSON serialization writes.
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing to a counter cannot fail; a value that cannot be serialized
    // counts what was written before it failed.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// The length of [`text_of`], without making the text: every result of
/// every call is measured, a MultiTask call's JSON of ten results too, and
/// nearly all are within the limit.
pub(crate) fn text_len(content: &[ToolResultContent]) -> usize {
    let mut parts = 0_usize;
    let mut len = 0;
    for c in content {
        len += match c {
            ToolResultContent::Text { text } => text.len(),
            ToolResultContent::Json { value } => json_len(value),
            ToolResultContent::Image { .. } => continue,
        };
        parts += 1;
    }
    len + parts.saturating_sub(1)
}

/// At least [`text_len`], without serializing: a MultiTask call's JSON of
/// ten results is far below any limit, and its exact length would cost as
/// much as printing it.
pub(crate) fn text_len_bound(content: &[ToolResultContent]) -> usize {
    let mut parts = 0_usize;
    let mut len = 0_usize;
    for c in content {
        len = len.saturating_add(match c {
            ToolResultContent::Text { text } => text.len(),
            ToolResultContent::Json { value } => json_len_bound(value),
            ToolResultContent::Image { .. } => continue,
        });
        parts += 1;
    }
    len.saturating_add(parts.saturating_sub(1))
}

/// At least [`json_len`] of `value`: a string's byte is at most six bytes
/// escaped (`\u001f`), a number at most 24 characters, and every array
/// or object's separators are counted once per element.
pub(crate) fn json_len_bound(value: &serde_json::Value) -> usize {
    use serde_json::Value;
    let string = |s: &str| s.len().saturating_mul(6).saturating_add(2);
    match value {
        Value::Null | Value::Bool(_) => 5,
        Value::Number(_) => 24,
        Value::String(s) => string(s),
        Value::Array(items) => items
            .iter()
            .fold(2 + items.len(), |n, v| n.saturating_add(json_len_bound(v))),
        Value::Object(map) => map.iter().fold(2 + 2 * map.len(), |n, (k, v)| {
            n.saturating_add(string(k))
                .saturating_add(json_len_bound(v))
        }),
    }
}

/// The text of a result: text blocks, and JSON as compact text, joined by
/// newlines; images are not counted.
pub(crate) fn text_of(content: &[ToolResultContent]) -> String {
    let parts: Vec<String> = content
        .iter()
        .filter_map(|c| match c {
            ToolResultContent::Text { text } => Some(text.clone()),
            ToolResultContent::Json { value } => Some(value.to_string()),
            ToolResultContent::Image { .. } => None,
        })
        .collect();
    parts.join("\n")
}

/// The head and the tail of `text` that together hold at most `limit`
/// bytes (two thirds head, one third tail), cut on character boundaries,
/// and on line boundaries when one lies in the second half of the head's
/// share (the first half of the tail's). `text` is longer than `limit`.
pub(crate) fn cut(text: &str, limit: usize) -> (&str, &str) {
    let tail_share = limit / 3;
    let head_share = limit - tail_share;
    let mut head_end = floor_boundary(text, head_share);
    if let Some(newline) = text[..head_end].rfind('\n')
        && newline + 1 >= head_share / 2
    {
        head_end = newline + 1;
    }
    let tail_from = text.len().saturating_sub(tail_share).max(head_end);
    let mut tail_start = ceil_boundary(text, tail_from);
    if let Some(newline) = text[tail_start..].find('\n')
        && newline < tail_share / 2
    {
        tail_start += newline + 1;
    }
    (&text[..head_end], &text[tail_start..])
}

/// The largest character boundary at or before `at`.
fn floor_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The smallest character boundary at or after `at`.
fn ceil_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}
