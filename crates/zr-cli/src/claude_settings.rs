//! Claude Code's settings files, read beside `zr.toml`:
//! `~/.claude/settings.json` (user), `.claude/settings.json` (project,
//! checked in) and `.claude/settings.local.json` (local, the user's own
//! for this project).
//!
//! What zr takes from them, merged with `zr.toml` by one precedence
//! (`zr config` shows the result and where each value comes from):
//!
//! - `permissions.allow`, `ask`, `deny`: the rules of every file and of
//!   `zr.toml` together, evaluated deny, then ask, then allow (so a deny
//!   anywhere wins), in Claude Code's grammar through zr-caps' rule model,
//!   each checked here with the file, line and column of its entry;
//! - `permissions.additionalDirectories`: every file's, added to
//!   `zr.toml`'s `additional_directories` (the boundary's places);
//! - `permissions.defaultMode`: the root's mode when `zr.toml` sets no
//!   `[permissions] mode`; of the files, local wins over project over
//!   user;
//! - `model`: the root's model on the Anthropic provider when neither the
//!   command line, `zr.toml` `[model] name` nor `ANTHROPIC_MODEL` names
//!   one (an alias such as `opus` is read through the model aliases);
//! - `env`: variables, local over project over user per name, set for
//!   every process zr starts (Bash and background commands, hooks, MCP
//!   servers) and read by zr itself before its own environment, as Claude
//!   Code applies them (`ANTHROPIC_BASE_URL`, `ANTHROPIC_AUTH_TOKEN`,
//!   `ANTHROPIC_MODEL`, `OTEL_*`, `${VAR}` in `.mcp.json`);
//! - `hooks`: Claude Code's shape, parsed into the same groups as
//!   `zr.toml`'s `[[hooks.EVENT]]` and run after them; events zr does not
//!   run yet are kept, with one warning each; `disableAllHooks: true` turns
//!   the settings files' hooks off.
//!
//! A mistake (bad JSON, a value of the wrong kind, a rule that does not
//! parse, a matcher that is no regular expression) is an error naming the
//! file, line, column and key, reported with `zr.toml`'s and
//! `.mcp.json`'s before anything runs. A key zr does not know is a warning
//! with the closest known name; Claude Code's own keys that zr does not
//! use (`statusLine`, `apiKeyHelper`, ...) are listed by `zr config` and
//! otherwise left alone.
//!
//! `read.rs` reads one file (every key with its position, from
//! `positions.rs`); `keys.rs` lists Claude Code's keys zr leaves alone.

mod keys;
mod positions;
mod read;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use zr_caps::{PermissionMode, PermissionRule};

use crate::config::{HookGroup, HooksConfig};
use crate::error::CliError;
use positions::Positions;
use read::FileReader;

/// Which settings file, lowest precedence first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Scope {
    /// `~/.claude/settings.json`.
    User,
    /// `.claude/settings.json`.
    Project,
    /// `.claude/settings.local.json`.
    Local,
}

impl Scope {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Project => "project",
            Self::Local => "local",
        }
    }
}

/// Where a value is written: file, line, column and key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Origin {
    pub(crate) path: PathBuf,
    pub(crate) scope: Scope,
    pub(crate) line: usize,
    pub(crate) column: usize,
    /// The dotted key (`permissions.allow[2]`).
    pub(crate) key: String,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.path.display(), self.line, self.column)
    }
}

/// A value and where it is written.
#[derive(Debug, Clone)]
pub(crate) struct Located<T> {
    pub(crate) value: T,
    pub(crate) origin: Origin,
}

/// One settings file looked for.
#[derive(Debug, Clone)]
pub(crate) struct SettingsFile {
    pub(crate) path: PathBuf,
    pub(crate) scope: Scope,
    pub(crate) found: bool,
}

/// A hook group of a settings file, for one event.
#[derive(Debug, Clone)]
pub(crate) struct SettingsHooks {
    /// The event (`PreToolUse`, `UserPromptSubmit`, ...).
    pub(crate) event: String,
    /// The group, in `zr.toml`'s shape (its commands of type `command`).
    pub(crate) group: HookGroup,
    pub(crate) origin: Origin,
}

/// The hook events zr runs.
pub(crate) const RUN_EVENTS: [&str; 10] = [
    "PreToolUse",
    "PostToolUse",
    "SubagentStart",
    "SubagentStop",
    "Stop",
    "UserPromptSubmit",
    "Notification",
    "SessionStart",
    "SessionEnd",
    "PreCompact",
];

/// Claude Code's hook events zr does not run yet: kept, with a warning.
pub(crate) const LATER_EVENTS: [&str; 3] = ["PermissionRequest", "PostToolUseFailure", "Setup"];

/// The three files, merged.
#[derive(Debug, Clone, Default)]
pub(crate) struct ClaudeSettings {
    /// Every file looked for, lowest precedence first.
    pub(crate) files: Vec<SettingsFile>,
    /// `permissions.allow` of every file, user first.
    pub(crate) allow: Vec<Located<PermissionRule>>,
    /// `permissions.ask`.
    pub(crate) ask: Vec<Located<PermissionRule>>,
    /// `permissions.deny`.
    pub(crate) deny: Vec<Located<PermissionRule>>,
    /// Every `allow`, `ask` and `deny` entry as written (the warnings
    /// about names that match no tool read them).
    pub(crate) rule_entries: Vec<Located<String>>,
    /// `permissions.additionalDirectories`.
    pub(crate) additional_directories: Vec<Located<String>>,
    /// `permissions.defaultMode` of each file that sets it (the last wins).
    pub(crate) default_mode: Vec<Located<PermissionMode>>,
    /// `model` of each file that sets it (the last wins).
    pub(crate) model: Vec<Located<String>>,
    /// `env` of each file, in file order (a later one wins per name).
    pub(crate) env: Vec<Located<(String, String)>>,
    /// `disableAllHooks` of each file that sets it (the last wins).
    pub(crate) disable_all_hooks: Vec<Located<bool>>,
    /// `hooks`, every group of every event, in file order.
    pub(crate) hooks: Vec<SettingsHooks>,
    /// Claude Code's keys that zr does not use.
    pub(crate) ignored: Vec<Located<String>>,
    /// Warnings to print once: unknown keys, events zr does not run yet,
    /// hooks of a type zr does not run, entries zr leaves out.
    pub(crate) warnings: Vec<String>,
}

