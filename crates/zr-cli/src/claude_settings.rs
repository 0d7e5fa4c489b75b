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

mod keys;
mod positions;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;
use zr_caps::{PermissionMode, PermissionRule};

use crate::config::{HookCommand, HookGroup, HooksConfig};
use crate::error::CliError;
use positions::{Positions, step};

pub(crate) use keys::CLAUDE_CODE_KEYS;

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
pub(crate) const RUN_EVENTS: [&str; 5] = [
    "PreToolUse",
    "PostToolUse",
    "SubagentStart",
    "SubagentStop",
    "Stop",
];

/// Claude Code's hook events zr does not run yet: kept, with a warning.
pub(crate) const LATER_EVENTS: [&str; 8] = [
    "UserPromptSubmit",
    "Notification",
    "SessionStart",
    "SessionEnd",
    "PreCompact",
    "PermissionRequest",
    "PostToolUseFailure",
    "Setup",
];

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
                _ => continue,
            };
            if !entry.group.hooks.is_empty() {
                list.push(entry.group.clone());
            }
        }
        all
    }
}

/// One file being read into the merged settings.
struct FileReader<'a> {
    path: &'a Path,
    scope: Scope,
    positions: Positions,
    errors: Vec<CliError>,
    /// Warnings with their line and column, sorted when the file is read.
    warnings: Vec<((usize, usize), String)>,
    into: &'a mut ClaudeSettings,
}

/// A JSON pointer and the dotted key people read, built together.
#[derive(Debug, Clone, Default)]
struct At {
    pointer: String,
    key: String,
}

impl At {
    fn member(&self, name: &str) -> Self {
        Self {
            pointer: format!("{}/{}", self.pointer, step(name)),
            key: if self.key.is_empty() {
                name.to_owned()
            } else {
                format!("{}.{name}", self.key)
            },
        }
    }

    fn index(&self, i: usize) -> Self {
        Self {
            pointer: format!("{}/{i}", self.pointer),
            key: format!("{}[{i}]", self.key),
        }
    }
}

