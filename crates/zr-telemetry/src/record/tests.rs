//! Attributes are OTLP bytes in one buffer; setting a key twice keeps the
//! last value (and the name that reads it right); events beyond the
//! limit are counted.

use super::*;

fn attributes(span: &SpanRecord) -> Vec<(String, String)> {
    decoded(span.attributes(), false)
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn a_key_set_twice_keeps_the_last_value_and_the_name_follows() {
    let mut span = SpanRecord::new(1, 2, 0, "invoke_agent");
    span.set("first", AttrValue::Str("one"));
    let agent = span
        .push("gen_ai.agent.name", AttrValue::Str("worker"))
        .unwrap();
    span.name = Name::With("invoke_agent", agent);
    span.set("n", AttrValue::I64(1));
    // Replacing the first entry moves the name's bytes.
    span.set("first", AttrValue::Str("two-2"));
    span.set("n", AttrValue::I64(2));
    assert_eq!(
        attributes(&span),
        pairs(&[
            ("gen_ai.agent.name", "worker"),
            ("first", "two-2"),
            ("n", "2")
        ])
    );
    assert_eq!(span.name_parts(), ("invoke_agent", Some("worker")));
}

#[test]
fn names_are_plain_or_completed() {
    let mut span = SpanRecord::new(1, 2, 0, "execute_tool");
    assert_eq!(span.name_parts(), ("execute_tool", None));
    let tool = span
        .push("gen_ai.tool.name", AttrValue::Str("Bash"))
        .unwrap();
    span.name = Name::With("execute_tool", tool);
    assert_eq!(span.name_parts(), ("execute_tool", Some("Bash")));
}

#[test]
fn events_beyond_the_limit_are_counted_not_kept() {
    let mut span = SpanRecord::new(1, 2, 0, "chat");
    for _ in 0..MAX_EVENTS + 2 {
        let mut event = EventRecord::new(0, "retry");
        event.attribute("zr.retry.attempt", AttrValue::I64(1));
        span.add_event(event);
    }
    assert_eq!(span.events.len(), MAX_EVENTS);
    assert_eq!(span.dropped_events, 2);
    assert_eq!(
        decoded(&span.events[0].attributes, true),
        pairs(&[("zr.retry.attempt", "1")])
    );
}
