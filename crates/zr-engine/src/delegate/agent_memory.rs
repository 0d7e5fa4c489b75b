//! An agent type's persistent memory (the agent file's `memory`, Claude
//! Code's agent memory): a folder per scope
//! ([`MemoryScope::folder`](zr_caps::MemoryScope::folder)), whose
//! `MEMORY.md` (its first [`MEMORY_LINES`] lines, at most [`MEMORY_BYTES`]
//! bytes) is put into the agent's system prompt when it starts, and which
//! the agent may write: the folder is one of its writable roots
//! (`boundary.rs`), for that agent only. Another agent writing there
//! crosses its boundary (the folders lie beneath the protected `.claude`
//! folders), and a path that leaves the folder (`../`) is judged where it
//! lands.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use zr_caps::AgentDefinition;

/// How many lines of `MEMORY.md` the prompt holds (Claude Code's 200).
pub(crate) const MEMORY_LINES: usize = 200;
/// How many bytes of `MEMORY.md` the prompt holds at most.
pub(crate) const MEMORY_BYTES: usize = 25_000;

/// The memory folder of an agent of `definition` in a session whose
/// project folder is `project` and user's home `home`; `None` without
/// memory (or the user scope without a home folder).
pub(crate) fn folder(
    definition: &AgentDefinition,
    project: &Path,
    home: Option<&Path>,
) -> Option<PathBuf> {
    definition.memory?.folder(project, home, &definition.name)
}

/// `system` followed by the memory section of `folder`, if any (one copy
/// for an agent that starts and one that resumes).
pub(crate) fn with_section(system: Arc<str>, folder: Option<&Path>) -> Arc<str> {
    match folder {
        Some(folder) => Arc::from(format!("{system}\n\n{}", section(folder))),
        None => system,
    }
}

/// The system prompt's memory section for `folder`: where it is, how to
/// use it, and the first lines of its `MEMORY.md` as they are now.
pub(crate) fn section(folder: &Path) -> String {
    let memory = read_head(&folder.join("MEMORY.md"));
    let shown = match &memory {
        Some(text) if !text.trim().is_empty() => text.trim_end(),
        _ => "(empty: nothing remembered yet)",
    };
    format!(
        "# Your memory\n\nYou have a persistent memory folder, kept across sessions: {}. \
         Read and write files there (Read, Write, Edit) to remember what you learn for next time; \
         keep MEMORY.md as its index, short: its first {MEMORY_LINES} lines are shown to you \
         at every start. Move details into other files of the folder.\n\nMEMORY.md:\n{shown}",
        folder.display()
    )
}

/// The first [`MEMORY_LINES`] lines of `path`, at most [`MEMORY_BYTES`]
/// bytes (cut at a character boundary); `None` when it cannot be read.
fn read_head(path: &Path) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    let mut bytes = Vec::new();
    file.take(MEMORY_BYTES as u64 + 4)
        .read_to_end(&mut bytes)
        .ok()?;
    bytes.truncate(MEMORY_BYTES);
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).unwrap_or_default()
        }
    };
    Some(
        text.split_inclusive('\n')
            .take(MEMORY_LINES)
            .collect::<String>(),
    )
}

#[cfg(test)]
mod tests;
