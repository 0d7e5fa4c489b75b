//! The spawner thread: every child is forked from one thread that lives as
//! long as the process, so that a parent-death signal means "zr died", not
//! "some worker thread retired".

use std::panic::AssertUnwindSafe;
use std::sync::OnceLock;
use std::sync::mpsc;

type Job = Box<dyn FnOnce() + Send>;

/// The queue of the spawner thread; started on first use, never stopped.
static QUEUE: OnceLock<Option<mpsc::Sender<Job>>> = OnceLock::new();

/// Runs `job` on the spawner thread and waits for its answer. Blocks the
/// caller for as long as a `fork` takes, as a spawn on the caller's thread
/// would.
///
/// # Errors
///
/// When the thread cannot be started, or `job` panicked (the thread goes
/// on: a panic there must not end it, since its end would kill every
/// child).
pub(crate) fn on_spawner<T: Send + 'static>(
    job: impl FnOnce() -> std::io::Result<T> + Send + 'static,
) -> std::io::Result<T> {
    let queue = QUEUE
        .get_or_init(start)
        .as_ref()
        .ok_or_else(|| std::io::Error::other("cannot start zr's process spawner thread"))?;
    let (tx, rx) = mpsc::sync_channel(1);
    let job: Job = Box::new(move || {
        let _ = tx.send(job());
    });
    queue
        .send(job)
        .map_err(|_| std::io::Error::other("zr's process spawner thread is gone"))?;
    rx.recv()
        .map_err(|_| std::io::Error::other("starting the process panicked"))?
}

fn start() -> Option<mpsc::Sender<Job>> {
    let (tx, rx) = mpsc::channel::<Job>();
    let started = std::thread::Builder::new()
        .name("zr-spawner".to_owned())
        .spawn(move || {
            // The sender lives in a static: `recv` never fails, and this
            // thread ends only with the process.
            while let Ok(job) = rx.recv() {
                if std::panic::catch_unwind(AssertUnwindSafe(job)).is_err() {
                    tracing::error!("a process spawn panicked; the spawner thread goes on");
                }
            }
        });
    match started {
        Ok(_) => Some(tx),
        Err(error) => {
            tracing::error!(%error, "cannot start the process spawner thread");
            None
        }
    }
}
