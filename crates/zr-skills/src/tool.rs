//! The `Skill` tool: loads one of the calling agent's skills, reading its
//! body from disk at call time (progressive disclosure).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Value, json};
use zr_caps::parse_front_matter;
use zr_types::{
    AgentId, Annotations, BoxFuture, BuiltinName, SkillBody, SkillDefinition, ToolCall,
    ToolContext, ToolDefinition, ToolError, ToolHandler, ToolOrigin, ToolOutput,
};

use crate::error::{BodyError, Problem};
use crate::roots::Roots;
use crate::skill::front_matter_diagnostic;
use crate::stamp::read_open_bounded;

mod confine;

/// The placeholder replaced by the call's `args`.
const ARGUMENTS_PLACEHOLDER: &str = "$ARGUMENTS";

/// The handler of the `Skill` tool.
///
/// A [`ToolContext`] names only the calling agent, so the handler keeps
/// which skills each agent has. The engine calls [`SkillTool::grant`] when
/// it starts an agent, with the skills of the agent's resolved pool
/// (`ResolvedPool::skills`), and [`SkillTool::revoke`] when the agent ends.
/// An agent without a grant has no skills. A call only ever reaches the
/// caller's own skills: an unknown name is answered with the closest of
/// the caller's own skills (by name, or by words of their descriptions:
/// how the model finds a skill the listing left out), never another
/// agent's.
///
/// A call reads the skill's `SKILL.md` at that moment and returns its body
/// with `$ARGUMENTS` replaced by `args` (or `args` appended under
/// `ARGUMENTS:` when the body has no placeholder), headed by the skill's
/// folder so that the agent can read the files beside it.
///
/// The root rule is applied again at that moment: built with
/// [`SkillTool::with_roots`] (the skill registry's roots), a skill found
/// under one of them is read only if its file is still inside that root,
/// so a skill folder or `SKILL.md` replaced by a link out of the root after
/// the view is refused, not read.
#[derive(Debug, Default)]
pub struct SkillTool {
    grants: Mutex<BTreeMap<AgentId, Arc<[Arc<SkillDefinition>]>>>,
    roots: Roots,
}

impl SkillTool {
    /// A handler with no grants that confines no file to a root: for skills
    /// the host defines itself. With a [`SkillRegistry`](crate::SkillRegistry),
    /// use [`SkillTool::with_roots`].
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// A handler with no grants that reads a skill found under one of
    /// `roots` (pass [`SkillRegistry::roots`](crate::SkillRegistry::roots))
    /// only while its file is still inside that root.
    #[must_use]
    pub fn with_roots(roots: Roots) -> Self {
        Self {
            grants: Mutex::default(),
            roots,
        }
    }

    /// The tool's definition: name `Skill`, input `{skill, args?}`, its
    /// read-only and deferred flags from the builtin registry
    /// ([`zr_types::builtin_spec`]). The description is the generic one;
    /// each agent's request carries it with that agent's own skills listed
    /// (the engine composes it per agent, see `zr_engine::skill_listing`).
    #[must_use]
    pub fn definition() -> ToolDefinition {
        let name = BuiltinName::Skill.tool_name();
        let spec = BuiltinName::Skill.spec();
        ToolDefinition::new(
            name,
            "Load a skill: its instructions, and the folder that holds its other files. \
             Call it when the task matches one of your skills' descriptions.",
            ToolOrigin::Builtin,
        )
        .with_schema(json!({
            "type": "object",
            "properties": {
                "skill": {"type": "string", "description": "The skill's name, e.g. \"pdf-tools\"."},
                "args": {"type": "string", "description": "Optional arguments for the skill."}
            },
            "required": ["skill"],
            "additionalProperties": false
        }))
        .with_annotations(Annotations {
            read_only: spec.read_only,
            destructive: Some(false),
            idempotent: Some(true),
            open_world: Some(false),
        })
        .with_defer(spec.deferred.then_some(true))
    }

    /// Gives `agent` exactly `skills` (replacing an earlier grant).
    pub fn grant(&self, agent: AgentId, skills: impl IntoIterator<Item = Arc<SkillDefinition>>) {
        let mut skills: Vec<Arc<SkillDefinition>> = skills.into_iter().collect();
        skills.sort_by(|a, b| a.name.cmp(&b.name));
        skills.dedup_by(|a, b| a.name == b.name);
        self.lock().insert(agent, skills.into());
    }

    /// Removes `agent`'s skills (when it ends).
    pub fn revoke(&self, agent: &AgentId) {
        self.lock().remove(agent);
    }

