//! Tests of schema generation and model-facing input errors.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::*;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code, reason = "only parsed")]
struct Probe {
    /// A path.
    file_path: String,
    /// A count.
    limit: Option<u64>,
}

fn text(out: &ToolOutput) -> String {
    match &out.content[0] {
        zr_types::ToolResultContent::Text { text } => text.clone(),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn optional_fields_are_not_nullable_and_have_no_rust_formats() {
    let schema = schema_for::<Probe>();
    assert_eq!(schema["properties"]["limit"]["type"], "integer");
    assert!(schema["properties"]["limit"].get("format").is_none());
    assert_eq!(schema["required"], json!(["file_path"]));
    assert!(schema.get("$schema").is_none());
}

#[test]
fn wrong_type_names_the_field_and_lists_fields() {
    let err = parse::<Probe>("Read", &json!({"file_path": "a", "limit": "ten"})).unwrap_err();
    assert!(err.is_error);
    let t = text(&err);
    assert!(t.contains("at 'limit'"), "{t}");
    assert!(t.contains("file_path (string, required)"), "{t}");
}

#[test]
fn missing_and_unknown_fields_are_explained() {
    let t = text(&parse::<Probe>("Read", &json!({})).unwrap_err());
    assert!(t.contains("missing field `file_path`"), "{t}");
    let t = text(&parse::<Probe>("Read", &json!({"file_path": "a", "path": "b"})).unwrap_err());
    assert!(t.contains("unknown field `path`"), "{t}");
    let t = text(&parse::<Probe>("Read", &json!("a")).unwrap_err());
    assert!(t.contains("must be a JSON object"), "{t}");
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code, reason = "only parsed")]
struct WithEnum {
    mode: Mode,
}

/// A documented enum becomes a `oneOf` of constants.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Mode {
    /// First.
    Fast,
    /// Second.
    Slow,
}

#[test]
fn enum_fields_are_listed_with_their_values() {
    assert_eq!(
        fields_hint::<WithEnum>(),
        "Fields: mode (one of \"fast\", \"slow\", required)."
    );
    assert!(schema_for::<WithEnum>().get("description").is_none());
}

/// Schemas are byte-identical from one generation to the next, with keys
/// sorted at every level (the snapshots must not depend on the build's
/// serde_json map type).
#[test]
fn schemas_are_deterministic_and_sorted() {
    fn sorted(v: &serde_json::Value) -> bool {
        match v {
            serde_json::Value::Object(map) => {
                let keys: Vec<&String> = map.keys().collect();
                keys.windows(2).all(|w| w[0] < w[1]) && map.values().all(sorted)
            }
            serde_json::Value::Array(items) => items.iter().all(sorted),
            _ => true,
        }
    }
    let tools = crate::registry::BuiltinTools::new("/nonexistent/cron.json");
    let first: Vec<String> = tools
        .tools()
        .iter()
        .map(|(d, _)| serde_json::to_string(&d.input_schema).unwrap())
        .collect();
    for (def, _) in tools.tools() {
        assert!(sorted(&def.input_schema), "{}", def.name);
    }
    let again: Vec<String> = tools
        .tools()
        .iter()
        .map(|(d, _)| serde_json::to_string(&d.input_schema).unwrap())
        .collect();
    assert_eq!(first, again);
}
