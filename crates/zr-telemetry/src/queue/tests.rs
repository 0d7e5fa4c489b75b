//! The queue's bound: spans beyond it are dropped and counted; nothing is
//! queued after shutdown; a full batch wakes the export thread; what is
//! taken splits into batches of [`BATCH_SIZE`] that decode as requests.

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message as _;

use super::*;

fn span(id: u64) -> SpanRecord {
    SpanRecord::new(1, id, 0, "chat")
}

/// The span ids of each batch, decoded from its request.
fn batches(taken: &Taken) -> Vec<Vec<u64>> {
    taken
        .batches()
        .map(|batch| {
            let body = request(batch, &Resource::default());
            let decoded = ExportTraceServiceRequest::decode(body.as_slice()).expect("valid OTLP");
            decoded.resource_spans[0].scope_spans[0]
                .spans
                .iter()
                .map(|s| u64::from_be_bytes(s.span_id.as_slice().try_into().unwrap()))
                .collect()
        })
        .collect()
}

#[test]
fn spans_beyond_the_bound_are_dropped_and_counted() {
    let queue = Queue::new(3);
    for id in 1..=5 {
        queue.push(&span(id));
    }
    queue.close();
    let taken = queue.take();
    assert_eq!(batches(&taken), [vec![1, 2, 3]]);
    assert_eq!(taken.dropped, 2);
}

#[test]
fn after_close_nothing_is_queued_and_take_returns_at_once() {
    let queue = Queue::new(10);
    queue.push(&span(1));
    queue.close();
    queue.push(&span(2));
    let taken = queue.take();
    assert!(taken.closed);
    assert_eq!(batches(&taken), [vec![1]]);
    assert_eq!(taken.dropped, 0, "a span after shutdown is not a drop");
    assert!(batches(&queue.take()).is_empty());
}

#[test]
fn what_is_taken_splits_into_batches() {
    let queue = Queue::new(5_000);
    for id in 1..=1_100 {
        queue.push(&span(id));
    }
    let taken = queue.take();
    let sizes: Vec<usize> = batches(&taken).iter().map(Vec::len).collect();
    assert_eq!(sizes, [BATCH_SIZE, BATCH_SIZE, 1_100 - 2 * BATCH_SIZE]);
    assert_eq!(batches(&taken).concat(), (1..=1_100).collect::<Vec<u64>>());
}

#[test]
fn a_full_batch_wakes_the_taker_before_the_schedule() {
    let queue = Arc::new(Queue::new(BATCH_SIZE * 2));
    let taker = {
        let queue = Arc::clone(&queue);
        thread::spawn(move || {
            let start = Instant::now();
            let taken = queue.take();
            (batches(&taken).concat().len(), start.elapsed())
        })
    };
    thread::sleep(Duration::from_millis(50));
    for id in 0..BATCH_SIZE as u64 {
        queue.push(&span(id + 1));
    }
    let (taken, waited) = taker.join().unwrap();
    assert_eq!(taken, BATCH_SIZE);
    assert!(waited < SCHEDULE, "woken by the batch, not the schedule");
}

#[test]
fn a_buffer_given_back_is_filled_again() {
    // A bound of one: each span is a full batch, taken without waiting.
    let queue = Queue::new(1);
    queue.push(&span(1));
    let first = queue.take();
    let reused = first.bytes.as_ptr();
    queue.give_back(first.bytes);
    queue.push(&span(2));
    let second = queue.take();
    assert_eq!(batches(&second), [vec![2]]);
    queue.push(&span(3));
    let third = queue.take();
    assert_eq!(batches(&third), [vec![3]]);
    assert_eq!(
        third.bytes.as_ptr(),
        reused,
        "the spans went into the buffer given back"
    );
}

#[test]
fn a_buffer_past_the_bound_is_not_kept() {
    let queue = Queue::new(100);
    queue.give_back(Vec::with_capacity(SPARE_MAX + 1));
    let kept = queue
        .state
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .spare
        .capacity();
    assert_eq!(kept, 0);
}
