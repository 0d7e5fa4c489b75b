//! `zr agents` and `zr agents show NAME`: the agent types the project
//! loads (built-in, project and user files) and the files that are broken.

use std::path::Path;

use serde_json::{Value, json};
use zr_caps::{AgentDefinition, AgentType, Isolation, ModelAliases, ModelChoice};
use zr_skills::{AgentSource, AgentTypeEntry, Roots};

use super::{diagnostic_json, json_text, print_diagnostics, shown, summary, table};
use crate::cli::{AgentsArgs, Format, ShowCommand};
use crate::error::{CliError, EXIT_OK};
use crate::project::Project;

/// `zr agents [show NAME]`.
///
/// # Errors
///
/// [`CliError::Usage`] when `show` names no loaded type (a broken file or
/// an unknown name).
pub(crate) fn run(project: &Project, args: &AgentsArgs) -> Result<u8, CliError> {
    match &args.command {
        None => {
            print!("{}", list(project, args.format));
            if args.format == Format::Table {
                print_diagnostics(project, project.agents.diagnostics());
            }
        }
        Some(ShowCommand::Show { name }) => print!("{}", show(project, name, args.format)?),
    }
    Ok(EXIT_OK)
}

/// `project .claude/agents/review/x.md`, `user ~/.zr/agents/y.md`,
/// `built-in`: whose file and where (its root is where the path starts).
fn source(entry: &AgentTypeEntry, project: &Project) -> String {
    match &entry.source {
        AgentSource::Builtin => "built-in".to_owned(),
        AgentSource::File { path, scope } => format!("{scope} {}", shown(project, path)),
    }
}

/// The root a file was found in, as shown (`.claude/agents`).
fn root_of(project: &Project, path: &Path) -> Option<String> {
    Roots::agents(&project.root, project.home.as_deref())
        .as_slice()
        .iter()
        .find(|root| path.starts_with(&root.path))
        .map(|root| shown(project, &root.path))
}

fn source_json(entry: &AgentTypeEntry, project: &Project) -> Value {
    match &entry.source {
        AgentSource::Builtin => json!({"kind": "built-in", "root": null, "path": null}),
        AgentSource::File { path, scope } => json!({
            "kind": scope.to_string(),
            "root": root_of(project, path),
            "path": shown(project, path),
        }),
    }
}

/// The built-in kind, or `custom`.
fn kind(d: &AgentDefinition) -> String {
    match &d.agent_type {
        AgentType::Custom(_) => "custom".to_owned(),
        builtin => builtin.to_string(),
    }
}

/// The model as the file writes it (JSON `model`; the resolved id is
/// `model_id`, and the table's column shows both, see `model_column`).
fn model(d: &AgentDefinition) -> String {
    match &d.model {
        ModelChoice::Inherit => "inherit".to_owned(),
        ModelChoice::Id(id) => id.clone(),
    }
}

/// The model column: the id the type runs on, with the alias it came
/// from (`claude-haiku-4-5 (haiku)`).
fn model_column(d: &AgentDefinition, aliases: &ModelAliases) -> String {
    let id = crate::model_aliases::shown(aliases, d);
    match &d.model {
        ModelChoice::Id(written) if *written != id => format!("{id} ({written})"),
        _ => id,
    }
}

/// The aliases `zr run` would use with the provider `zr.toml` or the
/// environment names (the table's defaults if `[model.aliases]` is broken:
/// `zr run` reports that).
fn aliases(project: &Project) -> ModelAliases {
    let kind = crate::model_aliases::assumed_kind(project, &|v| project.var(v));
    let family = crate::model_aliases::family(kind);
    crate::model_aliases::table(project, family)
        .unwrap_or_else(|_| ModelAliases::for_family(family))
}

fn flags(d: &AgentDefinition) -> String {
    let mut flags = Vec::new();
    if d.background {
        flags.push("background".to_owned());
    }
    if d.isolation == Isolation::Worktree {
        flags.push("worktree".to_owned());
    }
    if let Some(mode) = d.permission_mode {
        flags.push(format!("mode={mode}"));
    }
    if flags.is_empty() {
        "-".to_owned()
    } else {
        flags.join(",")
    }
}

/// A list as JSON strings; `null` when unset.
fn names<T: std::fmt::Display>(list: Option<&[T]>) -> Value {
    list.map_or(Value::Null, |l| {
        l.iter().map(|x| json!(x.to_string())).collect()
    })
}

