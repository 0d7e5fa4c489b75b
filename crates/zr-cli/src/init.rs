//! `zr init`: a project folder's files with commented defaults, an example
//! agent type and an example skill, and the agents folder's `README.md`
//! (the format, the folders and their precedence) and
//! `example.md.template` (DESIGN section 7's first-use files; zr-skills
//! holds their text).
//!
//! Files that exist are kept unless `--force` is given; `.gitignore` is
//! never overwritten, only missing entries are added to it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::cli::InitArgs;
use crate::error::CliError;
use crate::project::{CONFIG_FILE, MCP_FILE};

/// `zr.toml` as `zr init` writes it: every key, commented out, with its
/// default (`# key = value`) or an example (`# e.g. key = value`).
pub(crate) const CONFIG_TEMPLATE: &str = include_str!("init/zr.toml");
/// The example agent type.
pub(crate) const AGENT_TEMPLATE: &str = include_str!("init/reviewer.md");
/// The example skill.
pub(crate) const SKILL_TEMPLATE: &str = include_str!("init/SKILL.md");
/// `.mcp.json`: no servers (JSON has no comments; zr.toml's header shows
/// an example server).
pub(crate) const MCP_TEMPLATE: &str = "{\n  \"mcpServers\": {}\n}\n";
/// The example agent type's file.
pub(crate) const AGENT_FILE: &str = ".zr/agents/reviewer.md";
/// The example skill's file.
pub(crate) const SKILL_FILE: &str = ".zr/skills/release-notes/SKILL.md";
/// The agents folder's README.
pub(crate) const AGENTS_README_FILE: &str = ".zr/agents/README.md";
/// The agents folder's template (not an agent type until copied to `.md`).
pub(crate) const AGENTS_TEMPLATE_FILE: &str = ".zr/agents/example.md.template";
/// The sessions folder.
pub(crate) const SESSIONS_DIR: &str = ".zr/sessions/";
/// What `.gitignore` gets: what zr writes while it runs.
pub(crate) const GITIGNORE_ENTRIES: [&str; 3] =
    [".zr/sessions/", ".zr/worktrees/", ".zr/cron.json"];

/// What happened to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Created,
    Overwritten,
    Kept,
    Updated,
}

impl Outcome {
    fn word(self) -> &'static str {
        match self {
            Self::Created => "created",
            Self::Overwritten => "overwrote",
            Self::Kept => "kept",
            Self::Updated => "updated",
        }
    }
}

/// `zr init [--force]` in `dir` (`-C DIR`, else the current folder);
/// returns what to print: one line per file.
///
/// # Errors
///
/// [`CliError::Io`] naming the file or folder that could not be written.
pub(crate) fn init(dir: Option<&Path>, args: &InitArgs) -> Result<String, CliError> {
    let root = match dir {
        Some(dir) => dir.to_path_buf(),
        None => std::env::current_dir().map_err(|source| CliError::Io {
            action: "read the current folder",
            path: PathBuf::from("."),
            source,
        })?,
    };
    let mut lines = Vec::new();
    for (rel, text) in [
        (CONFIG_FILE, CONFIG_TEMPLATE),
        (MCP_FILE, MCP_TEMPLATE),
        (AGENT_FILE, AGENT_TEMPLATE),
        (AGENTS_README_FILE, zr_skills::AGENTS_README),
        (AGENTS_TEMPLATE_FILE, zr_skills::AGENTS_TEMPLATE),
        (SKILL_FILE, SKILL_TEMPLATE),
    ] {
        lines.push((write_file(&root, rel, text, args.force)?, rel));
    }
    lines.push((make_dir(&root, SESSIONS_DIR)?, SESSIONS_DIR));
    lines.push((gitignore(&root)?, ".gitignore"));

    let mut out = String::new();
    for (outcome, rel) in &lines {
        let _ = writeln!(out, "{:<9} {rel}", outcome.word());
    }
    if lines.iter().any(|(o, _)| *o == Outcome::Kept) && !args.force {
        out.push_str("Files that exist were kept; `zr init --force` overwrites them.\n");
    }
    out.push_str("Next: set ANTHROPIC_API_KEY or OPENAI_API_KEY, then `zr run \"PROMPT\"`.\n");
    Ok(out)
}

fn io_error(action: &'static str, path: PathBuf) -> impl FnOnce(std::io::Error) -> CliError {
    move |source| CliError::Io {
        action,
        path,
        source,
    }
}

/// Writes `text` to `root/rel` unless it exists (and `force` is off).
fn write_file(root: &Path, rel: &str, text: &str, force: bool) -> Result<Outcome, CliError> {
    let path = root.join(rel);
    let exists = std::fs::symlink_metadata(&path).is_ok();
    if exists && !force {
        return Ok(Outcome::Kept);
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io_error("create the folder", parent.into()))?;
    }
    std::fs::write(&path, text).map_err(io_error("write", path.clone()))?;
    Ok(if exists {
        Outcome::Overwritten
    } else {
        Outcome::Created
    })
}

fn make_dir(root: &Path, rel: &str) -> Result<Outcome, CliError> {
    let path = root.join(rel);
    if path.is_dir() {
        return Ok(Outcome::Kept);
    }
    std::fs::create_dir_all(&path).map_err(io_error("create the folder", path.clone()))?;
    Ok(Outcome::Created)
}

/// Adds the missing [`GITIGNORE_ENTRIES`] to `.gitignore` (never removes
/// or rewrites a line).
fn gitignore(root: &Path) -> Result<Outcome, CliError> {
    let path = root.join(".gitignore");
    let existing = match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(source) => return Err(io_error("read", path)(source)),
    };
    let text = existing.as_deref().unwrap_or("");
    let present = |entry: &str| {
        let bare = entry.trim_end_matches('/');
        text.lines().map(str::trim).any(|l| {
            let l = l.trim_start_matches('/');
            l == entry || l == bare
        })
    };
    let missing: Vec<&str> = GITIGNORE_ENTRIES
        .into_iter()
        .filter(|e| !present(e))
        .collect();
    if missing.is_empty() {
        return Ok(Outcome::Kept);
    }
    let mut new = text.to_owned();
    if !new.is_empty() && !new.ends_with('\n') {
        new.push('\n');
    }
    new.push_str("# zr: transcripts, worktrees and scheduled prompts\n");
    for entry in missing {
        new.push_str(entry);
        new.push('\n');
    }
    std::fs::write(&path, new).map_err(io_error("write", path.clone()))?;
    Ok(if existing.is_some() {
        Outcome::Updated
    } else {
        Outcome::Created
    })
}

#[cfg(test)]
mod tests;
