//! Tests of the id found at the start of a message that cannot be read whole.

use serde_json::{Value, json};

use super::request_id;

#[test]
fn the_id_is_found_among_the_top_level_members_before_the_cut() {
    let cases: &[(&str, Value)] = &[
        (
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"argu"#,
            json!(7),
        ),
        (r#" { "id" : "a-1" , "params": {"#, json!("a-1")),
        (
            r#"{"jsonrpc":"2.0","method":"x","params":{"id":3},"id":4}"#,
            json!(4),
        ),
        // The id comes after a member cut off: not seen.
        (
            r#"{"jsonrpc":"2.0","params":{"id":3,"text":"aaa"#,
            Value::Null,
        ),
        // Not a request id.
        (r#"{"id":{"a":1},"#, Value::Null),
        (r#"{"id":null,"#, Value::Null),
        (r#"["id",1]"#, Value::Null),
        ("not json", Value::Null),
        ("", Value::Null),
    ];
    for (start, id) in cases {
        assert_eq!(&request_id(start.as_bytes()), id, "{start}");
    }
}

#[test]
fn an_error_response_has_the_members_in_the_specifications_order() {
    assert_eq!(
        super::error(Value::Null, super::PARSE_ERROR, "Parse error: x"),
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: x"}}"#
    );
    let line = super::error(json!("a"), super::INVALID_REQUEST, "too \"long\"");
    assert_eq!(
        serde_json::from_str::<Value>(&line).unwrap(),
        json!({"jsonrpc": "2.0", "id": "a", "error": {"code": -32600, "message": "too \"long\""}})
    );
}
