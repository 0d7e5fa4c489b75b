//! Front-matter keys of agent-type files and their conversion to a definition.

use std::str::FromStr;

use zr_types::{AgentName, ServerName, SkillName};

use super::tool_list::{ListKind, tool_list};
use super::yaml::{Located, Node, file_line};
use super::{AgentFileWarning, ExtraKey, InlineServer, ParsedAgentFile};
use crate::capabilities::AgentCapabilities;
use crate::definition::{AgentDefinition, AgentType, Effort, Isolation, MemoryScope, ModelChoice};
use crate::error::AgentFileProblem;
use crate::permission::PermissionMode;

/// A problem and its line in the file.
type Fail = (usize, AgentFileProblem);

/// The keys zr reads, as written in files.
const KNOWN_KEYS: [&str; 22] = [
    "name",
    "description",
    "tools",
    "disallowedTools",
    "model",
    "permissionMode",
    "maxTurns",
    "maxDepth",
    "tokenBudget",
    "toolCallBudget",
    "skills",
    "mcpServers",
    "background",
    "isolation",
    "effort",
    "color",
    "memory",
    "type",
    "agentType",
    "outputSchema",
    "initialPrompt",
    "hooks",
];

/// The value of each known key, if present.
#[derive(Default)]
struct Keys<'a> {
    name: Option<&'a Located>,
    description: Option<&'a Located>,
    tools: Option<&'a Located>,
    disallowed_tools: Option<&'a Located>,
    model: Option<&'a Located>,
    permission_mode: Option<&'a Located>,
    max_turns: Option<&'a Located>,
    max_depth: Option<&'a Located>,
    token_budget: Option<&'a Located>,
    tool_call_budget: Option<&'a Located>,
    skills: Option<&'a Located>,
    mcp_servers: Option<&'a Located>,
    background: Option<&'a Located>,
    isolation: Option<&'a Located>,
    effort: Option<&'a Located>,
    color: Option<&'a Located>,
    memory: Option<&'a Located>,
    initial_prompt: Option<&'a Located>,
    hooks: Option<&'a Located>,
    kind: Option<(&'static str, &'a Located)>,
    output_schema: Option<(&'static str, &'a Located)>,
    /// The line of the `outputSchema` key.
    output_schema_line: Option<usize>,
}

/// Turns the front matter's tree and the body into a parsed file.
pub(super) fn convert(
    tree: &Located,
    body: String,
    mut warnings: Vec<AgentFileWarning>,
) -> Result<ParsedAgentFile, Fail> {
    let entries: &[(Located, Located)] = match &tree.value {
        Node::Map(entries) => entries,
        Node::Null => &[],
        other => {
            return Err((
                file_line(tree, 1),
                AgentFileProblem::NotAMapping {
                    found: other.describe(),
                },
            ));
        }
    };
    let mut keys = Keys::default();
    let mut extras = Vec::new();
    for (key, value) in entries {
        let text = key.value.key_text();
        let slot = match text.as_str() {
            "name" => &mut keys.name,
            "description" => &mut keys.description,
            "tools" => &mut keys.tools,
            "disallowedTools" => &mut keys.disallowed_tools,
            "model" => &mut keys.model,
            "permissionMode" => &mut keys.permission_mode,
            "maxTurns" => &mut keys.max_turns,
            "maxDepth" => &mut keys.max_depth,
            "tokenBudget" => &mut keys.token_budget,
            "toolCallBudget" => &mut keys.tool_call_budget,
            "skills" => &mut keys.skills,
            "mcpServers" => &mut keys.mcp_servers,
            "background" => &mut keys.background,
            "isolation" => &mut keys.isolation,
            "effort" => &mut keys.effort,
            "color" => &mut keys.color,
            "memory" => &mut keys.memory,
            "initialPrompt" => &mut keys.initial_prompt,
            "hooks" => &mut keys.hooks,
            "type" | "agentType" | "outputSchema" | "output_schema" => {
                let (this, slot) = match text.as_str() {
                    "type" => ("type", &mut keys.kind),
                    "agentType" => ("agentType", &mut keys.kind),
                    "outputSchema" => ("outputSchema", &mut keys.output_schema),
                    _ => ("output_schema", &mut keys.output_schema),
                };
                if let Some((first, _)) = *slot {
                    return Err((
                        file_line(key, 1),
                        AgentFileProblem::ConflictingKeys {
                            first,
                            second: this,
                        },
                    ));
                }
                *slot = Some((this, value));
                if this.starts_with("output") {
                    keys.output_schema_line = Some(file_line(key, 1));
                }
                continue;
            }
            _ => {
                let line = file_line(key, 1);
                warnings.push(AgentFileWarning {
                    line,
                    key: text.clone(),
                    message: unknown_key_message(&text),
                });
                extras.push(ExtraKey {
                    key: text,
                    value: value.value.to_json(),
                    line,
                });
                continue;
            }
        };
        *slot = Some(value);
    }
    build(&keys, body, extras, warnings)
}

