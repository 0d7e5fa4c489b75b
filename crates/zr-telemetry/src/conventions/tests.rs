//! Which fields are span properties, content, or attributes; how spans
//! are named.

use super::*;

#[test]
fn each_field_has_its_role() {
    let cases = [
        ("otel.name", Role::Name),
        ("otel.kind", Role::Kind),
        ("otel.status_code", Role::StatusCode),
        ("otel.status_description", Role::StatusDescription),
        ("otel.other", Role::Attribute),
        ("gen_ai.response.finish_reasons", Role::FinishReasons),
        ("gen_ai.input.messages", Role::Content),
        ("gen_ai.output.messages", Role::Content),
        ("gen_ai.system_instructions", Role::Content),
        ("gen_ai.tool.call.arguments", Role::Content),
        ("gen_ai.tool.call.result", Role::Content),
        ("gen_ai.tool.call.id", Role::Attribute),
        ("zr.task.status", Role::Attribute),
    ];
    for (name, expected) in cases {
        assert_eq!(role(name), expected, "{name}");
    }
}

#[test]
fn operations_are_named_after_their_target() {
    assert_eq!(naming_attribute("invoke_agent"), Some("gen_ai.agent.name"));
    assert_eq!(naming_attribute("chat"), Some("gen_ai.request.model"));
    assert_eq!(naming_attribute("execute_tool"), Some("gen_ai.tool.name"));
    assert_eq!(naming_attribute("session"), None);
}
