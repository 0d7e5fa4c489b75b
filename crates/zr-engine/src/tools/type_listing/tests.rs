//! The type listing: every type while they fit, shortened descriptions
//! before any type is left out, bounded whatever the count, and the
//! closest names for an unknown one.

use std::collections::BTreeMap;

use zr_caps::AgentDefinition;
use zr_types::AgentName;

use super::{DEFAULT_TYPE_LISTING_CHARS, MIN_DESCRIPTION_CHARS, closest, listing};

fn types(specs: &[(&str, &str)]) -> BTreeMap<AgentName, AgentDefinition> {
    specs
        .iter()
        .map(|(name, description)| {
            let name: AgentName = name.parse().unwrap();
            let definition = AgentDefinition::new(name.clone(), *description, "You work.");
            (name, definition)
        })
        .collect()
}

/// `n` types `type-0000`... with descriptions of `chars` characters.
fn many(n: usize, chars: usize) -> BTreeMap<AgentName, AgentDefinition> {
    let names: Vec<String> = (0..n).map(|i| format!("type-{i:04}")).collect();
    let description = "d".repeat(chars);
    let specs: Vec<(&str, &str)> = names
        .iter()
        .map(|n| (n.as_str(), description.as_str()))
        .collect();
    types(&specs)
}

#[test]
fn types_that_fit_are_listed_whole_on_one_line_each() {
    let shown = listing(
        &types(&[("reviewer", "Reviews\n  code."), ("tester", "Runs tests.")]),
        DEFAULT_TYPE_LISTING_CHARS,
    );
    assert_eq!(
        shown,
        "\n\nSubagent types (name: when to use it):\n- reviewer: Reviews code.\n- tester: Runs tests."
    );
}

#[test]
fn no_types_says_every_task_forks() {
    let shown = listing(&types(&[]), DEFAULT_TYPE_LISTING_CHARS);
    assert_eq!(
        shown,
        "\n\nNo subagent types are defined: every task runs as a fork of you."
    );
}

#[test]
fn descriptions_are_shortened_before_any_type_is_left_out() {
    // 20 entries of "\n- type-00NN: " (14) + 200 characters: 4,280 in all.
    let all = many(20, 200);
    let shown = listing(&all, 3_000);
    for name in all.keys() {
        assert!(shown.contains(&format!("\n- {name}: ")), "{name}");
    }
    // The longest cap that fits: 20 * (14 + cap + 1) <= 3,000, cap = 135.
    assert!(
        shown.contains(&format!(": {}…\n", "d".repeat(135))),
        "{}",
        shown
    );
    assert!(
        shown.ends_with(
            "\n(Descriptions are shortened to 135 characters to fit the listing's 3000.)"
        )
    );
}

#[test]
fn past_the_shortest_descriptions_the_last_types_are_left_out_and_counted() {
    let all = many(1_000, 300);
    let shown = listing(&all, DEFAULT_TYPE_LISTING_CHARS);
    assert!(shown.contains("more types are not listed"));
    // Each entry is 14 + 80 + 1 characters: 63 fit in 6,000.
    let listed = shown.matches("\n- type-").count();
    assert_eq!(listed, 6_000 / (14 + MIN_DESCRIPTION_CHARS + 1));
    assert!(shown.contains("\n- type-0000: "), "the first given first");
    assert!(
        shown.ends_with(&format!(
            "\n({} more types are not listed: the listing is limited to 6000 characters. Any type can be named in subagent_type; naming one that does not exist returns the closest names.)",
            1_000 - listed
        )),
        "{}",
        &shown[shown.len() - 300..]
    );
}

#[test]
fn the_listing_is_bounded_whatever_the_count_of_types() {
    for n in [0, 50, 350, 1_000, 10_000] {
        let shown = listing(&many(n, 400), DEFAULT_TYPE_LISTING_CHARS);
        let chars = shown.chars().count();
        assert!(
            chars <= DEFAULT_TYPE_LISTING_CHARS + 300,
            "{n} types: {chars}"
        );
    }
}

#[test]
fn the_closest_names_come_from_substrings_then_edit_distance() {
    let names = [
        "code-reviewer",
        "security-reviewer",
        "test-runner",
        "docs-writer",
        "planner",
        "explorer",
        "debugger",
    ];
    let found = closest(names, "reviewer");
    assert_eq!(found.len(), 5, "at most five");
    assert_eq!(found[..2], ["code-reviewer", "security-reviewer"]);
    assert_eq!(closest(names, "Test_Runer")[0], "test-runner");
    assert_eq!(closest(names, "plan")[0], "planner");
    assert_eq!(closest(names, "docswriter")[0], "docs-writer");
}
