//! Agent definitions: what a subagent type (or the root) is.

use std::fmt;

use serde::{Deserialize, Serialize};
use zr_types::{AgentName, BuiltinName, NameError, ServerName, ToolDefinition, ToolName};

use crate::capabilities::AgentCapabilities;
use crate::permission::PermissionMode;
use crate::rules::{Call, PermissionRule, RuleBase, Subject};

/// Which model an agent runs on.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelChoice {
    /// The parent's model (`"inherit"` in files).
    #[default]
    Inherit,
    /// A model id or alias (`"sonnet"`, `"claude-sonnet-4-5"`).
    Id(String),
}

impl ModelChoice {
    /// `"inherit"` becomes [`ModelChoice::Inherit`], anything else an id.
    #[must_use]
    pub fn parse(text: &str) -> Self {
        if text == "inherit" {
            Self::Inherit
        } else {
            Self::Id(text.to_owned())
        }
    }
}

/// Where a subagent works.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Isolation {
    /// In its parent's working directory.
    #[default]
    None,
    /// In a fresh git worktree on its own branch.
    Worktree,
    /// As a child invocation on a worker of the project's `[durable]`
    /// Restate server, even when the session runs locally: in a fresh
    /// worktree of the project there when it is a git repository, in the
    /// worker's sandbox always.
    Remote,
}

/// How much reasoning effort the model should spend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effort {
    /// Quick answers.
    Low,
    /// The default.
    Medium,
    /// Careful work.
    High,
    /// As much as the model allows.
    Max,
}

/// Where an agent type's persistent memory lives (the agent file's
/// `memory` key, as Claude Code names its scopes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryScope {
    /// `~/.claude/agent-memory/<agent>/`: the user's, for every project.
    User,
    /// `.claude/agent-memory/<agent>/` in the project: checked in, shared.
    Project,
    /// `.claude/agent-memory-local/<agent>/` in the project: the user's
    /// own for this project (git-ignored by convention).
    Local,
}

impl MemoryScope {
    /// Reads `user`, `project` or `local`.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim() {
            "user" => Some(Self::User),
            "project" => Some(Self::Project),
            "local" => Some(Self::Local),
            _ => None,
        }
    }

    /// The memory folder of `agent` in this scope, for a session in
    /// `project` whose user's home is `home` (`None` for the user scope
    /// without a home folder). Nothing is read or created.
    ///
    /// ```
    /// use std::path::Path;
    /// use zr_caps::MemoryScope;
    /// let agent = "reviewer".parse().unwrap();
    /// let (project, home) = (Path::new("/p"), Some(Path::new("/h")));
    /// assert_eq!(MemoryScope::User.folder(project, home, &agent).unwrap(), Path::new("/h/.claude/agent-memory/reviewer"));
    /// assert_eq!(MemoryScope::Project.folder(project, home, &agent).unwrap(), Path::new("/p/.claude/agent-memory/reviewer"));
    /// assert_eq!(MemoryScope::Local.folder(project, None, &agent).unwrap(), Path::new("/p/.claude/agent-memory-local/reviewer"));
    /// assert_eq!(MemoryScope::User.folder(project, None, &agent), None);
    /// ```
    #[must_use]
    pub fn folder(
        self,
        project: &std::path::Path,
        home: Option<&std::path::Path>,
        agent: &AgentName,
    ) -> Option<std::path::PathBuf> {
        let (base, dir) = match self {
            Self::User => (home?, "agent-memory"),
            Self::Project => (project, "agent-memory"),
            Self::Local => (project, "agent-memory-local"),
        };
        Some(base.join(".claude").join(dir).join(agent.as_str()))
    }
}

impl fmt::Display for MemoryScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::User => "user",
            Self::Project => "project",
            Self::Local => "local",
        })
    }
}

/// The kind of a subagent, which decides its resolver role.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AgentType {
    /// Does whatever it is asked, with the tools it is given.
    #[default]
    GeneralPurpose,
    /// Searches and reads; read-only tools and builtin Bash only.
    Explore,
    /// Designs a plan; read-only tools and builtin Bash only.
    Plan,
    /// Tries to break the work it checks.
    Verification,
    /// A user-defined type.
    Custom(AgentName),
}

