//! The Skill description's listing: exactly the agent's skills, bounded,
//! and the count of those left out.

use std::sync::Arc;

use zr_types::{SkillDefinition, ToolDefinition, ToolOrigin};

use super::{DEFAULT_SKILL_LISTING_CHARS, SkillListing, advertised};

fn budget(chars: usize) -> SkillListing {
    SkillListing {
        budget: chars,
        first: Vec::new(),
    }
}

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
    let shown = advertised(&skill_tool(), &skills, &budget(DEFAULT_SKILL_LISTING_CHARS));
    assert_eq!(
        shown.description,
        "Load a skill.\n\nYour skills (name: when to use it):\n- alpha: Use for alpha work.\n- beta: Use for beta."
    );
    assert!(!shown.description.contains("SECRET"));
    assert_eq!(shown.name.as_str(), "Skill");
}

#[test]
fn descriptions_are_shortened_to_one_length_before_any_skill_is_left_out() {
    let skills = [
        skill("alpha", "0123456789"),
        skill("beta", "0123456789"),
        skill("gamma", "short"),
    ];
    // Names: "\n- alpha" 8, "\n- beta" 7, "\n- gamma" 8; with a description
    // cut to c characters each line grows by ": " + c + "…" (3 + c), and
    // "short" by 7 once c >= 5: 23 + 3 * (3 + 4) = 44 at c = 4.
    let shown = advertised(&skill_tool(), &skills, &budget(44));
    assert!(
        shown.description.ends_with(
            "\n- alpha: 0123…\n- beta: 0123…\n- gamma: shor…\n(Descriptions are shortened to fit the listing's 44 characters; Skill loads a skill's full instructions.)"
        ),
        "{}",
        shown.description
    );
    // Names alone fit in 23: every skill stays, without its description.
    let shown = advertised(&skill_tool(), &skills, &budget(23));
    assert!(
        shown.description.ends_with("\n- alpha\n- beta\n- gamma\n(Descriptions are shortened to fit the listing's 23 characters; Skill loads a skill's full instructions.)"),
        "{}",
        shown.description
    );
}

#[test]
fn skills_are_left_out_only_when_their_names_do_not_fit_and_the_rest_stay_findable() {
    let skills = [
        skill("alpha", "aaaa"),
        skill("beta", "bbbb"),
        skill("gamma", "cccc"),
    ];
    let shown = advertised(&skill_tool(), &skills, &budget(22));
    assert!(
        shown.description.contains("\n- alpha\n- beta\n(1 more skill is not listed, and the others are listed by name only: the listing is limited to 22 characters. To find a skill not listed, call Skill with its name or with words of what it does as `skill`"),
        "{}",
        shown.description
    );
    assert!(!shown.description.contains("gamma"));
}

#[test]
fn the_skills_named_first_come_first_and_keep_their_place_when_the_listing_is_cut() {
    let skills = [
        skill("alpha", "aaaa"),
        skill("beta", "bbbb"),
        skill("gamma", "cccc"),
    ];
    let first = |names: &[&str], chars| SkillListing {
        budget: chars,
        first: names.iter().map(|n| n.parse().unwrap()).collect(),
    };
    let shown = advertised(
        &skill_tool(),
        &skills,
        &first(&["gamma", "nope", "gamma"], 100),
    );
    assert!(
        shown
            .description
            .ends_with("\n- gamma: cccc\n- alpha: aaaa\n- beta: bbbb"),
        "{}",
        shown.description
    );
    let shown = advertised(&skill_tool(), &skills, &first(&["gamma"], 16));
    assert!(
        shown
            .description
            .contains("\n- gamma\n- alpha\n(1 more skill"),
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
    assert!(Arc::ptr_eq(
        &advertised(&read, &skills, &budget(100)),
        &read
    ));
    let tool = skill_tool();
    let bare = advertised(&tool, &[], &budget(100));
    assert_eq!(bare.description, "Load a skill.", "no skills, no listing");
}

#[test]
fn the_listing_is_a_pure_function_of_skills_and_budget() {
    let skills = [skill("alpha", "a"), skill("beta", "b")];
    let tool = skill_tool();
    let one = serde_json::to_string(&*advertised(&tool, &skills, &budget(100))).unwrap();
    let two = serde_json::to_string(&*advertised(&tool, &skills, &budget(100))).unwrap();
    assert_eq!(one, two);
}
