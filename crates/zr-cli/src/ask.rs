//! Asking the person at the terminal: the permission question for a call
//! that the mode and `[permissions]` leave open, and `AskUserQuestion`.
//!
//! Only when standard input and standard error are both a terminal; then
//! one [`Asker`] serves the whole run:
//!
//! - **One question at a time.** Askers queue on one lock; each holds it
//!   for all of its questions.
//! - **The live tree pauses.** Before asking, the asker asks the run's
//!   loop (`run.rs`, `drive`) to pause its renderer ([`Screen::Pause`]):
//!   the tree is erased, events are held, and drawn again once the
//!   question is answered ([`Screen::Resume`]).
//! - **Lines are read on a thread** started at the first question; what
//!   was typed while nothing was asked is dropped before each question.
//! - **Ctrl-C while asking** stops the run as it always does (the signal
//!   reaches `drive`, which cancels the query): the call is not run, the
//!   question gets no answer, and no further model request is made; `zr
//!   resume` tells the model the call was interrupted.
//!
//! Background agents never get here: the permission handler denies their
//! open calls as before (DESIGN section 5), and they have no
//! AskUserQuestion.

mod permission;
mod question;

use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Mutex, mpsc, oneshot};

pub(crate) use permission::PermissionPrompt;

/// What an asker wants of the run's renderer.
#[derive(Debug)]
pub(crate) enum Screen {
    /// Erase the tree, hold events; answer when done.
    Pause(oneshot::Sender<()>),
    /// Draw again.
    Resume,
}

/// The receiving end that `drive` listens on.
pub(crate) type ScreenRequests = mpsc::UnboundedReceiver<Screen>;

/// Whether a run may ask the person at the terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Asking {
    /// When standard input and standard error are terminals (`zr run`,
    /// `zr resume`, `zr resolve`, which shows the pools such a run gets).
    OnTerminal,
    /// Never: nobody is expected to watch (`zr cron`'s firings). Open
    /// calls are refused with the key to change, and `AskUserQuestion`
    /// has no service, so it is in no pool.
    Never,
}

impl Asking {
    /// The run's asker, if it may ask and a terminal is there.
    pub(crate) fn asker(self) -> Option<(Arc<Asker>, ScreenRequests)> {
        match self {
            Self::OnTerminal => Asker::for_terminal(),
            Self::Never => None,
        }
    }
}

/// The terminal's asker.
#[derive(Debug)]
pub(crate) struct Asker {
    /// Lines typed at the terminal; the lock is the queue of askers.
    lines: Mutex<Option<mpsc::UnboundedReceiver<Option<String>>>>,
    screen: mpsc::UnboundedSender<Screen>,
}

/// How long an asker waits for the renderer to pause before it asks
/// anyway (nothing is drawing then).
const PAUSE_WAIT: Duration = Duration::from_secs(1);

impl Asker {
    /// An asker when standard input and standard error are terminals.
    pub(crate) fn for_terminal() -> Option<(Arc<Self>, ScreenRequests)> {
        (std::io::stdin().is_terminal() && std::io::stderr().is_terminal()).then(Self::new)
    }

    fn new() -> (Arc<Self>, ScreenRequests) {
        let (screen, requests) = mpsc::unbounded_channel();
        let asker = Self {
            lines: Mutex::new(None),
            screen,
        };
        (Arc::new(asker), requests)
    }

    /// Waits for its turn, pauses the renderer, and hands out the turn.
    pub(crate) async fn turn(&self) -> Turn<'_> {
        let mut lines = self.lines.lock().await;
        if lines.is_none() {
            let (tx, rx) = mpsc::unbounded_channel();
            // Standard input, line by line, until it ends (`None`). A
            // plain thread, not the runtime's blocking pool: the runtime's
            // shutdown would wait for a read that may never return.
            let sender = tx;
            std::thread::spawn(move || {
                let stdin = std::io::stdin();
                for line in stdin.lock().lines() {
                    let Ok(line) = line else { break };
                    if sender.send(Some(line)).is_err() {
                        return;
                    }
                }
                let _ = sender.send(None);
            });
            *lines = Some(rx);
        }
        let (ack, paused) = oneshot::channel();
        if self.screen.send(Screen::Pause(ack)).is_ok() {
            let _ = tokio::time::timeout(PAUSE_WAIT, paused).await;
        }
        if let Some(rx) = lines.as_mut() {
            // Typed ahead while nothing was asked: not an answer.
            while let Ok(Some(_)) = rx.try_recv() {}
        }
        Turn {
            lines,
            screen: &self.screen,
        }
    }
}

/// One asker's turn at the terminal; the renderer resumes when it ends.
#[derive(Debug)]
pub(crate) struct Turn<'a> {
    lines: tokio::sync::MutexGuard<'a, Option<mpsc::UnboundedReceiver<Option<String>>>>,
    screen: &'a mpsc::UnboundedSender<Screen>,
}

/// The person's reply to one prompt.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Reply {
    /// A line (trimmed).
    Line(String),
    /// Ctrl-C.
    Interrupted,
    /// Standard input ended.
    Closed,
}

impl Turn<'_> {
    /// Writes `text` to the terminal.
    pub(crate) fn say(&self, text: &str) {
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "{}", text.replace('\n', "\r\n"));
        let _ = err.flush();
    }

    /// Shows `prompt` and waits for a line, Ctrl-C or the end of input.
    pub(crate) async fn line(&mut self, prompt: &str) -> Reply {
        self.say(prompt);
        let Some(rx) = self.lines.as_mut() else {
            return Reply::Closed;
        };
        let interrupt = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()) {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            line = rx.recv() => match line {
                Some(Some(line)) => Reply::Line(line.trim().to_owned()),
                _ => Reply::Closed,
            },
            () = interrupt => {
                self.say("\n");
                Reply::Interrupted
            }
        }
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let _ = self.screen.send(Screen::Resume);
    }
}
