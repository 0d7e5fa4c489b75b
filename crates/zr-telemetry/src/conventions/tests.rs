//! Finish reasons become arrays; content goes unless asked for.

use super::*;

fn attrs() -> Vec<KeyValue> {
    vec![
        KeyValue::new("gen_ai.response.finish_reasons", "end_turn"),
        KeyValue::new("gen_ai.input.messages", "[secret]"),
        KeyValue::new("gen_ai.tool.call.result", "secret"),
        KeyValue::new("gen_ai.usage.input_tokens", 3_i64),
    ]
}

#[test]
fn finish_reasons_become_a_string_array() {
    let mut a = attrs();
    fix(&mut a, true);
    assert_eq!(
        a[0].value,
        Value::Array(Array::String(vec![StringValue::from("end_turn")]))
    );
    assert_eq!(a.len(), 4, "content kept when asked for");
}

#[test]
fn content_is_removed_unless_asked_for() {
    let mut a = attrs();
    fix(&mut a, false);
    let keys: Vec<&str> = a.iter().map(|kv| kv.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "gen_ai.response.finish_reasons",
            "gen_ai.usage.input_tokens"
        ]
    );
}
