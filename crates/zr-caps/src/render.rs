//! Stable text forms of definitions and migrations, for people and snapshots.

use std::fmt::{self, Write as _};
use std::sync::Arc;

use zr_types::ToolDefinition;

use crate::capabilities::AgentCapabilities;
use crate::definition::{AgentDefinition, AgentType, Effort, Isolation, ModelChoice};
use crate::migrate::Migration;

/// `[a, b]` or `unset`.
fn list<T: fmt::Display>(items: Option<&[T]>) -> String {
    match items {
        None => "unset".to_owned(),
        Some(items) => {
            let mut out = String::from("[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let _ = write!(out, "{item}");
            }
            out.push(']');
            out
        }
    }
}

/// `name (origin, read-only)` or `name (origin, destructive)` per tool, one
/// per line under `label`.
fn tools(
    f: &mut fmt::Formatter<'_>,
    indent: &str,
    label: &str,
    tools: Option<&[Arc<ToolDefinition>]>,
) -> fmt::Result {
    match tools {
        None => writeln!(f, "{indent}{label}: unset"),
        Some([]) => writeln!(f, "{indent}{label}: []"),
        Some(tools) => {
            writeln!(f, "{indent}{label}:")?;
            for tool in tools {
                write!(f, "{indent}  - {} ({}", tool.name, tool.origin)?;
                if tool.is_read_only() {
                    f.write_str(", read-only")?;
                }
                match tool.annotations.destructive {
                    Some(true) => f.write_str(", destructive")?,
                    // MCP's default for a tool that does not say.
                    None if tool.annotations.is_destructive() => {
                        f.write_str(", destructive by default")?;
                    }
                    Some(false) | None => {}
                }
                writeln!(f, "): {:?}", tool.description)?;
            }
            Ok(())
        }
    }
}

/// A possibly multi-line text, each line behind `| `.
fn block(f: &mut fmt::Formatter<'_>, indent: &str, label: &str, text: &str) -> fmt::Result {
    if !text.contains('\n') {
        return writeln!(f, "{indent}{label}: {text:?}");
    }
    writeln!(f, "{indent}{label}:")?;
    for line in text.lines() {
        writeln!(f, "{indent}  | {line}")?;
    }
    Ok(())
}

fn capabilities(f: &mut fmt::Formatter<'_>, indent: &str, caps: &AgentCapabilities) -> fmt::Result {
    tools(f, indent, "custom tools", caps.custom_tools.as_deref())?;
    tools(
        f,
        indent,
        "connection tools",
        caps.connection_tools.as_deref(),
    )?;
    writeln!(f, "{indent}skills: {}", list(caps.skills.as_deref()))?;
    writeln!(
        f,
        "{indent}allowed tools: {}",
        list(caps.allowed_tools.as_deref())
    )?;
    writeln!(
        f,
        "{indent}disallowed tools: {}",
        list(caps.disallowed_tools.as_deref())
    )
}

/// Several lines: every field, unset ones as `unset`, the prompt last.
impl fmt::Display for AgentDefinition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "agent {}", self.name)?;
        let kind = match &self.agent_type {
            AgentType::Custom(name) => format!("custom ({name})"),
            builtin => builtin.to_string(),
        };
        writeln!(f, "  kind: {kind}")?;
        block(f, "  ", "description", &self.description)?;
        let model = match &self.model {
            ModelChoice::Inherit => "inherit".to_owned(),
            ModelChoice::Id(id) => format!("{id:?}"),
        };
        writeln!(f, "  model: {model}")?;
        let mode = self
            .permission_mode
            .map_or_else(|| "unset".to_owned(), |m| m.to_string());
        writeln!(f, "  permission mode: {mode}")?;
        let turns = self
            .max_turns
            .map_or_else(|| "unset".to_owned(), |n| n.to_string());
        writeln!(f, "  max turns: {turns}")?;
        if let Some(tokens) = self.budget.tokens {
            writeln!(f, "  token budget: {tokens}")?;
        }
        if let Some(calls) = self.budget.tool_calls {
            writeln!(f, "  tool-call budget: {calls}")?;
        }
        writeln!(f, "  background: {}", self.background)?;
        let isolation = match self.isolation {
            Isolation::None => "none",
            Isolation::Worktree => "worktree",
            Isolation::Remote => "remote",
        };
        writeln!(f, "  isolation: {isolation}")?;
        let effort = match self.effort {
            None => "unset",
            Some(Effort::Low) => "low",
            Some(Effort::Medium) => "medium",
            Some(Effort::High) => "high",
            Some(Effort::Max) => "max",
        };
        writeln!(f, "  effort: {effort}")?;
        writeln!(f, "  mcp servers: {}", list(self.mcp_servers.as_deref()))?;
        capabilities(f, "  ", &self.capabilities)?;
        if !self.tool_rules.is_empty() {
            writeln!(f, "  tool rules: {}", list(Some(&self.tool_rules)))?;
        }
        if !self.denied_rules.is_empty() {
            writeln!(f, "  denied rules: {}", list(Some(&self.denied_rules)))?;
        }
        if let Some(memory) = self.memory {
            writeln!(f, "  memory: {memory}")?;
        }
        if !self.preload_skills.is_empty() {
            writeln!(
                f,
                "  preloaded skills: {}",
                list(Some(&self.preload_skills))
            )?;
        }
        if let Some(initial) = &self.initial_prompt {
            block(f, "  ", "initial prompt", initial)?;
        }
        if let Some(hooks) = &self.hooks {
            writeln!(f, "  hooks: {hooks}")?;
        }
        if let Some(append) = &self.append_prompt {
            block(f, "  ", "append prompt", append)?;
        }
        block(f, "  ", "prompt", &self.prompt)
    }
}

/// Settings, options, the root, each agent, then the numbered changes.
impl fmt::Display for Migration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "settings")?;
        writeln!(f, "  model: {:?}", self.settings.model)?;
        writeln!(f, "  cwd: {}", self.settings.cwd.display())?;
        let env: Vec<String> = self
            .settings
            .env
            .iter()
            .map(|(k, v)| format!("{k}={v:?}"))
            .collect();
        writeln!(f, "  env: {}", list(Some(&env)))?;
        writeln!(f, "options")?;
        tools(f, "  ", "custom tools", Some(&self.options.custom_tools))?;
        tools(f, "  ", "mcp tools", Some(&self.options.mcp_tools))?;
        writeln!(
            f,
            "  allowed tools: {}",
            list(self.options.allowed_tools.as_deref())
        )?;
        writeln!(
            f,
            "  disallowed tools (session-wide): {}",
            list(self.options.disallowed_tools.as_deref())
        )?;
        writeln!(f, "root capabilities")?;
        capabilities(f, "  ", &self.root)?;
        for agent in &self.agents {
            write!(f, "{agent}")?;
        }
        writeln!(f, "changes")?;
        if self.changes.is_empty() {
            writeln!(f, "  none")?;
        }
        for (i, change) in self.changes.iter().enumerate() {
            writeln!(f, "  {}. {change}", i + 1)?;
        }
        Ok(())
    }
}
