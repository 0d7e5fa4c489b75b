//! Skill registry (`SKILL.md` folders) and agent-type registry (`agents/*.md`).
