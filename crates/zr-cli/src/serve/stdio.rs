//! `zr mcp serve`'s standard input and output: lines are read with a size
//! limit before rmcp's transport sees them, so that a message over the
//! limit is answered with a JSON-RPC error naming the limit (for its id
//! when the start of the line shows it, else with a null id) instead of
//! being dropped while the client waits for an answer.
//!
//! Three tasks around rmcp's line transport: `read` passes the lines
//! under the limit on and turns the others into error lines; `forward`
//! passes rmcp's output lines on; `write` is the one writer of standard
//! output, so that an error line never lands inside a message.

use rmcp::RoleServer;
use rmcp::transport::async_rw::{AsyncRwTransport, DEFAULT_MAX_LINE_LENGTH};

use crate::serve::jsonrpc::{INVALID_REQUEST, error, request_id};
use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// The longest message (one line, without its newline) read: rmcp's own
/// limit, 16 MiB.
pub(crate) const MAX_LINE: usize = DEFAULT_MAX_LINE_LENGTH;

/// How much of an oversized line is kept to look for its `id`.
const ID_WINDOW: usize = 64 * 1024;

/// The transport rmcp serves on, and the task that writes standard
/// output (awaited after the session so that the last answer is out).
pub(crate) fn transport<R, W>(
    input: R,
    output: W,
) -> (
    AsyncRwTransport<RoleServer, tokio::io::DuplexStream, tokio::io::DuplexStream>,
    JoinHandle<()>,
)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (lines_in, rmcp_in) = tokio::io::duplex(64 * 1024);
    let (rmcp_out, lines_out) = tokio::io::duplex(64 * 1024);
    let (out, queue) = mpsc::channel::<Vec<u8>>(64);
    tokio::spawn(read(input, lines_in, out.clone()));
    tokio::spawn(forward(lines_out, out));
    let writer = tokio::spawn(write(queue, output));
    // Lines reach rmcp with their newline: one byte over MAX_LINE.
    let transport =
        AsyncRwTransport::new_server(rmcp_in, rmcp_out).with_max_line_length(MAX_LINE + 1);
    (transport, writer)
}

/// Reads `input` line by line: a line of at most [`MAX_LINE`] bytes goes
/// to rmcp, a longer one is skipped and answered on `out`.
async fn read<R: AsyncRead + Unpin>(
    input: R,
    mut rmcp: tokio::io::DuplexStream,
    out: mpsc::Sender<Vec<u8>>,
) {
    let mut input = BufReader::new(input);
    let mut line = Vec::new();
    let mut over = false;
    loop {
        let (used, end) = {
            let available = match input.fill_buf().await {
                Ok([]) => break,
                Ok(available) => available,
                Err(error) => {
                    tracing::warn!(%error, "cannot read standard input");
                    break;
                }
            };
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.unwrap_or(available.len());
            let room = if over { ID_WINDOW } else { MAX_LINE };
            let keep = take.min(room.saturating_sub(line.len()));
            line.extend_from_slice(&available[..keep]);
            if !over && keep < take {
                // Over the limit: keep only the start, for its id.
                over = true;
                line.truncate(ID_WINDOW);
            }
            (newline.map_or(take, |n| n + 1), newline.is_some())
        };
        input.consume(used);
        if !end {
            continue;
        }
        if over {
            tracing::warn!(
                limit = MAX_LINE,
                "a message over the size limit was refused"
            );
            if out.send(refusal(&line)).await.is_err() {
                break;
            }
        } else {
            line.push(b'\n');
            if rmcp.write_all(&line).await.is_err() {
                break;
            }
        }
        line.clear();
        over = false;
    }
}

/// rmcp's output, one whole line at a time, to the writer.
async fn forward(lines: tokio::io::DuplexStream, out: mpsc::Sender<Vec<u8>>) {
    let mut lines = BufReader::new(lines);
    loop {
        let mut line = Vec::new();
        match lines.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                if out.send(line).await.is_err() {
                    break;
                }
            }
        }
    }
}

/// The one writer of standard output.
async fn write<W: AsyncWrite + Unpin>(mut queue: mpsc::Receiver<Vec<u8>>, mut output: W) {
    while let Some(line) = queue.recv().await {
        if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
            break;
        }
    }
}

/// The error line for a message over the limit whose first bytes are
/// `start`.
fn refusal(start: &[u8]) -> Vec<u8> {
    let message = format!(
        "the message is longer than zr mcp serve's limit of {MAX_LINE} bytes (16 MiB) on one line; it was not read"
    );
    let mut line = error(request_id(start), INVALID_REQUEST, &message).into_bytes();
    line.push(b'\n');
    line
}
