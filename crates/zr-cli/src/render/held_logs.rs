//! Log lines while the live tree is on the screen: a line written below
//! the tree would be drawn over (the next draw moves up a fixed number of
//! lines), so the tree holds the log lines and writes them above itself
//! at its next draw.
//!
//! The log's writer ([`LogWriter`], set up in `main.rs`) writes to
//! standard error, or into [`LOGS`] while a tree holds it.

use std::io::Write;
use std::sync::Mutex;

/// Log output kept while a tree is drawn; `None` inside: not held.
#[derive(Debug)]
pub(crate) struct LogHold {
    held: Mutex<Option<Vec<u8>>>,
}

/// The hold the log's writer uses.
pub(crate) static LOGS: LogHold = LogHold::new();

impl LogHold {
    /// Not holding.
    pub(crate) const fn new() -> Self {
        Self {
            held: Mutex::new(None),
        }
    }

    /// From now on, writes are kept until [`LogHold::take`].
    pub(crate) fn hold(&self) {
        if let Ok(mut held) = self.held.lock() {
            held.get_or_insert_with(Vec::new);
        }
    }

    /// What was written since the last take (empty when not holding).
    pub(crate) fn take(&self) -> Vec<u8> {
        self.held
            .lock()
            .ok()
            .and_then(|mut held| held.as_mut().map(std::mem::take))
            .unwrap_or_default()
    }

    /// Stops holding; returns what was still kept.
    pub(crate) fn release(&self) -> Vec<u8> {
        self.held
            .lock()
            .ok()
            .and_then(|mut held| held.take())
            .unwrap_or_default()
    }

    /// Whether something waits to be written.
    pub(crate) fn pending(&self) -> bool {
        self.held
            .lock()
            .is_ok_and(|held| held.as_ref().is_some_and(|h| !h.is_empty()))
    }

    /// Keeps `buf` if holding; `false` when not holding.
    pub(crate) fn keep(&self, buf: &[u8]) -> bool {
        match self.held.lock() {
            Ok(mut held) => match held.as_mut() {
                Some(held) => {
                    held.extend_from_slice(buf);
                    true
                }
                None => false,
            },
            Err(_) => false,
        }
    }
}

/// The log's writer: standard error, or [`LOGS`] while a tree holds it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LogWriter;

impl Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if LOGS.keep(buf) {
            Ok(buf.len())
        } else {
            std::io::stderr().write(buf)
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        if LOGS.keep(buf) {
            Ok(())
        } else {
            std::io::stderr().write_all(buf)
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}