fn build(
    keys: &Keys<'_>,
    body: String,
    extras: Vec<ExtraKey>,
    mut warnings: Vec<AgentFileWarning>,
) -> Result<ParsedAgentFile, Fail> {
    let name_text = required(keys.name, "name", "<lowercase-name, e.g. code-reviewer>")?;
    let name = AgentName::from_str(&name_text.1).map_err(|error| {
        (
            name_text.0,
            AgentFileProblem::InvalidName { key: "name", error },
        )
    })?;
    let description = required(
        keys.description,
        "description",
        "<what the agent does and when to use it>",
    )?
    .1;
    let agent_type = match keys.kind {
        Some((key, node)) => match text(key, node)? {
            Some(kind) => AgentType::parse(&kind).map_err(|error| {
                (
                    file_line(node, 1),
                    AgentFileProblem::InvalidName { key, error },
                )
            })?,
            None => AgentType::for_name(&name),
        },
        None => AgentType::for_name(&name),
    };
    let mut definition = AgentDefinition::new(name, description, body).with_type(agent_type);
    definition.model = match opt_text(keys.model, "model")? {
        Some((line, model)) if model.trim().is_empty() => {
            return Err((
                line,
                AgentFileProblem::InvalidValue {
                    key: "model",
                    expected: "'inherit' or a model id",
                    found: Node::Str(model).describe(),
                },
            ));
        }
        Some((_, model)) => ModelChoice::parse(model.trim()),
        None => ModelChoice::Inherit,
    };
    definition.permission_mode = match opt_text(keys.permission_mode, "permissionMode")? {
        Some((line, mode)) => Some(
            PermissionMode::from_str(&mode)
                .map_err(|e| (line, AgentFileProblem::InvalidPermissionMode(e)))?,
        ),
        None => None,
    };
    definition.max_turns = positive(keys.max_turns, "maxTurns")?;
    definition.max_depth = levels(keys.max_depth)?;
    definition.budget.tokens = positive(keys.token_budget, "tokenBudget")?;
    definition.budget.tool_calls = positive(keys.tool_call_budget, "toolCallBudget")?;
    definition.background = match keys.background {
        Some(node) => match &node.value {
            Node::Bool(b) => *b,
            Node::Null => false,
            other => return Err(wrong_type(node, "background", "true or false", other)),
        },
        None => false,
    };
    definition.isolation = match opt_text(keys.isolation, "isolation")? {
        Some((_, v)) if v == "none" => Isolation::None,
        Some((_, v)) if v == "worktree" => Isolation::Worktree,
        Some((_, v)) if v == "remote" => Isolation::Remote,
        Some((line, v)) => {
            return Err(invalid(
                line,
                "isolation",
                "'none', 'worktree' or 'remote'",
                v,
            ));
        }
        None => Isolation::None,
    };
    definition.effort = match opt_text(keys.effort, "effort")? {
        Some((line, v)) => Some(match v.as_str() {
            "low" => Effort::Low,
            "medium" => Effort::Medium,
            "high" => Effort::High,
            "max" => Effort::Max,
            _ => return Err(invalid(line, "effort", "one of low, medium, high, max", v)),
        }),
        None => None,
    };
    definition.output_schema = match keys.output_schema {
        Some((key, node)) => match &node.value {
            Node::Null => None,
            Node::Map(_) | Node::Bool(_) => Some(node.value.to_json()),
            other => {
                return Err(wrong_type(
                    node,
                    key,
                    "a JSON Schema (a mapping, e.g. `type: object`)",
                    other,
                ));
            }
        },
        None => None,
    };
    definition.hooks = match keys.hooks {
        Some(node) => match &node.value {
            Node::Null => None,
            Node::Map(_) => Some(node.value.to_json()),
            other => {
                return Err(wrong_type(
                    node,
                    "hooks",
                    "a mapping of hook events (`Stop:`, `PreToolUse:`) to lists of matchers",
                    other,
                ));
            }
        },
        None => None,
    };
    let (mcp_servers, inline_servers) = mcp_servers(keys.mcp_servers)?;
    definition.mcp_servers = mcp_servers;
    definition.capabilities = AgentCapabilities {
        allowed_tools: tool_list(
            keys.tools,
            "tools",
            ListKind::Allow,
            &mut definition.tool_rules,
            &mut warnings,
        )?,
        disallowed_tools: tool_list(
            keys.disallowed_tools,
            "disallowedTools",
            ListKind::Deny,
            &mut definition.denied_rules,
            &mut warnings,
        )?,
        skills: list(keys.skills, "skills", |s| {
            SkillName::from_str(s).map_err(|error| AgentFileProblem::InvalidName {
                key: "skills",
                error,
            })
        })?,
        custom_tools: None,
        connection_tools: None,
    };
    let memory = opt_text(keys.memory, "memory")?;
    if let Some((line, text)) = &memory {
        definition.memory = MemoryScope::parse(text);
        if definition.memory.is_none() && !text.trim().is_empty() {
            warnings.push(AgentFileWarning {
                line: *line,
                key: "memory".to_owned(),
                message: format!(
                    "'memory' is {text:?}; it is one of user, project, local (the agent gets no memory)"
                ),
            });
        }
    }
    memory_tools(&mut definition);
    definition.initial_prompt = opt_text(keys.initial_prompt, "initialPrompt")?
        .map(|(_, v)| v.trim().to_owned())
        .filter(|v| !v.is_empty());
    definition.preload_skills = definition.capabilities.skills.clone().unwrap_or_default();
    let color = opt_text(keys.color, "color")?.map(|(_, v)| v);
    definition.color = color.clone().filter(|c| !c.trim().is_empty());
    Ok(ParsedAgentFile {
        definition,
        color,
        memory: memory.map(|(_, v)| v),
        inline_servers,
        extras,
        warnings,
        output_schema_line: keys.output_schema_line,
    })
}