impl AgentType {
    /// The kind of an agent named `name` when nothing else is said: the
    /// builtin kind of that name (`explore`, `plan`, `verification`,
    /// `general-purpose`), else a custom kind of that name.
    ///
    /// ```
    /// use zr_caps::AgentType;
    /// assert_eq!(AgentType::for_name(&"plan".parse().unwrap()), AgentType::Plan);
    /// assert_eq!(AgentType::for_name(&"reviewer".parse().unwrap()).to_string(), "reviewer");
    /// ```
    #[must_use]
    pub fn for_name(name: &AgentName) -> Self {
        match name.as_str() {
            "general-purpose" => Self::GeneralPurpose,
            "explore" => Self::Explore,
            "plan" => Self::Plan,
            "verification" => Self::Verification,
            _ => Self::Custom(name.clone()),
        }
    }

    /// Parses a kind as written in files: a builtin kind's name in any case
    /// (Claude Code writes `Explore`), or a custom agent name.
    ///
    /// ```
    /// use zr_caps::AgentType;
    /// assert_eq!(AgentType::parse("Explore").unwrap(), AgentType::Explore);
    /// assert_eq!(AgentType::parse("General-Purpose").unwrap(), AgentType::GeneralPurpose);
    /// assert!(AgentType::parse("Reviewer").is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// [`NameError`] when the text is neither a builtin kind nor a valid
    /// agent name (custom names are lowercase).
    pub fn parse(text: &str) -> Result<Self, NameError> {
        const BUILTIN: [(&str, AgentType); 4] = [
            ("general-purpose", AgentType::GeneralPurpose),
            ("explore", AgentType::Explore),
            ("plan", AgentType::Plan),
            ("verification", AgentType::Verification),
        ];
        match BUILTIN
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(text))
        {
            Some((_, kind)) => Ok(kind.clone()),
            None => Ok(Self::Custom(text.parse()?)),
        }
    }
}

impl fmt::Display for AgentType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::GeneralPurpose => f.write_str("general-purpose"),
            Self::Explore => f.write_str("explore"),
            Self::Plan => f.write_str("plan"),
            Self::Verification => f.write_str("verification"),
            Self::Custom(name) => write!(f, "{name}"),
        }
    }
}

