//! A record's strings share one buffer; setting a key twice keeps the
//! last value; events beyond the limit are counted.

use super::*;

#[test]
fn strings_share_the_buffer_and_a_key_set_twice_keeps_the_last_value() {
    let mut span = SpanRecord::new(1, 2, 0, "chat");
    let a = span.push_str("first");
    span.set("k", AttrValue::Str(a));
    let b = span.push_debug(&format_args!("{}-{}", "second", 2));
    span.set("k", AttrValue::Str(b));
    assert_eq!(span.attributes.len(), 1);
    assert_eq!(span.attributes[0].value, AttrValue::Str(b));
    assert_eq!(span.str(a), "first");
    assert_eq!(span.str(b), "second-2");
}

#[test]
fn names_are_plain_completed_or_given() {
    let mut span = SpanRecord::new(1, 2, 0, "invoke_agent");
    assert_eq!(span.name_parts(), ("invoke_agent", None));
    let agent = span.push_str("worker");
    span.name = Name::With("invoke_agent", agent);
    assert_eq!(span.name_parts(), ("invoke_agent", Some("worker")));
    span.name = Name::Given(span.push_str("custom"));
    assert_eq!(span.name_parts(), ("custom", None));
}

#[test]
fn events_beyond_the_limit_are_counted_not_kept() {
    let mut span = SpanRecord::new(1, 2, 0, "chat");
    for _ in 0..MAX_EVENTS + 2 {
        span.add_event(EventRecord {
            time: 0,
            name: EventName::Static("retry"),
            attributes: Vec::new(),
        });
    }
    assert_eq!(span.events.len(), MAX_EVENTS);
    assert_eq!(span.dropped_events, 2);
}

#[test]
fn kinds_are_read_in_any_case() {
    assert_eq!(Kind::parse("CLIENT"), Some(Kind::Client));
    assert_eq!(Kind::parse("server"), Some(Kind::Server));
    assert_eq!(Kind::parse("sideways"), None);
}
