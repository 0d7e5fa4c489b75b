//! The bounded queue between the run and the export thread, and that
//! thread: it wakes when a batch is full, every [`SCHEDULE`] or at
//! shutdown, takes everything queued, posts it in batches of
//! [`BATCH_SIZE`], and gives the buffer back to be filled again.
//!
//! A span is encoded into the queue's buffer as it ends, on the run's
//! thread, under the queue's lock (no I/O, no wait; a wake-up only when a
//! batch fills): its record is then dropped where it was made, so that
//! the run's allocations are freed by the thread that made them, and the
//! export thread only frames batches of bytes. The export thread holds
//! the lock only to swap the buffer out. A span that finds the queue full
//! is dropped and counted: the export thread warns once, and gives the
//! count at shutdown. A failed export request is logged (once until one
//! succeeds again) and its spans dropped: telemetry never fails a run.

use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

#[cfg(test)]
use crate::encode::request;
use crate::encode::{Resource, request_head, span_entry};
use crate::record::SpanRecord;
use crate::transport::OtlpHttp;

/// Spans per export request.
pub(crate) const BATCH_SIZE: usize = 512;

/// How long a span may wait for its batch to fill.
const SCHEDULE: Duration = Duration::from_secs(5);

/// Where the tracer sends a span that has ended.
pub(crate) trait SpanSink: Send + Sync + 'static {
    /// Takes `span` (encodes or copies it); never blocks on I/O.
    fn push(&self, span: &SpanRecord);
}

/// The queue; shared by the tracers and the export thread.
#[derive(Debug)]
pub(crate) struct Queue {
    state: Mutex<State>,
    wake: Condvar,
    bound: usize,
}

#[derive(Debug, Default)]
struct State {
    /// The queued spans, encoded ([`span_entry`]).
    bytes: Vec<u8>,
    /// Where each batch of [`BATCH_SIZE`] spans ends in `bytes`.
    batch_ends: Vec<usize>,
    spans: usize,
    dropped: u64,
    closed: bool,
    /// A buffer the export thread has sent and given back, emptied: the
    /// next one to fill, so that the run's thread writes into memory
    /// already mapped rather than fresh pages.
    spare: Vec<u8>,
}

/// Room for a batch's bytes when nothing better is known.
const BATCH_BYTES: usize = 64 * 1024;

/// The largest buffer kept for reuse ([`Queue::give_back`]): after a
/// burst, a larger one is freed.
const SPARE_MAX: usize = 4 * 1024 * 1024;

impl Queue {
    /// A queue of at most `bound` spans (at least one).
    pub(crate) fn new(bound: usize) -> Self {
        Self {
            state: Mutex::new(State {
                bytes: Vec::with_capacity(BATCH_BYTES),
                ..State::default()
            }),
            wake: Condvar::new(),
            bound: bound.max(1),
        }
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
    pub(crate) fn take(&self) -> Taken {
        let deadline = Instant::now() + SCHEDULE;
        let batch = BATCH_SIZE.min(self.bound);
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        while state.spans < batch && !state.closed {
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
        // The next buffer: the one given back, or one as large as this one
        // was (made here, not by a run's thread growing it from nothing).
        let wanted = state.bytes.len().max(BATCH_BYTES);
        let fresh = if state.spare.capacity() >= wanted {
            std::mem::take(&mut state.spare)
        } else {
            Vec::with_capacity(wanted)
        };
        let mut batch_ends = std::mem::take(&mut state.batch_ends);
        let bytes = std::mem::replace(&mut state.bytes, fresh);
        if batch_ends.last() != Some(&bytes.len()) && !bytes.is_empty() {
            batch_ends.push(bytes.len());
        }
        state.spans = 0;
        Taken {
            bytes,
            batch_ends,
            dropped: state.dropped,
            closed: state.closed,
        }
    }
}

impl Queue {
    /// Takes back a buffer [`Queue::take`] handed out, once sent: kept
    /// (emptied) as the next one to fill, if larger than the one kept and
    /// at most [`SPARE_MAX`].
    pub(crate) fn give_back(&self, mut bytes: Vec<u8>) {
        bytes.clear();
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if bytes.capacity() > state.spare.capacity() && bytes.capacity() <= SPARE_MAX {
            state.spare = bytes;
        }
    }
}

impl SpanSink for Queue {
    /// Encodes `span` into the queue, or drops it (counted) when the
    /// queue is full; after shutdown, drops it silently.
    fn push(&self, span: &SpanRecord) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.closed {
            return;
        }
        if state.spans >= self.bound {
            state.dropped += 1;
            return;
        }
        span_entry(&mut state.bytes, span);
        state.spans += 1;
        let batch = BATCH_SIZE.min(self.bound);
        if state.spans.is_multiple_of(batch) {
            let end = state.bytes.len();
            state.batch_ends.push(end);
            if state.spans == batch {
                self.wake.notify_one();
            }
        }
    }
}

/// What the export thread takes: the encoded spans, where each batch of
/// them ends, the drops so far, and whether to stop.
#[derive(Debug)]
pub(crate) struct Taken {
    pub(crate) bytes: Vec<u8>,
    pub(crate) batch_ends: Vec<usize>,
    pub(crate) dropped: u64,
    pub(crate) closed: bool,
}

impl Taken {
    /// The batches' bytes, in order.
    pub(crate) fn batches(&self) -> impl Iterator<Item = &[u8]> {
        let mut start = 0;
        self.batch_ends.iter().map(move |&end| {
            let batch = &self.bytes[start..end];
            start = end;
            batch
        })
    }
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
        mut http: OtlpHttp,
        resource: Resource,
    ) -> std::io::Result<Self> {
        let (tx, done) = mpsc::channel();
        let shared = Arc::clone(&queue);
        thread::Builder::new()
            .name("zr-telemetry-export".to_owned())
            .spawn(move || {
                export_loop(&shared, &mut http, &resource);
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

fn export_loop(queue: &Queue, http: &mut OtlpHttp, resource: &Resource) {
    let mut warned_drops = false;
    let mut failing = false;
    loop {
        let taken = queue.take();
        if taken.dropped > 0 && !warned_drops {
            warned_drops = true;
            tracing::warn!(
                "telemetry: the export queue is full ({} spans); spans are being dropped",
                queue.bound
            );
        }
        for batch in taken.batches() {
            match http.post(&request_head(batch.len(), resource), batch) {
                Ok(()) => failing = false,
                Err(error) if !failing => {
                    failing = true;
                    tracing::warn!(
                        "telemetry: {error} (the batch's spans are dropped; said once until an export succeeds)"
                    );
                }
                Err(_) => {}
            }
        }
        let Taken {
            bytes,
            dropped,
            closed,
            ..
        } = taken;
        if closed {
            if dropped > 0 {
                tracing::warn!(
                    "telemetry: {} spans were dropped (the export queue was full)",
                    dropped
                );
            }
            return;
        }
        queue.give_back(bytes);
    }
}

#[cfg(test)]
mod tests;
