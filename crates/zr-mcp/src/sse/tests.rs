//! The event-stream parser: fields, comments, split chunks, the size limit.

use std::collections::VecDeque;

use super::{Event, Parser};

fn parse(chunks: &[&str], max: usize) -> (Vec<Event>, bool) {
    let mut parser = Parser::default();
    let mut ready = VecDeque::new();
    let mut ok = true;
    for chunk in chunks {
        ok = parser.feed(chunk.as_bytes(), max, &mut ready);
        if !ok {
            break;
        }
    }
    (ready.into_iter().collect(), ok)
}

fn event(name: &str, data: &str) -> Event {
    Event {
        name: name.to_owned(),
        data: data.to_owned(),
    }
}

#[test]
fn events_are_read_across_chunks_with_crlf_comments_and_multi_line_data() {
    let (events, ok) = parse(
        &[
            ": keep-alive\n\nevent: endp",
            "oint\r\ndata: /messages?sessionId=1\r\n\r\n",
            "data: {\"a\":\ndata:1}\nid: 7\n\n",
            "event: message\ndata: x\n",
        ],
        1_000,
    );
    assert!(ok);
    assert_eq!(
        events,
        [
            event("endpoint", "/messages?sessionId=1"),
            event("message", "{\"a\":\n1}")
        ],
        "the last event is not finished: no blank line yet"
    );
}

#[test]
fn a_line_or_an_event_over_the_limit_ends_the_stream() {
    let (_, ok) = parse(&["data: 0123456789"], 8);
    assert!(!ok, "a line over the limit");
    let (_, ok) = parse(&["data: 0123\ndata: 4567\ndata: 89\n"], 11);
    assert!(!ok, "an event over the limit");
    let (events, ok) = parse(&["data: 0123\n\n"], 12);
    assert!(ok);
    assert_eq!(events, [event("message", "0123")]);
}