fn unknown_key_message(key: &str) -> String {
    let norm = |s: &str| -> String {
        s.chars()
            .filter(|c| *c != '_' && *c != '-')
            .flat_map(char::to_lowercase)
            .collect()
    };
    let wanted = norm(key);
    match KNOWN_KEYS.iter().find(|k| norm(k) == wanted) {
        Some(known) => {
            format!("unknown key '{key}' is kept but not used; did you mean '{known}'?")
        }
        None => format!(
            "unknown key '{key}' is kept but not used by zr; known keys: {}",
            KNOWN_KEYS.join(", ")
        ),
    }
}

fn wrong_type(node: &Located, key: &str, expected: &'static str, found: &Node) -> Fail {
    (
        file_line(node, 1),
        AgentFileProblem::WrongType {
            key: key.to_owned(),
            expected,
            found: found.describe(),
        },
    )
}

fn invalid(line: usize, key: &'static str, expected: &'static str, found: String) -> Fail {
    (
        line,
        AgentFileProblem::InvalidValue {
            key,
            expected,
            found: Node::Str(found).describe(),
        },
    )
}

/// A string value; `None` for `~`.
fn text(key: &str, node: &Located) -> Result<Option<String>, Fail> {
    match &node.value {
        Node::Str(s) => Ok(Some(s.clone())),
        Node::Null => Ok(None),
        other => Err(wrong_type(node, key, "a string", other)),
    }
}

