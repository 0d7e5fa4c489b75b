//! Stopping a run from outside: Ctrl-C (SIGINT), SIGTERM and SIGHUP are
//! caught from the start of `zr run` / `zr resume`, so that every stop
//! goes through the same cleanup: the query cancelled (its agents stopped,
//! their processes killed, transcripts written), then the agent and the
//! MCP servers dropped. A second signal during that cleanup stops waiting
//! for it; the processes are still killed, by the drops.

use tokio::signal::unix::{Signal, SignalKind, signal};

use crate::error::CliError;

/// Which signal stopped the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// SIGINT: Ctrl-C.
    Interrupt,
    /// SIGTERM: `kill`, a service manager, a container stopping.
    Terminate,
    /// SIGHUP: the terminal went away.
    Hangup,
}

impl Stop {
    /// The signal's name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Interrupt => "SIGINT",
            Self::Terminate => "SIGTERM",
            Self::Hangup => "SIGHUP",
        }
    }

    /// The exit code: 128 + the signal's number, as a shell reports a
    /// process the signal killed.
    pub(crate) fn exit_code(self) -> u8 {
        match self {
            Self::Interrupt => crate::error::EXIT_INTERRUPTED,
            Self::Terminate => 143,
            Self::Hangup => 129,
        }
    }
}

impl From<Stop> for CliError {
    fn from(stop: Stop) -> Self {
        Self::Stopped {
            signal: stop.name(),
            code: stop.exit_code(),
        }
    }
}

/// The signals that stop a run. Once installed, tokio's handlers stay for
/// the life of the process: a signal that comes when no one waits for it
/// (after the run, while zr exits) is ignored.
#[derive(Debug)]
pub(crate) struct Signals {
    int: Option<Signal>,
    term: Option<Signal>,
    hup: Option<Signal>,
}

impl Signals {
    /// Catches SIGINT, SIGTERM and SIGHUP. A handler that cannot be
    /// installed is logged and that signal keeps its default (the process
    /// ends without cleanup; the MCP servers and shells, in their own
    /// process groups, then see their pipes close).
    pub(crate) fn install() -> Self {
        let catch = |kind: SignalKind, name: &str| match signal(kind) {
            Ok(s) => Some(s),
            Err(error) => {
                tracing::warn!(%error, "cannot catch {name}; it will end zr without cleanup");
                None
            }
        };
        Self {
            int: catch(SignalKind::interrupt(), "SIGINT"),
            term: catch(SignalKind::terminate(), "SIGTERM"),
            hup: catch(SignalKind::hangup(), "SIGHUP"),
        }
    }

    /// Waits for the next stopping signal.
    pub(crate) async fn recv(&mut self) -> Stop {
        async fn next(s: Option<&mut Signal>) {
            if let Some(s) = s
                && s.recv().await.is_some()
            {
                return;
            }
            // A stream that ended (or was never installed) never fires.
            std::future::pending::<()>().await;
        }
        tokio::select! {
            () = next(self.int.as_mut()) => Stop::Interrupt,
            () = next(self.term.as_mut()) => Stop::Terminate,
            () = next(self.hup.as_mut()) => Stop::Hangup,
        }
    }
}