fn joined<T: std::fmt::Display>(items: &[T]) -> String {
    items
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// What the type declares about its tools (its kind narrows further; `zr
/// resolve --agent NAME` shows the resolved pool).
fn tools(d: &AgentDefinition) -> String {
    let caps = &d.capabilities;
    let mut parts = vec![match &caps.allowed_tools {
        None => "builtins".to_owned(),
        Some(list) if list.is_empty() => "no builtins".to_owned(),
        Some(list) => joined(list),
    }];
    if !d.tool_rules.is_empty() {
        parts.push(format!("only {}", joined(&d.tool_rules)));
    }
    if let Some(deny) = caps.disallowed_tools.as_deref().filter(|l| !l.is_empty()) {
        parts.push(format!("deny {}", joined(deny)));
    }
    if !d.denied_rules.is_empty() {
        parts.push(format!("refuse {}", joined(&d.denied_rules)));
    }
    if let Some(servers) = d.mcp_servers.as_deref().filter(|l| !l.is_empty()) {
        parts.push(format!("mcp {}", joined(servers)));
    }
    if let Some(skills) = caps.skills.as_deref().filter(|l| !l.is_empty()) {
        parts.push(format!("skills {}", joined(skills)));
    }
    parts.join("; ")
}

/// [`tools`] of `entry`, saying when a Claude Code file without `tools`
/// gets every tool.
fn tools_of(entry: &zr_skills::AgentTypeEntry) -> String {
    let text = tools(&entry.definition);
    if crate::reload::inherits_every_tool(entry) {
        format!("{text}; mcp every .mcp.json server (a .claude/agents file without tools)")
    } else {
        text
    }
}

fn list(project: &Project, format: Format) -> String {
    let types = project.agents.types();
    let aliases = aliases(project);
    match format {
        Format::Table => {
            let rows: Vec<Vec<String>> = types
                .iter()
                .map(|e| {
                    let d = &e.definition;
                    vec![
                        d.name.to_string(),
                        kind(d),
                        source(e, project),
                        model_column(d, &aliases),
                        flags(d),
                        tools_of(e),
                        summary(&d.description, 60),
                    ]
                })
                .collect();
            table(
                &[
                    "NAME",
                    "KIND",
                    "SOURCE",
                    "MODEL",
                    "FLAGS",
                    "TOOLS",
                    "DESCRIPTION",
                ],
                &rows,
            )
        }
        Format::Json => {
            let agents: Vec<Value> = types
                .iter()
                .map(|e| {
                    let d = &e.definition;
                    let caps = &d.capabilities;
                    json!({
                        "name": d.name.to_string(),
                        "kind": kind(d),
                        "source": source_json(e, project),
                        "description": d.description,
                        "model": model(d),
                        "model_id": crate::model_aliases::shown(&aliases, d),
                        "background": d.background,
                        "isolation": d.isolation,
                        "permission_mode": d.permission_mode.map(|m| m.to_string()),
                        "max_turns": d.max_turns,
                        "tools": tools_of(e),
                        "inherits_every_tool": crate::reload::inherits_every_tool(e),
                        "allowed_tools": names(caps.allowed_tools.as_deref()),
                        "disallowed_tools": names(caps.disallowed_tools.as_deref()),
                        "skills": names(caps.skills.as_deref()),
                        "mcp_servers": names(d.mcp_servers.as_deref()),
                        "color": e.color,
                        "other_keys": e.extras.iter().map(|x| x.key.clone()).collect::<Vec<_>>(),
                    })
                })
                .collect();
            let diagnostics: Vec<Value> = project
                .agents
                .diagnostics()
                .iter()
                .map(|d| diagnostic_json(d, project))
                .collect();
            json_text(&json!({"agents": agents, "diagnostics": diagnostics}))
        }
    }
}

fn show(project: &Project, name: &str, format: Format) -> Result<String, CliError> {
    // A name, not a path: nothing else is looked up or suggested.
    if let Err(error) = name.parse::<zr_types::AgentName>() {
        return Err(CliError::usage(
            format!("'{name}' is not an agent type name: {error}"),
            "see `zr agents` for the agent types",
        ));
    }
    let Some(entry) = project.agents.get(name) else {
        return Err(not_found(project, name));
    };
    let own: Vec<_> = project
        .agents
        .diagnostics()
        .iter()
        .filter(|d| matches!(&entry.source, AgentSource::File { path, .. } if *path == d.path))
        .collect();
    Ok(match format {
        Format::Table => {
            print_diagnostics(project, own.iter().copied());
            let mut out = format!("source: {}\n", source(entry, project));
            out.push_str(&entry.definition.to_string());
            if let Some(color) = &entry.color {
                out.push_str(&format!("  color: {color:?}\n"));
            }
            // The definition prints a memory scope it understood; the
            // file's own text is shown only when it did not.
            if let (Some(memory), None) = (&entry.memory, entry.definition.memory) {
                out.push_str(&format!("  memory: {memory:?}\n"));
            }
            if let Some(folder) = entry.definition.memory.and_then(|scope| {
                scope.folder(
                    &project.root,
                    project.home.as_deref(),
                    &entry.definition.name,
                )
            }) {
                out.push_str(&format!("  memory folder: {}\n", folder.display()));
            }
            for server in &entry.inline_servers {
                out.push_str(&format!(
                    "  inline mcp server {} (line {}): {}\n",
                    server.name, server.line, server.config
                ));
            }
            out.push_str(&format!("  tools in short: {}\n", tools_of(entry)));
            for extra in &entry.extras {
                out.push_str(&format!("  other {}: {}\n", extra.key, extra.value));
            }
            out.push_str(&crate::instructions::line(project));
            out
        }
        Format::Json => {
            let definition = serde_json::to_value(&*entry.definition).unwrap_or(Value::Null);
            let extras: Vec<Value> = entry
                .extras
                .iter()
                .map(|x| json!({"key": x.key, "value": x.value, "line": x.line}))
                .collect();
            json_text(&json!({
                "name": entry.definition.name.to_string(),
                "source": source_json(entry, project),
                "definition": definition,
                // As written (an alias, `inherit`) and as it resolves.
                "model": model(&entry.definition),
                "model_id": crate::model_aliases::shown(&aliases(project), &entry.definition),
                "color": entry.color,
                "memory": entry.memory,
                "extras": extras,
                "instructions": crate::instructions::json(project),
                "diagnostics": own.iter().map(|d| diagnostic_json(d, project)).collect::<Vec<_>>(),
            }))
        }
    })
}

/// No loaded type `name`: its file is broken, or there is none.
fn not_found(project: &Project, name: &str) -> CliError {
    let names: Vec<String> = project
        .agents
        .types()
        .iter()
        .map(|e| e.definition.name.to_string())
        .collect();
    super::not_found(
        project,
        "agent type",
        name,
        &names,
        project.agents.diagnostics(),
        &format!(".zr/agents/{name}.md"),
    )
}