/// An optional string key with the line of its value.
fn opt_text(node: Option<&Located>, key: &str) -> Result<Option<(usize, String)>, Fail> {
    match node {
        Some(node) => Ok(text(key, node)?.map(|s| (file_line(node, 1), s))),
        None => Ok(None),
    }
}

/// A required, non-blank string key, trimmed, with the line of its value.
fn required(
    node: Option<&Located>,
    key: &'static str,
    hint: &'static str,
) -> Result<(usize, String), Fail> {
    match opt_text(node, key)? {
        Some((line, s)) if !s.trim().is_empty() => Ok((line, s.trim().to_owned())),
        Some((line, _)) => Err((line, AgentFileProblem::MissingKey { key, hint })),
        None => Err((
            node.map_or(1, |n| file_line(n, 1)),
            AgentFileProblem::MissingKey { key, hint },
        )),
    }
}

/// `maxDepth`: 0 or more levels.
fn levels(node: Option<&Located>) -> Result<Option<u32>, Fail> {
    let Some(node) = node else { return Ok(None) };
    match &node.value {
        Node::Null => Ok(None),
        Node::Int(i) => u32::try_from(*i).map(Some).map_err(|_| {
            (
                file_line(node, 1),
                AgentFileProblem::InvalidValue {
                    key: "maxDepth",
                    expected: "0 or a positive integer",
                    found: node.value.describe(),
                },
            )
        }),
        other => Err(wrong_type(
            node,
            "maxDepth",
            "0 or a positive integer",
            other,
        )),
    }
}

/// A positive integer key (`maxTurns`, `tokenBudget`, `toolCallBudget`).
fn positive<T: TryFrom<i128> + PartialOrd + Default>(
    node: Option<&Located>,
    key: &'static str,
) -> Result<Option<T>, Fail> {
    let Some(node) = node else { return Ok(None) };
    match &node.value {
        Node::Null => Ok(None),
        Node::Int(i) => match T::try_from(*i) {
            Ok(n) if n > T::default() => Ok(Some(n)),
            _ => Err((
                file_line(node, 1),
                AgentFileProblem::InvalidValue {
                    key,
                    expected: "a positive integer",
                    found: node.value.describe(),
                },
            )),
        },
        other => Err(wrong_type(node, key, "a positive integer", other)),
    }
}

/// The file tools an agent with memory needs for its folder, as Claude
/// Code enables them (Read, Write, Edit), without widening a `tools` list
/// beyond the folder. Rules speak for a family of tools (`Read(...)`:
/// Read, Glob, Grep; `Edit(...)`: Edit, Write), so each family is taken
/// whole:
///
/// - a family the list has whole (one of its tools listed, no rule of the
///   family) is left as it is: the agent already reads (or writes) where
///   its boundary lets it, and a folder rule would narrow that tool;
/// - otherwise its missing tools (Read; Write and Edit) are added with one
///   rule that narrows the family to the memory folder
///   ([`AgentDefinition::memory_rule`]), beside the family's own rules;
/// - a tool in `disallowedTools` is not added, and a file without `tools`
///   (every builtin) is left as it is.
fn memory_tools(definition: &mut AgentDefinition) {
    const FAMILIES: [(&str, &[&str], &[&str]); 2] = [
        ("Read", &["Read", "Glob", "Grep"], &["Read"]),
        ("Edit", &["Edit", "Write"], &["Write", "Edit"]),
    ];
    let denied = definition
        .capabilities
        .disallowed_tools
        .clone()
        .unwrap_or_default();
    for (family, members, wanted) in FAMILIES {
        let Some(rule) = definition.memory_rule(family) else {
            return;
        };
        let Some(allowed) = definition.capabilities.allowed_tools.as_ref() else {
            return;
        };
        let listed = members
            .iter()
            .any(|tool| allowed.iter().any(|p| p.matches_name(tool)));
        let narrowed = definition
            .tool_rules
            .iter()
            .any(|r| r.specifier().is_some() && members.iter().any(|m| r.tool().matches_name(m)));
        if listed && !narrowed {
            continue;
        }
        let adding: Vec<&str> = wanted
            .iter()
            .copied()
            .filter(|tool| !denied.iter().any(|p| p.matches_name(tool)))
            .collect();
        if adding.is_empty() {
            continue;
        }
        let allowed = definition
            .capabilities
            .allowed_tools
            .get_or_insert_with(Vec::new);
        for tool in adding {
            if !allowed.iter().any(|p| p.matches_name(tool))
                && let Ok(pattern) = tool.parse()
            {
                allowed.push(pattern);
            }
        }
        if !definition.tool_rules.contains(&rule) {
            definition.tool_rules.push(rule);
        }
    }
}

