//! The queue's bound: spans beyond it are dropped and counted; nothing is
//! queued after shutdown; a full batch wakes the export thread.

use std::time::Duration;

use super::*;

fn span(id: u64) -> SpanRecord {
    SpanRecord::new(1, id, 0, "chat")
}

#[test]
fn spans_beyond_the_bound_are_dropped_and_counted() {
    let queue = Queue::new(3);
    for id in 1..=5 {
        queue.push(span(id));
    }
    let (spans, dropped) = queue.drain();
    assert_eq!(
        spans.iter().map(|s| s.span_id).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert_eq!(dropped, 2);
}

#[test]
fn after_close_nothing_is_queued_and_take_returns_at_once() {
    let queue = Queue::new(10);
    queue.push(span(1));
    queue.close();
    queue.push(span(2));
    let taken = queue.take();
    assert!(taken.closed);
    assert_eq!(taken.spans.len(), 1);
    assert_eq!(taken.dropped, 0, "a span after shutdown is not a drop");
}

#[test]
fn a_full_batch_wakes_the_taker_before_the_schedule() {
    let queue = Arc::new(Queue::new(BATCH_SIZE * 2));
    let taker = {
        let queue = Arc::clone(&queue);
        thread::spawn(move || {
            let start = Instant::now();
            (queue.take().spans.len(), start.elapsed())
        })
    };
    thread::sleep(Duration::from_millis(50));
    for id in 0..BATCH_SIZE as u64 {
        queue.push(span(id + 1));
    }
    let (taken, waited) = taker.join().unwrap();
    assert_eq!(taken, BATCH_SIZE);
    assert!(waited < SCHEDULE, "woken by the batch, not the schedule");
}