/// The top-level keys zr uses.
const USED_KEYS: [&str; 5] = ["permissions", "env", "model", "hooks", "disableAllHooks"];

/// The largest settings file read.
const FILE_LIMIT: u64 = 4 * 1024 * 1024;

/// What the files hold, for help lines.
const SHAPE: &str = "the file holds {\"permissions\": {\"allow\": [\"Bash(npm run test:*)\"], \"deny\": [\"Read(./.env)\"]}, \"env\": {\"NAME\": \"value\"}, \"model\": \"sonnet\", \"hooks\": {\"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"...\"}]}]}}";

impl ClaudeSettings {
    /// Reads the settings files of the project at `root` and of the user
    /// whose home folder is `home`; a missing file is no settings.
    ///
    /// # Errors
    ///
    /// [`CliError::Config`] (or [`CliError::Several`]) naming the file,
    /// line, column and key of each mistake, every file read whatever the
    /// others hold.
    pub(crate) fn load(root: &Path, home: Option<&Path>) -> Result<Self, CliError> {
        let mut paths = Vec::new();
        if let Some(home) = home {
            paths.push((home.join(".claude/settings.json"), Scope::User));
        }
        paths.push((root.join(".claude/settings.json"), Scope::Project));
        paths.push((root.join(".claude/settings.local.json"), Scope::Local));
        let mut settings = Self::default();
        let mut errors = Vec::new();
        let mut read: Vec<PathBuf> = Vec::new();
        for (path, scope) in paths {
            // The project folder may be the home folder: its settings are
            // then read once, as the user's.
            let real = std::fs::canonicalize(&path).ok();
            if real.as_ref().is_some_and(|r| read.contains(r)) {
                continue;
            }
            let text = match zr_tools::read_regular_to_string(&path, FILE_LIMIT) {
                Ok(text) => text,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    settings.files.push(SettingsFile {
                        path,
                        scope,
                        found: false,
                    });
                    continue;
                }
                Err(source) => {
                    errors.push(crate::config::unreadable(&path, &source));
                    continue;
                }
            };
            read.extend(real);
            settings.files.push(SettingsFile {
                path: path.clone(),
                scope,
                found: true,
            });
            let mut file = FileReader {
                path: &path,
                scope,
                positions: Positions::default(),
                errors: Vec::new(),
                warnings: Vec::new(),
                into: &mut settings,
            };
            file.read(&text);
            // In the file's order (the parsed object's keys are sorted).
            file.errors.sort_by_key(|e| match e {
                CliError::Config { line, column, .. } => (*line, *column),
                _ => (0, 0),
            });
            file.warnings.sort_by_key(|(at, _)| *at);
            let warnings: Vec<String> = file.warnings.drain(..).map(|(_, w)| w).collect();
            errors.append(&mut file.errors);
            settings.warnings.extend(warnings);
        }
        CliError::all(errors)?;
        settings
            .ignored
            .sort_by_key(|k| (k.origin.scope, k.origin.line, k.origin.column));
        Ok(settings)
    }

    /// The permission mode the files set (the last file's).
    pub(crate) fn mode(&self) -> Option<&Located<PermissionMode>> {
        self.default_mode.last()
    }

    /// The model the files set (the last file's).
    pub(crate) fn model(&self) -> Option<&Located<String>> {
        self.model.last()
    }

    /// The variables of `env`, a later file's value winning per name.
    pub(crate) fn env(&self) -> BTreeMap<String, &Located<(String, String)>> {
        self.env
            .iter()
            .map(|entry| (entry.value.0.clone(), entry))
            .collect()
    }

    /// The value the files give the variable `name`.
    pub(crate) fn var(&self, name: &str) -> Option<String> {
        self.env
            .iter()
            .rev()
            .find(|e| e.value.0 == name)
            .map(|e| e.value.1.clone())
    }

    /// Whether `disableAllHooks` turns the files' hooks off.
    pub(crate) fn hooks_disabled(&self) -> bool {
        self.disable_all_hooks.last().is_some_and(|d| d.value)
    }

    /// `zr.toml`'s hooks followed by the files' groups of the events zr
    /// runs (none when `disableAllHooks` is set).
    pub(crate) fn add_hooks(&self, hooks: &HooksConfig) -> HooksConfig {
        let mut all = hooks.clone();
        if self.hooks_disabled() {
            return all;
        }
        for entry in &self.hooks {
            let list = match entry.event.as_str() {
                "PreToolUse" => &mut all.pre_tool_use,
                "PostToolUse" => &mut all.post_tool_use,
                "SubagentStart" => &mut all.subagent_start,
                "SubagentStop" => &mut all.subagent_stop,
                "Stop" => &mut all.stop,
                "UserPromptSubmit" => &mut all.user_prompt_submit,
                "Notification" => &mut all.notification,
                "SessionStart" => &mut all.session_start,
                "SessionEnd" => &mut all.session_end,
                "PreCompact" => &mut all.pre_compact,
                _ => continue,
            };
            if !entry.group.hooks.is_empty() {
                list.push(entry.group.clone());
            }
        }
        all
    }
}

#[cfg(test)]
mod tests;
