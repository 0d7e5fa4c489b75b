//! Spans are named as the conventions say.

use super::*;

#[test]
fn operations_are_named_after_their_target() {
    assert_eq!(naming_attribute("invoke_agent"), Some("gen_ai.agent.name"));
    assert_eq!(naming_attribute("chat"), Some("gen_ai.request.model"));
    assert_eq!(naming_attribute("execute_tool"), Some("gen_ai.tool.name"));
    assert_eq!(naming_attribute("session"), None);
}