/// A subagent type (or the root's definition).
///
/// Build one with [`AgentDefinition::new`] and the `with_*` setters, or
/// parse a Markdown agent-type file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentDefinition {
    /// The name the `Task` tool's `subagent_type` refers to.
    pub name: AgentName,
    /// When to use it, for the delegating model.
    pub description: String,
    /// Its system prompt.
    pub prompt: String,
    /// Text appended to the system prompt.
    #[serde(default)]
    pub append_prompt: Option<String>,
    /// Its turn limit; unset is half the parent's.
    #[serde(default)]
    pub max_turns: Option<u32>,
    /// Its model.
    #[serde(default)]
    pub model: ModelChoice,
    /// Its declared permission mode, clamped by the parent's (C4).
    #[serde(default)]
    pub permission_mode: Option<PermissionMode>,
    /// Whether it always runs in the background.
    #[serde(default)]
    pub background: bool,
    /// Where it works.
    #[serde(default)]
    pub isolation: Isolation,
    /// Its kind.
    #[serde(default)]
    pub agent_type: AgentType,
    /// Reasoning effort, sent where the provider's API takes it.
    #[serde(default)]
    pub effort: Option<Effort>,
    /// The JSON Schema its final answer must match: the engine validates
    /// the answer, gives the model one repair turn, and hands the parsed
    /// value to the delegating agent (a `Task` call's own `output_schema`
    /// replaces it). `None`: a free-text answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<serde_json::Value>,
    /// MCP servers whose tools it gets; the host materialises them into
    /// `capabilities.connection_tools`.
    #[serde(default)]
    pub mcp_servers: Option<Vec<ServerName>>,
    /// Its capabilities (C2: exactly these, nothing inherited).
    #[serde(default)]
    pub capabilities: AgentCapabilities,
    /// Limits beyond the turn limit; unset limits are no limit.
    #[serde(default)]
    pub budget: Budget,
    /// Rules from the agent file's `tools` with a specifier
    /// (`Bash(git diff:*)`, `Read(src/**)`): a call of a tool named by one
    /// of these rules runs only if one of them matches it; its other calls
    /// are refused. The tool itself is in `capabilities.allowed_tools`.
    /// Several rules of one tool add up. See [`AgentDefinition::narrows`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_rules: Vec<PermissionRule>,
    /// How hosts show agents of this type (the agent file's `color`:
    /// `red`, `blue`, `green`, `yellow`, `purple`, `orange`, `pink`,
    /// `cyan`, as written); zr colours their name in the live tree and the
    /// HTML timeline. No effect on what the agent does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
    /// Its persistent memory (the agent file's `memory`): the engine gives
    /// an agent of this type the scope's folder ([`MemoryScope::folder`])
    /// as a place it may write, and the first lines of its `MEMORY.md`
    /// in its system prompt. `None`: no memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryScope>,
    /// Text that opens the agent's first user turn, before the task it is
    /// given (the agent file's `initialPrompt`). `None`: the task alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_prompt: Option<String>,
    /// Skills whose instructions are put into the agent's first user turn
    /// when it starts (the agent file's `skills`, as Claude Code preloads
    /// them), each bounded; the same skills stay loadable through `Skill`.
    /// Empty: none preloaded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub preload_skills: Vec<zr_types::SkillName>,
    /// Rules from the agent file's `disallowedTools` with a specifier
    /// (`Bash(rm:*)`): a call one of them matches is refused; the tool's
    /// other calls run. (A bare name in `disallowedTools` removes the whole
    /// tool through `capabilities.disallowed_tools`.)
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub denied_rules: Vec<PermissionRule>,
    /// How many levels of subagents may be below an agent of this type
    /// (agent-file key `maxDepth`; 0: it cannot delegate). It only lowers
    /// the session's `[subagents] max_depth`, never raises it. `None`: the
    /// session's limit alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_depth: Option<u32>,

    /// Claude Code's hooks of this type (an agent file's `hooks`, as
    /// JSON: event names to lists of `{matcher, hooks: [{type, command,
    /// timeout}]}`), run by the host for the agents of this type only,
    /// for their lifetime. zr-caps keeps them as written; the host reads
    /// them (zr-engine's `TypeHooks`). `None`: no hooks of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hooks: Option<serde_json::Value>,
}

/// Why an agent's own rules refuse a call (see
/// [`AgentDefinition::narrows`]); `Display` is the sentence for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RuleRefusal {
    /// A rule of the agent file's `disallowedTools` matches the call.
    Denied {
        /// The agent.
        agent: AgentName,
        /// The rule.
        rule: PermissionRule,
    },
    /// Rules of the agent file's `tools` name the tool and none matches.
    NotAllowed {
        /// The agent.
        agent: AgentName,
        /// The tool called.
        tool: ToolName,
        /// The agent's rules for that tool.
        rules: Vec<PermissionRule>,
    },
}

impl fmt::Display for RuleRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Denied { agent, rule } => write!(
                f,
                "agent '{agent}' may not make this call: its disallowedTools rule '{rule}' matches it"
            ),
            Self::NotAllowed { agent, tool, rules } => {
                write!(
                    f,
                    "agent '{agent}' may use {tool} only as its tools rules say ("
                )?;
                for (i, rule) in rules.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{rule}")?;
                }
                f.write_str("); this call matches none of them")?;
                if tool.as_str() == "Bash" {
                    f.write_str(" (each command of a compound command must match one)")?;
                }
                Ok(())
            }
        }
    }
}

