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
    span.set(0, "first", AttrValue::Str("one"));
    let agent = span
        .set(1, "gen_ai.agent.name", AttrValue::Str("worker"))
        .unwrap();
    span.name = Name::With("invoke_agent", agent);
    span.set(2, "n", AttrValue::I64(1));
    // Replacing the first entry moves the name's bytes.
    span.set(
        0,
        "first",
        AttrValue::Debug(&format_args!("{}-{}", "two", 2)),
    );
    span.set(2, "n", AttrValue::I64(2));
    assert_eq!(
        attributes(&span),
        pairs(&[
            ("gen_ai.agent.name", "worker"),
            ("first", "two-2"),
            ("n", "2")
        ])
    );
    assert_eq!(span.name_parts(), ("invoke_agent", Some("worker")));
    // Fields past the mask's 64 bits are looked for in the bytes.
    span.set(70, "far", AttrValue::Bool(true));
    span.set(70, "far", AttrValue::Bool(false));
    assert_eq!(
        attributes(&span).last().unwrap(),
        &("far".to_owned(), "false".to_owned())
    );
    assert_eq!(attributes(&span).len(), 4);
}

#[test]
fn replacing_the_naming_attribute_with_no_string_leaves_the_plain_name() {
    let mut span = SpanRecord::new(1, 2, 0, "chat");
    let model = span
        .set(0, "gen_ai.request.model", AttrValue::Str("m"))
        .unwrap();
    span.name = Name::With("chat", model);
    span.set(0, "gen_ai.request.model", AttrValue::I64(3));
    assert_eq!(span.name_parts(), ("chat", None));
}

#[test]
fn names_are_plain_completed_or_given() {
    let mut span = SpanRecord::new(1, 2, 0, "invoke_agent");
    assert_eq!(span.name_parts(), ("invoke_agent", None));
    span.name = Name::Given(span.push_str("custom"));
    assert_eq!(span.name_parts(), ("custom", None));
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

#[test]
fn kinds_are_read_in_any_case() {
    assert_eq!(Kind::parse("CLIENT"), Some(Kind::Client));
    assert_eq!(Kind::parse("server"), Some(Kind::Server));
    assert_eq!(Kind::parse("sideways"), None);
}
