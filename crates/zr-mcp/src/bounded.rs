//! A server's stdout reader that ends the stream at the first message over the size limit.
//!
//! MCP over stdio is one JSON message per line. A line longer than the
//! limit is never buffered whole: the reader hands over what came before
//! it, then reports end of stream and raises a flag, so the session ends at
//! once and every waiting call fails with a clear error instead of waiting
//! for its time limit.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::watch;

#[derive(Debug)]
pub(crate) struct BoundedLines<R> {
    inner: R,
    limit: usize,
    /// Bytes of the current line read so far.
    line: usize,
    tripped: watch::Sender<bool>,
}

impl<R> BoundedLines<R> {
    /// Wraps `inner`; the receiver turns `true` when a line exceeded `limit`.
    pub(crate) fn new(inner: R, limit: usize) -> (Self, watch::Receiver<bool>) {
        let (tripped, rx) = watch::channel(false);
        let reader = Self {
            inner,
            limit,
            line: 0,
            tripped,
        };
        (reader, rx)
    }

    /// Where the first line that makes the limit overflow starts in
    /// `chunk`, updating the current line length otherwise.
    fn scan(&mut self, chunk: &[u8]) -> Option<usize> {
        let mut start = 0;
        let mut line = self.line;
        for segment in chunk.split(|b| *b == b'\n') {
            if line + segment.len() > self.limit {
                // Keep the whole lines before it (none when the line began
                // in an earlier chunk).
                return Some(start);
            }
            start += segment.len() + 1;
            line = 0;
        }
        // The last segment has no newline after it: it continues.
        self.line = match chunk.iter().rposition(|b| *b == b'\n') {
            Some(last) => chunk.len() - last - 1,
            None => self.line + chunk.len(),
        };
        None
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for BoundedLines<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if *self.tripped.borrow() {
            return Poll::Ready(Ok(()));
        }
        let before = buf.filled().len();
        match Pin::new(&mut self.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {}
            other => return other,
        }
        let chunk = &buf.filled()[before..];
        if let Some(keep) = self.scan(chunk) {
            buf.set_filled(before + keep);
            self.tripped.send_replace(true);
        }
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests;
