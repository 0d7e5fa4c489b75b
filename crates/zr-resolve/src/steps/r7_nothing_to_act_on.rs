//! R7 A tool with nothing to act on is not offered: `Skill` is removed when
//! the agent has no skills, and an agent without `Skill` has no skills;
//! `Task` and `MultiTask` are removed when delegation is off.
//!
//! The agent's skills are its capabilities' view of the registry, in
//! order, each once; a name not in the registry is a warning, and so are
//! skills lost for want of `Skill`.

use std::collections::BTreeSet;
use std::sync::Arc;

use zr_caps::SkillView;
use zr_types::{SkillDefinition, ToolDefinition, ToolOrigin};

use crate::draft::Draft;
use crate::input::ResolveInput;
use crate::pool::{RemovalReason, Step, Warning};
use crate::steps::r4_derived::is_delegation;

/// Returns the agent's skills.
pub(crate) fn nothing_to_act_on(
    input: &ResolveInput<'_>,
    pool: &mut Draft,
) -> Vec<Arc<SkillDefinition>> {
    let mut skills = select_skills(&input.capabilities.skills, input.skills, pool);
    let has_skill_tool = pool.tools().any(|tool| is_builtin(tool, "Skill"));
    if !has_skill_tool && !skills.is_empty() {
        pool.warn(Warning::SkillsWithoutSkillTool {
            skills: skills.iter().map(|s| s.name.clone()).collect(),
        });
        skills.clear();
    }
    let delegation = input.policy.delegation;
    pool.remove(Step::R7, |tool| {
        if skills.is_empty() && is_builtin(tool, "Skill") {
            Some(RemovalReason::NoSkills)
        } else if !delegation && is_delegation(tool) {
            Some(RemovalReason::DelegationOff)
        } else {
            None
        }
    });
    skills
}

fn is_builtin(tool: &ToolDefinition, name: &str) -> bool {
    tool.origin == ToolOrigin::Builtin && tool.name.is(name)
}

/// The capabilities' view of the registry.
fn select_skills(
    view: &SkillView,
    registry: &[Arc<SkillDefinition>],
    pool: &mut Draft,
) -> Vec<Arc<SkillDefinition>> {
    let mut seen = BTreeSet::new();
    match view {
        SkillView::All => registry
            .iter()
            .filter(|s| seen.insert(s.name.clone()))
            .cloned()
            .collect(),
        SkillView::Only(names) => {
            let mut out = Vec::with_capacity(names.len());
            for name in names {
                if !seen.insert(name.clone()) {
                    continue;
                }
                match registry.iter().find(|s| &s.name == name) {
                    Some(skill) => out.push(Arc::clone(skill)),
                    None => pool.warn(Warning::UnknownSkill { name: name.clone() }),
                }
            }
            out
        }
    }
}