/// `mcpServers`: names of configured servers and inline definitions, in
/// the forms Claude Code reads: a list whose items are names or
/// one-entry mappings `{name: {command, args, env} | {type, url, ...}}`,
/// a mapping `{name: definition}`, or one comma-separated string of
/// names. Returns every server's name in file order (inline ones
/// included), and the inline definitions as JSON (the host reads them as
/// `.mcp.json` entries).
fn mcp_servers(
    node: Option<&Located>,
) -> Result<(Option<Vec<ServerName>>, Vec<InlineServer>), Fail> {
    const EXPECTED: &str = "a list of server names or {name: {command, args, env}} definitions";
    let Some(node) = node else {
        return Ok((None, Vec::new()));
    };
    let name = |text: &str, at: &Located| {
        ServerName::from_str(text.trim()).map_err(|error| {
            (
                file_line(at, 1),
                AgentFileProblem::InvalidName {
                    key: "mcpServers",
                    error,
                },
            )
        })
    };
    let mut names = Vec::new();
    let mut inline = Vec::new();
    let mut definition = |key: &Located, value: &Located, names: &mut Vec<ServerName>| {
        let server = name(&key.value.key_text(), key)?;
        match &value.value {
            Node::Map(_) => {}
            other => {
                return Err(wrong_type(
                    value,
                    "mcpServers",
                    "a server definition (a mapping with command or url)",
                    other,
                ));
            }
        }
        names.push(server.clone());
        inline.push(InlineServer {
            name: server,
            config: value.value.to_json(),
            line: file_line(key, 1),
        });
        Ok(())
    };
    match &node.value {
        Node::Null => return Ok((None, Vec::new())),
        Node::Str(s) => {
            for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
                names.push(name(item, node)?);
            }
        }
        Node::Map(entries) => {
            for (key, value) in entries {
                definition(key, value, &mut names)?;
            }
        }
        Node::Seq(items) => {
            for item in items {
                match &item.value {
                    Node::Str(s) => names.push(name(s, item)?),
                    Node::Map(entries) => {
                        for (key, value) in entries {
                            definition(key, value, &mut names)?;
                        }
                    }
                    other => return Err(wrong_type(item, "mcpServers", EXPECTED, other)),
                }
            }
        }
        other => return Err(wrong_type(node, "mcpServers", EXPECTED, other)),
    }
    Ok((Some(names), inline))
}

/// A list key: a YAML list of strings, or one comma-separated string.
fn list<T>(
    node: Option<&Located>,
    key: &'static str,
    parse: impl Fn(&str) -> Result<T, AgentFileProblem>,
) -> Result<Option<Vec<T>>, Fail> {
    const EXPECTED: &str = "a list of names or one comma-separated string";
    let Some(node) = node else { return Ok(None) };
    let line = file_line(node, 1);
    match &node.value {
        Node::Null => Ok(None),
        Node::Str(s) => s
            .split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .map(|item| parse(item).map_err(|p| (line, p)))
            .collect::<Result<Vec<T>, Fail>>()
            .map(Some),
        Node::Seq(items) => items
            .iter()
            .map(|item| match &item.value {
                Node::Str(s) => parse(s.trim()).map_err(|p| (file_line(item, line), p)),
                other => Err(wrong_type(item, key, EXPECTED, other)),
            })
            .collect::<Result<Vec<T>, Fail>>()
            .map(Some),
        other => Err(wrong_type(node, key, EXPECTED, other)),
    }
}
