//! Scenario parsing never panics: arbitrary text, and JSON built from the
//! format's own vocabulary with values of every type in every place.

use proptest::prelude::*;
use serde_json::{Map, Value};
use zr_resolve::Scenario;

const KEYS: &[&str] = &[
    "builtins",
    "options",
    "capabilities",
    "query_override",
    "skills",
    "policy",
    "subagents",
    "custom_tools",
    "mcp_tools",
    "connection_tools",
    "allowed_tools",
    "disallowed_tools",
    "name",
    "server",
    "description",
    "read_only",
    "defer",
    "input_schema",
    "lazy",
    "auto",
    "derived_blocklist",
    "background_allowlist",
    "delegation",
    "kind",
    "background",
    "root",
    "x",
];
const STRINGS: &[&str] = &[
    "default",
    "always",
    "never",
    "explore",
    "plan",
    "fork",
    "general-purpose",
    "custom",
    "Read",
    "Task",
    "mcp__gh",
    "mcp__gh__x",
    "*",
    "Bash(git:*)",
    "",
    "a b",
    "gh",
    "review",
    "é",
    "mcp__",
];

fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        prop::sample::select(STRINGS).prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(KEYS), inner), 0..5).prop_map(|kv| {
                Value::Object(
                    kv.into_iter()
                        .map(|(k, v)| (k.to_owned(), v))
                        .collect::<Map<_, _>>(),
                )
            }),
        ]
    })
}

/// Either a report, root first, or an error that says where: never a panic.
fn check(text: &str) -> Result<(), TestCaseError> {
    match Scenario::from_json(text).and_then(|s| s.resolve()) {
        Ok(report) => prop_assert_eq!(report.agents[0].agent.as_str(), "root"),
        Err(err) => {
            let err = err.to_string();
            prop_assert!(
                err.starts_with("scenario: at ") || err.starts_with("cannot resolve agent '"),
                "an error that names no place: {}",
                err
            );
        }
    }
    Ok(())
}

proptest! {
    #[test]
    fn prop_arbitrary_text_never_panics(text in "\\PC{0,200}") {
        check(&text)?;
    }

    #[test]
    fn prop_vocabulary_json_never_panics(value in json()) {
        check(&value.to_string())?;
    }
}
