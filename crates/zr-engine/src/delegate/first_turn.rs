//! A typed subagent's first user turn: the skills its type preloads (the
//! agent file's `skills`, whose instructions Claude Code puts into the
//! subagent's context at start), its type's `initialPrompt`, then the task
//! it was given.
//!
//! Each preloaded skill is read when the agent starts, from the session's
//! skills registry (whether or not the agent's tools hold `Skill`, as
//! Claude Code preloads them; a name the registry does not hold is
//! skipped), at most [`SKILL_CHARS`] characters each and
//! [`PRELOAD_CHARS`] in all; what is cut says so, and the `Skill` tool
//! still loads the whole text. The turn is recorded in the transcript, so a
//! resumed agent keeps what it started with.

use std::path::Path;
use std::sync::Arc;

use zr_caps::AgentDefinition;
use zr_types::{ContentBlock, Message, MessageRole, SkillBody, SkillDefinition};

/// The most characters of one preloaded skill.
pub(crate) const SKILL_CHARS: usize = 12_000;
/// The most characters of all preloaded skills together.
pub(crate) const PRELOAD_CHARS: usize = 36_000;

/// The first user message of an agent of `definition` given `task`, with
/// `skills` (the session's registry) to preload from.
pub(crate) fn message(
    definition: &AgentDefinition,
    skills: &[Arc<SkillDefinition>],
    task: &str,
) -> Message {
    let mut content = Vec::new();
    let mut left = PRELOAD_CHARS;
    for name in &definition.preload_skills {
        let Some(skill) = skills.iter().find(|s| &s.name == name) else {
            tracing::debug!(skill = %name, agent = %definition.name, "a preloaded skill is not in the skills registry");
            continue;
        };
        let body = match body(skill) {
            Ok(body) => body,
            Err(why) => {
                tracing::warn!(skill = %name, agent = %definition.name, "the skill could not be preloaded: {why}");
                continue;
            }
        };
        let limit = SKILL_CHARS.min(left);
        if limit == 0 {
            break;
        }
        let count = body.chars().count();
        let mut text = format!("<skill name=\"{name}\">\n");
        if count > limit {
            text.extend(body.chars().take(limit));
            text.push_str(&format!(
                "\n[... {} more characters: load the whole skill with the Skill tool]",
                count - limit
            ));
        } else {
            text.push_str(&body);
        }
        text.push_str("\n</skill>");
        left -= count.min(limit);
        content.push(ContentBlock::Text { text });
    }
    let text = match &definition.initial_prompt {
        Some(initial) => format!("{initial}\n\n{task}"),
        None => task.to_owned(),
    };
    if content.is_empty() {
        return Message::user_text(text);
    }
    content.push(ContentBlock::Text { text });
    Message {
        role: MessageRole::User,
        content,
    }
}

/// The instructions of `skill`, read now.
fn body(skill: &SkillDefinition) -> Result<String, String> {
    match &skill.body {
        SkillBody::Inline(text) => Ok(text.clone()),
        SkillBody::File(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
            zr_caps::parse_front_matter(Path::new(path), &text)
                .map(|front| front.body)
                .map_err(|e| e.to_string())
        }
    }
}
