//! The bounded queue between the run and the export thread, and that
//! thread: it wakes when a batch is full, every [`SCHEDULE`] or at
//! shutdown, takes everything queued, and posts it in batches of
//! [`BATCH_SIZE`].
//!
//! A run's thread holds the queue's lock for a push (no allocation, no
//! I/O; a wake-up only when a batch fills); the export thread holds it
//! only to swap the queued spans out. A span that finds the queue full
//! is dropped and counted: the export thread warns once, and gives the
//! count at shutdown. A failed export request is logged (once until one
//! succeeds again) and its spans dropped: telemetry never fails a run.

use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use crate::encode::{Resource, export_request};
use crate::record::SpanRecord;
use crate::transport::OtlpHttp;

/// Spans per export request.
pub(crate) const BATCH_SIZE: usize = 512;

/// How long a span may wait for its batch to fill.
const SCHEDULE: Duration = Duration::from_secs(5);

/// The queue; shared by the layers and the export thread.
#[derive(Debug)]
pub(crate) struct Queue {
    state: Mutex<State>,
    wake: Condvar,
    bound: usize,
}

#[derive(Debug, Default)]
struct State {
    spans: Vec<SpanRecord>,
    dropped: u64,
    closed: bool,
}

impl Queue {
    /// A queue of at most `bound` spans (at least one).
    pub(crate) fn new(bound: usize) -> Self {
        let bound = bound.max(1);
        Self {
            state: Mutex::new(State {
                spans: Vec::with_capacity(BATCH_SIZE.min(bound)),
                ..State::default()
            }),
            wake: Condvar::new(),
            bound,
        }
    }

    /// Queues `span`, or drops it (counted) when the queue is full; after
    /// shutdown, drops it silently.
    pub(crate) fn push(&self, span: SpanRecord) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.closed {
            return;
        }
        if state.spans.len() >= self.bound {
            state.dropped += 1;
            return;
        }
        state.spans.push(span);
        if state.spans.len() == BATCH_SIZE.min(self.bound) {
            self.wake.notify_one();
        }
    }

    /// What is queued, taken at once (tests read the layer's records).
    #[cfg(test)]
    pub(crate) fn drain(&self) -> (Vec<SpanRecord>, u64) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        (std::mem::take(&mut state.spans), state.dropped)
    }

    /// Asks the export thread to send what is queued and stop.
    fn close(&self) {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .closed = true;
        self.wake.notify_one();
    }

    /// Waits until a batch is full, [`SCHEDULE`] has passed or the queue
    /// is closed; then takes what is queued.
    fn take(&self) -> Taken {
        let deadline = Instant::now() + SCHEDULE;
        // Room for a batch, made here, so that a run's thread does not
        // grow the queue from nothing (copying it at each doubling) after
        // every take.
        let mut fresh = Vec::with_capacity(BATCH_SIZE.min(self.bound));
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        while state.spans.len() < BATCH_SIZE.min(self.bound) && !state.closed {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            state = self
                .wake
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        if state.spans.capacity() > fresh.capacity() {
            // A queue that grew past a batch keeps its size.
            fresh = Vec::with_capacity(state.spans.capacity());
        }
        Taken {
            spans: std::mem::replace(&mut state.spans, fresh),
            dropped: state.dropped,
            closed: state.closed,
        }
    }
}

struct Taken {
    spans: Vec<SpanRecord>,
    dropped: u64,
    closed: bool,
}

/// The running export thread.
#[derive(Debug)]
pub(crate) struct Worker {
    queue: Arc<Queue>,
    done: mpsc::Receiver<()>,
}

impl Worker {
    /// Starts the thread that sends `queue`'s spans with `http`.
    pub(crate) fn start(
        queue: Arc<Queue>,
        http: OtlpHttp,
        resource: Resource,
    ) -> std::io::Result<Self> {
        let (tx, done) = mpsc::channel();
        let shared = Arc::clone(&queue);
        thread::Builder::new()
            .name("zr-telemetry-export".to_owned())
            .spawn(move || {
                export_loop(&shared, &http, &resource);
                // The client's own runtime is dropped here, off any async
                // runtime; then the caller of `stop` is told.
                drop(http);
                let _ = tx.send(());
            })?;
        Ok(Self { queue, done })
    }

    /// Sends what is queued and stops, waiting at most `bound`; a thread
    /// still busy after it (a receiver that does not answer) is left to
    /// finish or to end with the process.
    pub(crate) fn stop(self, bound: Duration) {
        self.queue.close();
        match self.done.recv_timeout(bound) {
            Ok(()) => {}
            Err(mpsc::RecvTimeoutError::Timeout) => tracing::warn!(
                "telemetry: the final flush did not finish within {} ms; queued spans are lost",
                bound.as_millis()
            ),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                tracing::warn!("telemetry: the export thread stopped early; queued spans are lost");
            }
        }
    }
}

fn export_loop(queue: &Queue, http: &OtlpHttp, resource: &Resource) {
    let mut warned_drops = false;
    let mut failing = false;
    loop {
        let Taken {
            spans,
            dropped,
            closed,
        } = queue.take();
        if dropped > 0 && !warned_drops {
            warned_drops = true;
            tracing::warn!(
                "telemetry: the export queue is full ({} spans); spans are being dropped",
                queue.bound
            );
        }
        for batch in spans.chunks(BATCH_SIZE) {
            match http.post(export_request(batch, resource)) {
                Ok(()) => failing = false,
                Err(error) if !failing => {
                    failing = true;
                    tracing::warn!(
                        "telemetry: {error} ({} spans dropped; said once until an export succeeds)",
                        batch.len()
                    );
                }
                Err(_) => {}
            }
        }
        drop(spans);
        if closed {
            if dropped > 0 {
                tracing::warn!(
                    "telemetry: {dropped} spans were dropped (the export queue was full)"
                );
            }
            return;
        }
    }
}

#[cfg(test)]
mod tests;
