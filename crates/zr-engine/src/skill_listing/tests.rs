//! The Skill description's listing: exactly the agent's skills, bounded,
//! and the count of those left out.

use std::sync::Arc;

use zr_types::{SkillDefinition, ToolDefinition, ToolOrigin};

use super::{DEFAULT_SKILL_LISTING_CHARS, advertised};

fn skill(name: &str, description: &str) -> Arc<SkillDefinition> {
    Arc::new(SkillDefinition::inline(
        name.parse().unwrap(),
        description,
        "SECRET BODY",
    ))
}

fn skill_tool() -> Arc<ToolDefinition> {
    Arc::new(ToolDefinition::new(
        "Skill".parse().unwrap(),
        "Load a skill.",
        ToolOrigin::Builtin,
    ))
}

#[test]
fn the_listing_names_each_skill_with_its_description_and_never_its_body() {
    let skills = [
        skill("alpha", "Use for\n  alpha   work."),
        skill("beta", "Use for beta."),
    ];
    let shown = advertised(&skill_tool(), &skills, DEFAULT_SKILL_LISTING_CHARS);
    assert_eq!(
        shown.description,
        "Load a skill.\n\nYour skills (name: when to use it):\n- alpha: Use for alpha work.\n- beta: Use for beta."
    );
    assert!(!shown.description.contains("SECRET"));
    assert_eq!(shown.name.as_str(), "Skill");
}

#[test]
fn skills_over_the_budget_are_left_out_and_counted() {
    let skills = [
        skill("alpha", "aaaa"),
        skill("beta", "bbbb"),
        skill("gamma", "cccc"),
    ];
    // "\n- alpha: aaaa" is 14 characters, "\n- beta: bbbb" 13.
    let shown = advertised(&skill_tool(), &skills, 27);
    assert!(shown.description.ends_with(
        "- alpha: aaaa\n- beta: bbbb\n(1 more skill is not listed: the listing is limited to 27 characters.)"
    ), "{}", shown.description);
    let shown = advertised(&skill_tool(), &skills, 26);
    assert!(
        shown
            .description
            .ends_with("- alpha: aaaa\n(2 more skills are not listed: the listing is limited to 26 characters.)"),
        "{}",
        shown.description
    );
}

#[test]
fn other_tools_and_a_custom_skill_named_otherwise_are_untouched() {
    let skills = [skill("alpha", "a")];
    let read = Arc::new(ToolDefinition::new(
        "Read".parse().unwrap(),
        "Read a file.",
        ToolOrigin::Builtin,
    ));
    assert!(Arc::ptr_eq(&advertised(&read, &skills, 100), &read));
    let tool = skill_tool();
    let bare = advertised(&tool, &[], 100);
    assert_eq!(bare.description, "Load a skill.", "no skills, no listing");
}

#[test]
fn the_listing_is_a_pure_function_of_skills_and_budget() {
    let skills = [skill("alpha", "a"), skill("beta", "b")];
    let tool = skill_tool();
    let one = serde_json::to_string(&*advertised(&tool, &skills, 100)).unwrap();
    let two = serde_json::to_string(&*advertised(&tool, &skills, 100)).unwrap();
    assert_eq!(one, two);
}
