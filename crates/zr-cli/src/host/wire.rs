//! The protocol's two streams: lines written to standard output (one
//! writer, a lock per line), and lines read from standard input on a
//! thread that hands answers straight to the question waiting for them
//! and every other message to the session's loop.

use std::collections::BTreeMap;
use std::io::{BufRead as _, Write as _};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::{mpsc, oneshot};
use zr_protocol::{HostMessage, ZrMessage};

/// What zr writes, and the questions it waits on.
#[derive(Debug, Default)]
pub(crate) struct Wire {
    next_id: AtomicU64,
    pending: Mutex<BTreeMap<u64, oneshot::Sender<HostMessage>>>,
    out: Mutex<()>,
}

/// A message of the host that is not an answer, or the end of input.
#[derive(Debug)]
pub(crate) enum Incoming {
    /// A message for the session's loop.
    Message(Box<HostMessage>),
    /// Standard input ended: the host is gone.
    Closed,
}

impl Wire {
    /// Writes `message` as one line (a closed pipe is ignored: the
    /// session sees standard input close).
    pub(crate) fn send(&self, message: &ZrMessage) {
        let line = match serde_json::to_string(message) {
            Ok(line) => line,
            Err(e) => {
                tracing::error!(error = %e, "a protocol message does not serialise");
                return;
            }
        };
        let _guard = self.out.lock().unwrap_or_else(PoisonError::into_inner);
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }

    /// Sends the question `make(id)` makes and waits for its answer;
    /// `None` when the host is gone before answering.
    pub(crate) async fn ask(&self, make: impl FnOnce(u64) -> ZrMessage) -> Option<HostMessage> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let (tx, rx) = oneshot::channel();
        self.lock().insert(id, tx);
        self.send(&make(id));
        let answer = rx.await.ok();
        // Dropped before the answer (a cancelled call): forget the question.
        self.lock().remove(&id);
        answer
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, oneshot::Sender<HostMessage>>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// An error line that does not end the session.
    pub(crate) fn warn(&self, message: String) {
        self.send(&ZrMessage::Error {
            message,
            help: None,
            fatal: false,
        });
    }

    /// Hands `message` to the question it answers; gives it back when it
    /// answers nothing.
    fn answer(&self, message: HostMessage) -> Option<HostMessage> {
        let id = match &message {
            HostMessage::PermissionAnswer { id, .. }
            | HostMessage::HookAnswer { id, .. }
            | HostMessage::ToolResult { id, .. } => *id,
            _ => return Some(message),
        };
        match self.lock().remove(&id) {
            Some(tx) => {
                let _ = tx.send(message);
            }
            None => self.warn(format!(
                "no question {id} is waiting for an answer (answered twice, or its call was cancelled)"
            )),
        }
        None
    }

    /// Starts reading standard input on a thread (not the runtime's
    /// blocking pool: its shutdown would wait for a read that never
    /// returns). Answers go to their questions; the rest comes out here.
    pub(crate) fn read_stdin(self: &Arc<Self>) -> mpsc::UnboundedReceiver<Incoming> {
        let (tx, rx) = mpsc::unbounded_channel();
        let wire = Arc::clone(self);
        std::thread::spawn(move || {
            let stdin = std::io::stdin();
            for (n, line) in stdin.lock().lines().enumerate() {
                let Ok(line) = line else { break };
                if line.trim().is_empty() {
                    continue;
                }
                match serde_json::from_str::<HostMessage>(&line) {
                    Ok(message) => {
                        if let Some(message) = wire.answer(message)
                            && tx.send(Incoming::Message(Box::new(message))).is_err()
                        {
                            return;
                        }
                    }
                    Err(e) => wire.warn(format!(
                        "standard input:{}:{}: not a host protocol message: {e}",
                        n + 1,
                        e.column()
                    )),
                }
            }
            // The host is gone: nobody will answer what waits.
            wire.lock().clear();
            let _ = tx.send(Incoming::Closed);
        });
        rx
    }
}
