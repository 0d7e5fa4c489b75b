//! Tests of the output-schema check.

use serde_json::json;

use super::Structured;

fn files() -> std::sync::Arc<Structured> {
    Structured::compile(&json!({
        "type": "object",
        "properties": {"files": {"type": "array", "items": {"type": "string"}}},
        "required": ["files"],
        "additionalProperties": false
    }))
    .unwrap()
}

#[test]
fn a_matching_answer_is_its_value_fenced_or_not() {
    let schema = files();
    assert_eq!(
        schema.check(r#"{"files": ["a.rs"]}"#).unwrap(),
        json!({"files": ["a.rs"]})
    );
    assert_eq!(
        schema.check("```json\n{\"files\": []}\n```").unwrap(),
        json!({"files": []})
    );
    assert!(schema.format.strict, "all properties required, no others");
}

#[test]
fn a_wrong_answer_says_where_and_why() {
    let schema = files();
    let error = schema.check(r#"{"files": [1]}"#).unwrap_err();
    assert!(error.contains("at /files/0"), "{error}");
    assert!(error.contains("not of type \"string\""), "{error}");
    let error = schema.check("I found two files.").unwrap_err();
    assert!(
        error.starts_with("the answer is not one JSON value"),
        "{error}"
    );
}

#[test]
fn a_schema_that_is_not_one_is_refused() {
    let error = Structured::compile(&json!({"type": "objekt"})).unwrap_err();
    assert!(error.starts_with("not a valid JSON Schema"), "{error}");
    let error = Structured::compile(&json!("object")).unwrap_err();
    assert!(error.starts_with("expected a JSON Schema"), "{error}");
}
