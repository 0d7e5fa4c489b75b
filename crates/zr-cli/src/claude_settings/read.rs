//! Reading one settings file into the merged settings: every key zr
//! uses checked with its position, Claude Code's other keys listed,
//! unknown ones warned about.

use serde_json::Value;
use zr_caps::{PermissionMode, PermissionRule};

use super::keys::{self, CLAUDE_CODE_KEYS};
use super::positions::{Positions, step};
use super::{
    ClaudeSettings, LATER_EVENTS, Located, Origin, RUN_EVENTS, SHAPE, Scope, SettingsHooks,
    USED_KEYS,
};
use crate::config::{HookCommand, HookGroup};
use crate::error::CliError;

/// One file being read into the merged settings.
pub(super) struct FileReader<'a> {
    pub(super) path: &'a std::path::Path,
    pub(super) scope: Scope,
    pub(super) positions: Positions,
    pub(super) errors: Vec<CliError>,
    /// Warnings with their line and column, sorted when the file is read.
    pub(super) warnings: Vec<((usize, usize), String)>,
    pub(super) into: &'a mut ClaudeSettings,
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

    pub(super) fn read(&mut self, text: &str) {
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
            let Some(text) = crate::claude_names::rule_text(&entry) else {
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
                    if let Err(e) = crate::hook_matcher::Matcher::parse(Some(text)) {
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