impl FileReader<'_> {
    fn origin(&self, at: &At) -> Origin {
        let (line, column) = self.positions.at(&at.pointer);
        Origin {
            path: self.path.to_path_buf(),
            scope: self.scope,
            line,
            column,
            key: at.key.clone(),
        }
    }

    fn error(&mut self, at: &At, message: impl Into<String>, help: impl Into<String>) {
        let (line, column) = self.positions.at(&at.pointer);
        self.errors.push(CliError::config(
            self.path,
            (line, column),
            at.key.clone(),
            message,
            help,
        ));
    }

    fn warn(&mut self, at: &At, message: impl Into<String>, help: impl Into<String>) {
        let (line, column) = self.positions.at(&at.pointer);
        let warning = CliError::config(self.path, (line, column), at.key.clone(), message, help);
        self.warnings
            .push(((line, column), format!("warning: {warning}")));
    }

    /// A value of the wrong kind.
    fn wrong(&mut self, at: &At, expected: &str, found: &Value, example: &str) {
        self.error(
            at,
            format!("expected {expected}, found {}", kind(found)),
            format!("write {example}; {SHAPE}"),
        );
    }

    fn read(&mut self, text: &str) {
        let value: Value = match serde_json::from_str(text) {
            Ok(value) => value,
            Err(source) => {
                let message = source.to_string();
                let message = message
                    .rsplit_once(" at line ")
                    .map_or(message.as_str(), |(m, _)| m)
                    .to_owned();
                self.errors.push(CliError::config(
                    self.path,
                    (source.line(), source.column()),
                    "",
                    format!("invalid JSON: {message}"),
                    format!("fix the JSON; {SHAPE}"),
                ));
                return;
            }
        };
        self.positions = Positions::of(text);
        let root = At::default();
        let Value::Object(map) = value else {
            self.wrong(&root, "an object", &value, "{...}");
            return;
        };
        for (name, value) in &map {
            let at = root.member(name);
            match name.as_str() {
                "permissions" => self.permissions(&at, value),
                "env" => self.env(&at, value),
                "model" => match value {
                    Value::String(model) if !model.trim().is_empty() => {
                        let origin = self.origin(&at);
                        self.into.model.push(Located {
                            value: model.trim().to_owned(),
                            origin,
                        });
                    }
                    other => self.wrong(&at, "a model name", other, "\"model\": \"sonnet\""),
                },
                "hooks" => self.hooks(&at, value),
                "disableAllHooks" => match value {
                    Value::Bool(off) => {
                        let origin = self.origin(&at);
                        self.into.disable_all_hooks.push(Located {
                            value: *off,
                            origin,
                        });
                    }
                    other => self.wrong(&at, "true or false", other, "\"disableAllHooks\": true"),
                },
                other => self.other_key(&at, other, &USED_KEYS, CLAUDE_CODE_KEYS),
            }
        }
    }

    /// A key zr does not use: Claude Code's (`known`) is listed as
    /// ignored; anything else is a warning with the closest name of
    /// `used` and `known`.
    fn other_key(&mut self, at: &At, name: &str, used: &[&str], known: &[&str]) {
        if known.contains(&name) || name == "$schema" {
            let origin = self.origin(at);
            self.into.ignored.push(Located {
                value: at.key.clone(),
                origin,
            });
            return;
        }
        let all: Vec<&str> = used.iter().chain(known).copied().collect();
        let help = match crate::config::closest(name, &all) {
            Some(best) => format!("did you mean `{best}`? zr leaves the key alone"),
            None => "neither zr nor Claude Code knows it; zr leaves it alone".to_owned(),
        };
        self.warn(at, format!("unknown key `{name}`"), help);
    }

    fn permissions(&mut self, at: &At, value: &Value) {
        const USED: [&str; 5] = [
            "allow",
            "ask",
            "deny",
            "additionalDirectories",
            "defaultMode",
        ];
        let Value::Object(map) = value else {
            self.wrong(
                at,
                "an object",
                value,
                "\"permissions\": {\"allow\": [...]}",
            );
            return;
        };
        for (name, value) in map {
            let at = at.member(name);
            match name.as_str() {
                "allow" | "ask" | "deny" => self.rules(&at, name, value),
                "additionalDirectories" => {
                    for (i, entry) in self.strings(&at, value, "[\"../shared\"]") {
                        let origin = self.origin(&at.index(i));
                        self.into.additional_directories.push(Located {
                            value: entry,
                            origin,
                        });
                    }
                }
                "defaultMode" => {
                    let Value::String(text) = value else {
                        self.wrong(
                            &at,
                            "a permission mode",
                            value,
                            "\"defaultMode\": \"acceptEdits\"",
                        );
                        continue;
                    };
                    match text.parse::<PermissionMode>() {
                        Ok(mode) => {
                            let origin = self.origin(&at);
                            self.into.default_mode.push(Located {
                                value: mode,
                                origin,
                            });
                        }
                        Err(_) => self.error(
                            &at,
                            format!("unknown permission mode \"{text}\""),
                            crate::config::suggest(
                                text,
                                &PermissionMode::ALL.map(PermissionMode::as_str),
                            ),
                        ),
                    }
                }
                other => self.other_key(&at, other, &USED, keys::PERMISSION_KEYS),
            }
        }
    }

    /// The strings of the list at `at`, with their indices (an error for
    /// each entry that is not one).
    fn strings(&mut self, at: &At, value: &Value, example: &str) -> Vec<(usize, String)> {
        let Value::Array(list) = value else {
            self.wrong(at, "a list", value, example);
            return Vec::new();
        };
        let mut out = Vec::new();
        for (i, entry) in list.iter().enumerate() {
            match entry {
                Value::String(text) => out.push((i, text.clone())),
                other => self.wrong(&at.index(i), "a string", other, example),
            }
        }
        out
    }

    fn rules(&mut self, at: &At, list: &str, value: &Value) {
        for (i, entry) in self.strings(at, value, "[\"Bash(npm run test:*)\", \"Read(./.env)\"]") {
            let at = at.index(i);
            let origin = self.origin(&at);
            self.into.rule_entries.push(Located {
                value: entry.clone(),
                origin,
            });
            let Some(text) = crate::permission_names::rule_text(&entry) else {
                // A Claude Code tool zr does not have: `zr config` and the
                // run's warnings say so (permission_names).
                continue;
            };
            match text.parse::<PermissionRule>() {
                Ok(rule) => {
                    let origin = self.origin(&at);
                    let located = Located {
                        value: rule,
                        origin,
                    };
                    match list {
                        "allow" => self.into.allow.push(located),
                        "ask" => self.into.ask.push(located),
                        _ => self.into.deny.push(located),
                    }
                }
                Err(e) => self.error(
                    &at,
                    format!("'{text}': {e}"),
                    "write a rule such as Bash, Bash(npm run test:*), Read(./.env), Edit(src/**), WebFetch(domain:docs.rs) or mcp__github",
                ),
            }
        }
    }

    fn env(&mut self, at: &At, value: &Value) {
        let Value::Object(map) = value else {
            self.wrong(at, "an object", value, "\"env\": {\"NAME\": \"value\"}");
            return;
        };
        for (name, value) in map {
            let at = at.member(name);
            let text = match value {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                other => {
                    self.wrong(&at, "a string", other, "\"NAME\": \"value\"");
                    continue;
                }
            };
            if name.is_empty() || name.contains('=') || name.contains('\0') || text.contains('\0') {
                self.error(
                    &at,
                    format!("'{name}' cannot be an environment variable"),
                    "use a name without '=' and values without NUL characters",
                );
                continue;
            }
            let origin = self.origin(&at);
            self.into.env.push(Located {
                value: (name.clone(), text),
                origin,
            });
        }
    }

    fn hooks(&mut self, at: &At, value: &Value) {
        let Value::Object(map) = value else {
            self.wrong(
                at,
                "an object of events",
                value,
                "\"hooks\": {\"PreToolUse\": [...]}",
            );
            return;
        };
        for (event, groups) in map {
            let at = at.member(event);
            let runs = RUN_EVENTS.contains(&event.as_str());
            let later = LATER_EVENTS.contains(&event.as_str());
            if !runs && !later {
                let known: Vec<&str> = RUN_EVENTS.iter().chain(&LATER_EVENTS).copied().collect();
                let help = match crate::config::closest(event, &known) {
                    Some(best) => format!("did you mean `{best}`? its hooks are left out"),
                    None => format!(
                        "its hooks are left out; the events are: {}",
                        known.join(", ")
                    ),
                };
                self.warn(&at, format!("unknown hook event `{event}`"), help);
                continue;
            }
            let Value::Array(list) = groups else {
                self.wrong(
                    &at,
                    "a list of groups",
                    groups,
                    "[{\"matcher\": \"Bash\", \"hooks\": [...]}]",
                );
                continue;
            };
            if later {
                self.warn(
                    &at,
                    format!("zr does not run {event} hooks yet"),
                    "they are kept and will run once zr has the event; `zr config` lists them",
                );
            }
            for (i, group) in list.iter().enumerate() {
                let at = at.index(i);
                if let Some(group) = self.hook_group(&at, group) {
                    let origin = self.origin(&at);
                    self.into.hooks.push(SettingsHooks {
                        event: event.clone(),
                        group,
                        origin,
                    });
                }
            }
        }
    }

    fn hook_group(&mut self, at: &At, value: &Value) -> Option<HookGroup> {
        let Value::Object(map) = value else {
            self.wrong(at, "a group", value, "{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"...\"}]}");
            return None;
        };
        let mut group = HookGroup::default();
        for (name, value) in map {
            let member = at.member(name);
            match (name.as_str(), value) {
                ("matcher", Value::String(text)) => {
                    if let Err(e) = crate::hooks::Matcher::parse(Some(text)) {
                        self.error(
                            &member,
                            format!("the matcher is not a regular expression: {e}"),
                            "write a tool name, names joined by |, a regular expression, or \"*\" for all",
                        );
                        return None;
                    }
                    group.matcher = Some(text.clone());
                }
                ("matcher", other) => {
                    self.wrong(&member, "a string", other, "\"matcher\": \"Bash\"");
                    return None;
                }
                ("hooks", Value::Array(list)) => {
                    for (j, hook) in list.iter().enumerate() {
                        if let Some(command) = self.hook_command(&member.index(j), hook) {
                            group.hooks.push(command);
                        }
                    }
                }
                ("hooks", other) => {
                    self.wrong(
                        &member,
                        "a list of hooks",
                        other,
                        "\"hooks\": [{\"type\": \"command\", \"command\": \"...\"}]",
                    );
                    return None;
                }
                (other, _) => self.other_key(&member, other, &["matcher", "hooks"], &[]),
            }
        }
        Some(group)
    }

    fn hook_command(&mut self, at: &At, value: &Value) -> Option<HookCommand> {
        let Value::Object(map) = value else {
            self.wrong(
                at,
                "a hook",
                value,
                "{\"type\": \"command\", \"command\": \"...\"}",
            );
            return None;
        };
        let kind = map.get("type").and_then(Value::as_str).unwrap_or_default();
        if kind != "command" {
            // Claude Code's `prompt` and `agent` hooks ask a model: zr runs
            // commands only.
            self.warn(
                &at.member("type"),
                format!("zr runs hooks of type \"command\"; this one (\"{kind}\") is left out"),
                "write it as a command, or keep it for Claude Code alone",
            );
            return None;
        }
        let command = match map.get("command") {
            Some(Value::String(c)) if !c.trim().is_empty() => c.clone(),
            Some(Value::String(_)) | None => {
                self.error(
                    &at.member("command"),
                    "the command is empty",
                    "give a shell command, e.g. \"command\": \".claude/hooks/check.sh\"",
                );
                return None;
            }
            Some(other) => {
                self.wrong(
                    &at.member("command"),
                    "a string",
                    other,
                    "\"command\": \"...\"",
                );
                return None;
            }
        };
        let timeout = match map.get("timeout") {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) => match n.as_f64() {
                Some(secs) if (1.0..=86_400.0).contains(&secs.ceil()) => Some(secs.ceil() as u64),
                _ => {
                    self.error(
                        &at.member("timeout"),
                        format!("must be from 1 to 86400 seconds, found {n}"),
                        "give the seconds the command may take, e.g. \"timeout\": 60",
                    );
                    return None;
                }
            },
            Some(other) => {
                self.wrong(
                    &at.member("timeout"),
                    "a number of seconds",
                    other,
                    "\"timeout\": 60",
                );
                return None;
            }
        };
        for name in map.keys() {
            if !["type", "command", "timeout"].contains(&name.as_str()) {
                self.other_key(
                    &at.member(name),
                    name,
                    &["type", "command", "timeout"],
                    keys::HOOK_KEYS,
                );
            }
        }
        Some(HookCommand {
            kind: "command".to_owned(),
            command,
            timeout,
        })
    }
}

/// What kind of JSON value `value` is, as messages say it.
fn kind(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("{b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => format!("the string \"{s}\""),
        Value::Array(_) => "a list".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}

#[cfg(test)]
mod tests;