    /// The skills `agent` has, sorted by name.
    #[must_use]
    pub fn granted(&self, agent: &AgentId) -> Arc<[Arc<SkillDefinition>]> {
        self.lock()
            .get(agent)
            .map_or_else(|| Arc::from(Vec::new()), Arc::clone)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<AgentId, Arc<[Arc<SkillDefinition>]>>> {
        self.grants.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Answers one call of `agent`.
    fn run(&self, call: &ToolCall, agent: &AgentId) -> ToolOutput {
        let input = match Input::read(&call.input) {
            Ok(input) => input,
            Err(message) => return ToolOutput::error(format!("{}: {message}", call.name)),
        };
        let skills = self.granted(agent);
        let Some(skill) = skills.iter().find(|s| s.name.as_str() == input.skill) else {
            return ToolOutput::error(unknown(input.skill, &skills));
        };
        let body = match load_body(skill, &self.roots) {
            Ok(body) => body,
            Err(error) => return ToolOutput::error(error.to_string()),
        };
        let body = substitute(&body, input.args);
        let mut text = format!("Skill: {}\n", skill.name);
        if let Some(folder) = &skill.root {
            let _ = writeln!(
                text,
                "Folder: {} (paths in these instructions are relative to it; read its other files from there)",
                folder.display()
            );
        }
        if let Some(tools) = &skill.allowed_tools {
            let _ = writeln!(text, "Allowed tools: {}", tools.join(", "));
        }
        text.push('\n');
        text.push_str(&body);
        ToolOutput::text(text).with_display(format!("loaded skill {}", skill.name))
    }
}

impl ToolHandler for SkillTool {
    fn call<'a>(
        &'a self,
        call: &'a ToolCall,
        ctx: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        // A skill file is small: reading it inside the future is cheap.
        Box::pin(async move { Ok(self.run(call, &ctx.agent)) })
    }
}

/// The call's input.
struct Input<'a> {
    skill: &'a str,
    args: Option<&'a str>,
}

impl<'a> Input<'a> {
    fn read(input: &'a Value) -> Result<Self, String> {
        let Value::Object(map) = input else {
            return Err(format!(
                "the input must be an object like {{\"skill\": \"NAME\", \"args\": \"...\"}}, found {}",
                crate::skill::describe(input)
            ));
        };
        let skill = match map.get("skill") {
            Some(Value::String(s)) if !s.trim().is_empty() => s.trim(),
            Some(other) if !other.is_string() => {
                return Err(format!(
                    "'skill' must be a string (the skill's name), found {}",
                    crate::skill::describe(other)
                ));
            }
            _ => return Err("'skill' (the skill's name, a string) is required".to_owned()),
        };
        let args = match map.get("args") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.as_str()),
            Some(other) => {
                return Err(format!(
                    "'args' must be a string, found {}",
                    crate::skill::describe(other)
                ));
            }
        };
        Ok(Self { skill, args })
    }
}

/// Words too common to tell skills apart.
const COMMON: [&str; 12] = [
    "the", "and", "for", "with", "this", "that", "from", "into", "when", "use", "skill", "about",
];

/// How many skills an unknown name is answered with.
const CLOSEST: usize = 10;

/// The answer to a name the agent does not have: the closest of its own
/// skills (never another agent's), at most [`CLOSEST`], so that a skill the
/// listing left out can be found by a name close to its own or by words
/// of its description.
fn unknown(name: &str, skills: &[Arc<SkillDefinition>]) -> String {
    let mut text = format!("unknown skill '{name}'. ");
    if skills.is_empty() {
        text.push_str("This agent has no skills.");
        return text;
    }
    let closest = closest(name, skills);
    if closest.is_empty() {
        text.push_str("No skill of this agent has a name or description close to it; call Skill with another name or other words of what the skill does.");
        return text;
    }
    let _ = write!(
        text,
        "The closest of this agent's {} skills (call Skill again with one of these names):",
        skills.len()
    );
    for skill in closest {
        let _ = write!(text, "\n- {}: {}", skill.name, skill.description);
    }
    text
}

/// The skills of `skills` closest to `query`, best first, at most
/// [`CLOSEST`]: by name (one contains the other, or a few letters apart),
/// then by how many of the query's words (3 letters or more, not
/// [`COMMON`]) the name and description hold; ties by name.
fn closest<'a>(query: &str, skills: &'a [Arc<SkillDefinition>]) -> Vec<&'a SkillDefinition> {
    let query = query.to_lowercase();
    let words: Vec<&str> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3 && !COMMON.contains(w))
        .collect();
    let mut scored: Vec<(usize, &SkillDefinition)> = skills
        .iter()
        .filter_map(|skill| {
            let name = skill.name.as_str().to_lowercase();
            let about = format!("{name} {}", skill.description.to_lowercase());
            let mut score = words.iter().filter(|w| about.contains(*w)).count();
            if name.contains(&query) || query.contains(&name) {
                score += 10;
            } else if zr_types::edit_distance(&name, &query) <= 2 {
                score += 8;
            }
            (score > 0).then_some((score, skill.as_ref()))
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
    scored.into_iter().take(CLOSEST).map(|(_, s)| s).collect()
}

/// The skill's instructions, read now (from inside its root, when it was
/// found under one of `roots`).
fn load_body(skill: &SkillDefinition, roots: &Roots) -> Result<String, BodyError> {
    let path = match &skill.body {
        SkillBody::Inline(text) => return Ok(text.clone()),
        SkillBody::File(path) => path,
    };
    let fail = |problem: Problem| BodyError::Unreadable {
        skill: skill.name.to_string(),
        path: path.clone(),
        problem: Box::new(problem),
    };
    let file = confine::open_confined(path, roots).map_err(fail)?;
    let text = read_open_bounded(file).map_err(fail)?;
    parse_front_matter(Path::new(path), &text)
        .map(|front| front.body)
        .map_err(|e| fail(front_matter_diagnostic(e).problem))
}

/// `body` with every `$ARGUMENTS` replaced by `args`; without a
/// placeholder, non-empty `args` are appended.
#[must_use]
pub(crate) fn substitute(body: &str, args: Option<&str>) -> String {
    let args = args.unwrap_or("");
    if body.contains(ARGUMENTS_PLACEHOLDER) {
        body.replace(ARGUMENTS_PLACEHOLDER, args)
    } else if args.trim().is_empty() {
        body.to_owned()
    } else {
        format!("{body}\n\nARGUMENTS: {args}")
    }
}
