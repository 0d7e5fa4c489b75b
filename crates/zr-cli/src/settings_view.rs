//! `zr config`: the settings a run uses, `zr.toml` merged with Claude
//! Code's settings files, and where each value comes from (file, line and
//! column for the settings files; the table and key for `zr.toml`).
//!
//! Precedence, highest first: `zr.toml`'s explicit keys,
//! `.claude/settings.local.json`, `.claude/settings.json`,
//! `~/.claude/settings.json`. Permission rules, additional directories and
//! hooks of every source are used together (rules: deny, then ask, then
//! allow, so a deny anywhere wins; hooks: `zr.toml`'s first).

use serde_json::{Value, json};

use crate::claude_settings::{LATER_EVENTS, Origin};
use crate::cli::Format;
use crate::error::CliError;
use crate::project::Project;

/// One value and where it comes from, as shown.
#[derive(Debug, Default)]
struct Row {
    what: String,
    from: String,
}

/// Every section of `zr config`.
#[derive(Debug, Default)]
struct View {
    files: Vec<(String, &'static str, bool)>,
    model: Row,
    small: Row,
    mode: Row,
    mode_overridden: Vec<String>,
    rules: Vec<(&'static str, Row)>,
    directories: Vec<Row>,
    env: Vec<Row>,
    hooks: Vec<(bool, Row)>,
    ignored: Vec<Row>,
}

/// `FILE:LINE:COLUMN KEY`, the file as the inspecting commands show it.
fn at(project: &Project, origin: &Origin) -> String {
    format!(
        "{}:{}:{} {}",
        crate::inspect::shown(project, &origin.path),
        origin.line,
        origin.column,
        origin.key
    )
}

/// Whether a variable's value is a secret to hide (`..._KEY`,
/// `..._TOKEN`, `..._SECRET`, `..._PASSWORD`).
fn secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["KEY", "TOKEN", "SECRET", "PASSWORD", "AUTH"]
        .iter()
        .any(|s| upper.contains(s))
}

fn view(project: &Project) -> Result<View, CliError> {
    let s = &project.settings;
    let file = &project.config;
    let mut view = View::default();
    for f in &s.files {
        view.files.push((
            crate::inspect::shown(project, &f.path),
            f.scope.as_str(),
            f.found,
        ));
    }
    view.files.push((
        crate::project::CONFIG_FILE.to_owned(),
        "zr",
        project.root.join(crate::project::CONFIG_FILE).is_file(),
    ));

    // The root's model on the Anthropic provider, as `zr run` picks it.
    let env = |v: &str| project.var(v).filter(|v| !v.is_empty());
    let model = crate::provider::anthropic_model(project, &env)?;
    let from = if let Some(name) = &file.model.name {
        view.model.what = name.clone();
        "zr.toml [model] name".to_owned()
    } else if let Some(var) = env("ANTHROPIC_MODEL") {
        view.model.what = model;
        match s.env().get("ANTHROPIC_MODEL") {
            Some(entry) => format!(
                "ANTHROPIC_MODEL = \"{var}\" at {}",
                at(project, &entry.origin)
            ),
            None => format!("ANTHROPIC_MODEL = \"{var}\" in the environment"),
        }
    } else if let Some(m) = s.model() {
        view.model.what = model;
        format!("\"{}\" at {}", m.value, at(project, &m.origin))
    } else {
        view.model.what = model;
        "zr's default".to_owned()
    };
    view.model.from = format!("{from}; on the Anthropic provider, unless --model names one");
    let kind = crate::model_aliases::assumed_kind(project, &env);
    let family = crate::model_aliases::family(kind);
    let aliases = crate::model_aliases::table(project, family)?;
    view.small = Row {
        what: aliases
            .get("small")
            .map_or_else(|| "the session's model".to_owned(), str::to_owned),
        from: "the `small` alias, which explore runs on; ANTHROPIC_SMALL_FAST_MODEL, ANTHROPIC_DEFAULT_HAIKU_MODEL or [model.aliases] small set it".to_owned(),
    };

    view.mode = match (&file.permissions.mode, s.mode()) {
        (Some(mode), _) => Row {
            what: mode.clone(),
            from: "zr.toml [permissions] mode".to_owned(),
        },
        (None, Some(mode)) => Row {
            what: mode.value.as_str().to_owned(),
            from: at(project, &mode.origin),
        },
        (None, None) => Row {
            what: "default".to_owned(),
            from: "zr's default".to_owned(),
        },
    };
    let winner = if file.permissions.mode.is_some() {
        0
    } else {
        1
    };
    view.mode_overridden = s
        .default_mode
        .iter()
        .rev()
        .skip(winner)
        .map(|m| format!("{} at {}", m.value.as_str(), at(project, &m.origin)))
        .collect();

    let p = &file.permissions;
    for (list, own, theirs) in [
        ("deny", &p.deny, &s.deny),
        ("ask", &p.ask, &s.ask),
        ("allow", &p.allow, &s.allow),
    ] {
        for rule in own.iter().flatten() {
            view.rules.push((
                list,
                Row {
                    what: rule.clone(),
                    from: format!("zr.toml [permissions] {list}"),
                },
            ));
        }
        for rule in theirs {
            view.rules.push((
                list,
                Row {
                    what: rule.value.to_string(),
                    from: at(project, &rule.origin),
                },
            ));
        }
    }
    for dir in p.additional_directories.iter().flatten() {
        view.directories.push(Row {
            what: dir.clone(),
            from: "zr.toml [permissions] additional_directories".to_owned(),
        });
    }
    for dir in &s.additional_directories {
        view.directories.push(Row {
            what: dir.value.clone(),
            from: at(project, &dir.origin),
        });
    }
    for (name, entry) in s.env() {
        let value = if secret(&name) {
            "(hidden)".to_owned()
        } else {
            format!("\"{}\"", entry.value.1)
        };
        view.env.push(Row {
            what: format!("{name} = {value}"),
            from: at(project, &entry.origin),
        });
    }

    let toml = &file.hooks;
    for (event, groups) in [
        ("PreToolUse", &toml.pre_tool_use),
        ("PostToolUse", &toml.post_tool_use),
        ("SubagentStart", &toml.subagent_start),
        ("SubagentStop", &toml.subagent_stop),
        ("Stop", &toml.stop),
    ] {
        for (i, group) in groups.iter().enumerate() {
            view.hooks.push((
                true,
                Row {
                    what: hook_text(event, group),
                    from: format!("zr.toml hooks.{event}[{i}]"),
                },
            ));
        }
    }
    let off = s.hooks_disabled();
    for entry in &s.hooks {
        let runs = !off && !LATER_EVENTS.contains(&entry.event.as_str());
        view.hooks.push((
            runs,
            Row {
                what: hook_text(&entry.event, &entry.group),
                from: at(project, &entry.origin),
            },
        ));
    }
    for key in &s.ignored {
        view.ignored.push(Row {
            what: key.value.clone(),
            from: at(project, &key.origin),
        });
    }
    Ok(view)
}

/// `PreToolUse Bash: cmd (timeout 10 s); cmd2`.
fn hook_text(event: &str, group: &crate::config::HookGroup) -> String {
    let matcher = group
        .matcher
        .as_deref()
        .filter(|m| !m.is_empty())
        .map(|m| format!(" {m}"))
        .unwrap_or_default();
    let commands: Vec<String> = group
        .hooks
        .iter()
        .map(|h| match h.timeout {
            Some(secs) => format!("{} (timeout {secs} s)", h.command),
            None => h.command.clone(),
        })
        .collect();
    format!("{event}{matcher}: {}", commands.join("; "))
}

/// `zr config` in `format`.
///
/// # Errors
///
/// [`CliError::Config`] for a blank `[model.aliases]` id (the model shown
/// goes through the aliases).
pub(crate) fn show(project: &Project, format: Format) -> Result<String, CliError> {
    let view = view(project)?;
    Ok(match format {
        Format::Table => table(project, &view),
        Format::Json => crate::inspect::json_text(&json(&view)),
    })
}

fn table(project: &Project, view: &View) -> String {
    let mut out = String::from(
        "settings files (a later one wins over an earlier one; zr.toml's explicit keys win over all; rules and hooks of every file are used):\n",
    );
    for (path, scope, found) in &view.files {
        let missing = if *found { "" } else { " (not found)" };
        out.push_str(&format!("  {path} ({scope}){missing}\n"));
    }
    out.push_str(&format!(
        "model: {} ({})\n",
        view.model.what, view.model.from
    ));
    out.push_str(&format!(
        "small model: {} ({})\n",
        view.small.what, view.small.from
    ));
    out.push_str(&format!(
        "permission mode: {} ({})\n",
        view.mode.what, view.mode.from
    ));
    for overridden in &view.mode_overridden {
        out.push_str(&format!("  overrides {overridden}\n"));
    }
    section(
        &mut out,
        "permission rules (deny, then ask, then allow; a deny anywhere wins)",
        view.rules
            .iter()
            .map(|(list, row)| format!("{list} {}  ({})", row.what, row.from)),
    );
    section(
        &mut out,
        "additional directories (agents may write and read beneath them)",
        view.directories
            .iter()
            .map(|row| format!("{}  ({})", row.what, row.from)),
    );
    section(
        &mut out,
        "env (set for every process zr starts: tools, hooks, MCP servers; zr reads it before its own environment)",
        view.env
            .iter()
            .map(|row| format!("{}  ({})", row.what, row.from)),
    );
    section(
        &mut out,
        "hooks (in the order they run)",
        view.hooks.iter().map(|(runs, row)| {
            let note = if *runs { "" } else { " [not run]" };
            format!("{}{note}  ({})", row.what, row.from)
        }),
    );
    section(
        &mut out,
        "Claude Code keys zr does not use",
        view.ignored
            .iter()
            .map(|row| format!("{}  ({})", row.what, row.from)),
    );
    if project.settings.hooks_disabled() {
        out.push_str("disableAllHooks: the settings files' hooks are off\n");
    }
    out
}

/// A heading and its lines, or `heading: none`.
fn section(out: &mut String, heading: &str, lines: impl Iterator<Item = String>) {
    let lines: Vec<String> = lines.collect();
    if lines.is_empty() {
        out.push_str(&format!("{heading}: none\n"));
        return;
    }
    out.push_str(&format!("{heading}:\n"));
    for line in lines {
        out.push_str(&format!("  {line}\n"));
    }
}

fn json(view: &View) -> Value {
    let rows = |rows: &[Row]| -> Vec<Value> {
        rows.iter()
            .map(|r| json!({"value": r.what, "from": r.from}))
            .collect()
    };
    json!({
        "files": view.files.iter().map(|(path, scope, found)| json!({"path": path, "scope": scope, "found": found})).collect::<Vec<_>>(),
        "model": {"value": view.model.what, "from": view.model.from},
        "small_model": {"value": view.small.what, "from": view.small.from},
        "permission_mode": {"value": view.mode.what, "from": view.mode.from, "overrides": view.mode_overridden},
        "permissions": view.rules.iter().map(|(list, r)| json!({"list": list, "rule": r.what, "from": r.from})).collect::<Vec<_>>(),
        "additional_directories": rows(&view.directories),
        "env": rows(&view.env),
        "hooks": view.hooks.iter().map(|(runs, r)| json!({"hook": r.what, "runs": runs, "from": r.from})).collect::<Vec<_>>(),
        "ignored": rows(&view.ignored),
    })
}