/// What one run of an agent of a type may spend beyond its turns.
///
/// The engine ends a run that reaches a limit with status
/// `budget_exhausted` and the output written so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Budget {
    /// Tokens (input, output and cache, all requests together).
    pub tokens: Option<u64>,
    /// Tool calls.
    pub tool_calls: Option<u32>,
}

impl AgentDefinition {
    /// A general-purpose definition with no capabilities.
    #[must_use]
    pub fn new(name: AgentName, description: impl Into<String>, prompt: impl Into<String>) -> Self {
        Self {
            name,
            description: description.into(),
            prompt: prompt.into(),
            append_prompt: None,
            max_turns: None,
            model: ModelChoice::Inherit,
            permission_mode: None,
            background: false,
            isolation: Isolation::None,
            agent_type: AgentType::GeneralPurpose,
            effort: None,
            output_schema: None,
            mcp_servers: None,
            capabilities: AgentCapabilities::default(),
            budget: Budget::default(),
            tool_rules: Vec::new(),
            denied_rules: Vec::new(),
            max_depth: None,
            color: None,
            memory: None,
            initial_prompt: None,
            preload_skills: Vec::new(),
            hooks: None,
        }
    }

    /// The subagent types an agent of this type may start, when its
    /// `tools` restricts them (`Agent(worker, researcher)` or
    /// `Task(worker)`, Claude Code's syntax; several entries add up);
    /// `None`: any type its session has.
    ///
    /// ```
    /// use zr_caps::AgentDefinition;
    /// let mut d = AgentDefinition::new("lead".parse().unwrap(), "d", "p");
    /// assert_eq!(d.spawn_types(), None);
    /// d.tool_rules.push("Task(worker, researcher)".parse().unwrap());
    /// assert_eq!(d.spawn_types(), Some(vec!["worker", "researcher"]));
    /// ```
    #[must_use]
    pub fn spawn_types(&self) -> Option<Vec<&str>> {
        let mut types: Option<Vec<&str>> = None;
        for rule in &self.tool_rules {
            let task = rule.tool().as_str();
            if !matches!(task.parse(), Ok(BuiltinName::Task | BuiltinName::MultiTask)) {
                continue;
            }
            if let Some(crate::rules::Specifier::Argument(names)) = rule.specifier() {
                let list = types.get_or_insert_with(Vec::new);
                for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                    if !list.contains(&name) {
                        list.push(name);
                    }
                }
            }
        }
        types
    }

    /// Sets the agent type.
    #[must_use]
    pub fn with_type(mut self, agent_type: AgentType) -> Self {
        self.agent_type = agent_type;
        self
    }

    /// Sets the capabilities.
    #[must_use]
    pub fn with_capabilities(mut self, capabilities: AgentCapabilities) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// What the agent's own rules ([`tool_rules`](Self::tool_rules),
    /// [`denied_rules`](Self::denied_rules)) say about one call of `tool`:
    ///
    /// - `Some(Err(_))` when a denied rule matches the call (for a compound
    ///   command, any part of it), or when tool rules name the tool and
    ///   none matches it (for a compound command, every part must be
    ///   matched by one of them);
    /// - `Some(Ok(()))` when tool rules name the tool and match the call;
    /// - `None` when no tool rule names the tool and no denied rule matches:
    ///   the agent's rules leave the call to the session's rules.
    ///
    /// The matching is [`PermissionRules::evaluate`](crate::PermissionRules::evaluate)'s.
    ///
    /// ```
    /// use std::path::Path;
    /// use zr_caps::{AgentDefinition, RuleBase, Subject};
    /// use zr_types::{ToolDefinition, ToolOrigin};
    /// let mut d = AgentDefinition::new("differ".parse().unwrap(), "d", "p");
    /// d.tool_rules.push("Bash(git diff:*)".parse().unwrap());
    /// let bash = ToolDefinition::new("Bash".parse().unwrap(), "", ToolOrigin::Builtin);
    /// let read = ToolDefinition::new("Read".parse().unwrap(), "", ToolOrigin::Builtin);
    /// let base = RuleBase { base: Path::new("/p"), home: None };
    /// assert_eq!(d.narrows(&bash, &Subject::Command("git diff HEAD"), &base), Some(Ok(())));
    /// assert!(matches!(d.narrows(&bash, &Subject::Command("rm x"), &base), Some(Err(_))));
    /// assert_eq!(d.narrows(&read, &Subject::Name, &base), None);
    /// ```
    #[must_use]
    pub fn narrows(
        &self,
        tool: &ToolDefinition,
        subject: &Subject<'_>,
        base: &RuleBase<'_>,
    ) -> Option<Result<(), RuleRefusal>> {
        let call = Call::new(tool, subject, base);
        if let Some(rule) = call.any(&self.denied_rules) {
            return Some(Err(RuleRefusal::Denied {
                agent: self.name.clone(),
                rule: rule.clone(),
            }));
        }
        let naming: Vec<&PermissionRule> = self
            .tool_rules
            .iter()
            .filter(|rule| rule.applies_to(tool))
            .collect();
        if naming.is_empty() {
            return None;
        }
        Some(match call.every(&self.tool_rules) {
            Some(_) => Ok(()),
            None => Err(RuleRefusal::NotAllowed {
                agent: self.name.clone(),
                tool: tool.name.clone(),
                rules: naming.into_iter().cloned().collect(),
            }),
        })
    }

    /// The rule that narrows the family of `tool` (`Read`: Read, Glob,
    /// Grep; `Edit`: Edit, Write) to this type's memory folder, as an agent
    /// file with `memory` grants it: `Edit(/.claude/agent-memory/NAME/**)`
    /// (project), `.../agent-memory-local/...` (local),
    /// `Edit(~/.claude/agent-memory/NAME/**)` (user). `None` without memory.
    ///
    /// ```
    /// use zr_caps::{AgentDefinition, MemoryScope};
    /// let mut d = AgentDefinition::new("keeper".parse().unwrap(), "d", "p");
    /// assert_eq!(d.memory_rule("Edit"), None);
    /// d.memory = Some(MemoryScope::Project);
    /// assert_eq!(d.memory_rule("Edit").unwrap().to_string(), "Edit(/.claude/agent-memory/keeper/**)");
    /// ```
    #[must_use]
    pub fn memory_rule(&self, tool: &str) -> Option<PermissionRule> {
        let folder = match self.memory? {
            MemoryScope::User => format!("~/.claude/agent-memory/{}/**", self.name),
            MemoryScope::Project => format!("/.claude/agent-memory/{}/**", self.name),
            MemoryScope::Local => format!("/.claude/agent-memory-local/{}/**", self.name),
        };
        format!("{tool}({folder})").parse().ok()
    }

    /// Whether the type may write files (Write, Edit) only in its memory
    /// folder: every rule of its for the Edit family is
    /// [`memory_rule`](Self::memory_rule)'s. Such a grant does not make
    /// the agent a writing one for its commands' sandbox.
    #[must_use]
    pub fn writes_only_memory(&self) -> bool {
        let Some(memory) = self.memory_rule("Edit") else {
            return false;
        };
        let mut naming = self
            .tool_rules
            .iter()
            .filter(|r| ["Edit", "Write"].iter().any(|t| r.tool().matches_name(t)))
            .peekable();
        naming.peek().is_some() && naming.all(|r| *r == memory)
    }

    /// The effective turn limit given the parent's: the definition's own,
    /// or half the parent's (at least 1).
    ///
    /// ```
    /// use zr_caps::AgentDefinition;
    /// let mut d = AgentDefinition::new("scout".parse().unwrap(), "d", "p");
    /// assert_eq!(d.effective_max_turns(20), 10);
    /// assert_eq!(d.effective_max_turns(1), 1);
    /// d.max_turns = Some(3);
    /// assert_eq!(d.effective_max_turns(20), 3);
    /// ```
    #[must_use]
    pub fn effective_max_turns(&self, parent_max_turns: u32) -> u32 {
        self.max_turns.unwrap_or((parent_max_turns / 2).max(1))
    }
}
