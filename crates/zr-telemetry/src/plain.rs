//! [`PlainHttp`]: OTLP export requests over HTTP/1.1 on a `TcpStream` of
//! the export thread's own, for `http://` endpoints without a proxy: no
//! client runtime, no thread of its own, and the batch's bytes written
//! from the queue's buffer rather than copied into a request body.
//!
//! One keep-alive connection, opened when needed; a request that fails on
//! a reused connection before any byte of the answer arrived (the
//! receiver closed it while idle) is sent once more on a new one. Each
//! connect, read and write is bounded by the export timeout. The answer's
//! body is read and discarded (`content-length`, chunked, or up to the
//! connection's end).

use std::io::{self, BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpStream, ToSocketAddrs as _};
use std::time::Duration;

/// An `http://` endpoint's parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    /// `host` or `host:port`, as written (the `Host` header).
    authority: String,
    /// `host:port` to connect to.
    address: String,
    /// The path and query, `/` at least.
    path: String,
}

impl Target {
    /// The parts of `endpoint` when it is a plain `http://` URL this
    /// client can serve as written (no user information, nothing to
    /// percent-encode: only visible ASCII); `None` otherwise (reqwest
    /// serves it). A fragment is not sent.
    pub(crate) fn parse(endpoint: &str) -> Option<Self> {
        let rest = endpoint.strip_prefix("http://")?;
        let rest = rest.split_once('#').map_or(rest, |(before, _)| before);
        if !rest.bytes().all(|b| b.is_ascii_graphic()) {
            return None;
        }
        let (authority, path) = match rest.find(['/', '?']) {
            Some(at) => (&rest[..at], &rest[at..]),
            None => (rest, "/"),
        };
        if authority.is_empty() || authority.contains('@') {
            return None;
        }
        let path = if path.starts_with('?') {
            format!("/{path}")
        } else {
            path.to_owned()
        };
        let has_port = match authority.rfind(']') {
            Some(bracket) => authority[bracket..].contains(':'),
            None => authority.contains(':'),
        };
        let address = if has_port {
            authority.to_owned()
        } else {
            format!("{authority}:80")
        };
        Some(Self {
            authority: authority.to_owned(),
            address,
            path,
        })
    }
}

/// The client; see the module's documentation.
#[derive(Debug)]
pub(crate) struct PlainHttp {
    target: Target,
    /// `Host`, the configured headers, `Content-Type`, `Accept`; each
    /// line ends with CRLF (`Content-Length` and the blank line follow).
    head: Vec<u8>,
    timeout: Duration,
    connection: Option<BufReader<TcpStream>>,
}

impl PlainHttp {
    /// A client for `target`, sending `headers` (name and value, already
    /// checked) on every request.
    pub(crate) fn new<'a>(
        target: Target,
        headers: impl Iterator<Item = (&'a str, &'a [u8])>,
        timeout: Duration,
    ) -> Self {
        let mut head = Vec::with_capacity(256);
        head.extend_from_slice(b"POST ");
        head.extend_from_slice(target.path.as_bytes());
        head.extend_from_slice(b" HTTP/1.1\r\nhost: ");
        head.extend_from_slice(target.authority.as_bytes());
        head.extend_from_slice(b"\r\naccept: */*\r\n");
        for (name, value) in headers {
            head.extend_from_slice(name.as_bytes());
            head.extend_from_slice(b": ");
            head.extend_from_slice(value);
            head.extend_from_slice(b"\r\n");
        }
        Self {
            target,
            head,
            timeout,
            connection: None,
        }
    }

    /// Posts a body made of `parts`, in order; the answer's status code.
    ///
    /// # Errors
    ///
    /// Any I/O error of connecting, writing or reading, or an answer that
    /// is not HTTP/1.x.
    pub(crate) fn post(&mut self, parts: &[&[u8]]) -> io::Result<u16> {
        let reused = self.connection.is_some();
        match self.exchange(parts) {
            Ok(status) => Ok(status),
            Err(Failure::BeforeAnswer(_)) if reused => {
                self.connection = None;
                self.exchange(parts).map_err(Failure::into_error)
            }
            Err(failure) => Err(failure.into_error()),
        }
    }

    fn exchange(&mut self, parts: &[&[u8]]) -> Result<u16, Failure> {
        let result = self.try_exchange(parts);
        if !matches!(result, Ok((_, true))) {
            self.connection = None;
        }
        result.map(|(status, _)| status)
    }

    /// The status, and whether the connection can carry another request.
    fn try_exchange(&mut self, parts: &[&[u8]]) -> Result<(u16, bool), Failure> {
        let length: usize = parts.iter().map(|part| part.len()).sum();
        let mut head = Vec::with_capacity(self.head.len() + 40);
        head.extend_from_slice(&self.head);
        head.extend_from_slice(format!("content-length: {length}\r\n\r\n").as_bytes());
        let connection = match &mut self.connection {
            Some(connection) => connection,
            slot @ None => slot.insert(connect(&self.target, self.timeout)?),
        };
        let stream = connection.get_mut();
        stream.write_all(&head).map_err(Failure::BeforeAnswer)?;
        for part in parts {
            stream.write_all(part).map_err(Failure::BeforeAnswer)?;
        }
        read_answer(connection)
    }
}

/// Where an exchange failed: before any byte of the answer (the request
/// may be sent again on a new connection), or after.
enum Failure {
    BeforeAnswer(io::Error),
    InAnswer(io::Error),
}

impl Failure {
    fn into_error(self) -> io::Error {
        match self {
            Self::BeforeAnswer(error) | Self::InAnswer(error) => error,
        }
    }
}

impl From<io::Error> for Failure {
    fn from(error: io::Error) -> Self {
        Self::InAnswer(error)
    }
}

fn connect(target: &Target, timeout: Duration) -> io::Result<BufReader<TcpStream>> {
    let mut last = None;
    for address in target.address.to_socket_addrs()? {
        match TcpStream::connect_timeout(&address, timeout) {
            Ok(stream) => {
                stream.set_read_timeout(Some(timeout))?;
                stream.set_write_timeout(Some(timeout))?;
                // The head and the body are separate writes: no waiting
                // for the first's acknowledgement.
                stream.set_nodelay(true)?;
                return Ok(BufReader::with_capacity(4 * 1024, stream));
            }
            Err(error) => last = Some(error),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no address")))
}

fn invalid(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_owned())
}

/// Reads an answer (skipping `1xx` ones) and its body; the status and
/// whether the connection stays open.
fn read_answer(connection: &mut BufReader<TcpStream>) -> Result<(u16, bool), Failure> {
    let mut line = Vec::with_capacity(128);
    let mut first = true;
    loop {
        line.clear();
        let read = connection.read_until(b'\n', &mut line);
        match read {
            Ok(0) if first => {
                return Err(Failure::BeforeAnswer(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the connection closed before an answer",
                )));
            }
            Err(error) if first => return Err(Failure::BeforeAnswer(error)),
            Ok(0) => return Err(Failure::InAnswer(invalid("the answer ended early"))),
            Err(error) => return Err(Failure::InAnswer(error)),
            Ok(_) => {}
        }
        first = false;
        let status = status_code(&line).ok_or_else(|| invalid("not an HTTP/1.x status line"))?;
        let head = read_headers(connection, &mut line)?;
        if (100..200).contains(&status) {
            continue;
        }
        let keep = !head.close;
        if status == 204 || status == 304 {
            return Ok((status, keep));
        }
        if head.chunked {
            read_chunked(connection, &mut line)?;
            return Ok((status, keep));
        }
        return match head.length {
            Some(length) => {
                let copied = io::copy(&mut connection.by_ref().take(length), &mut io::sink())?;
                if copied < length {
                    return Err(Failure::InAnswer(invalid("the answer's body ended early")));
                }
                Ok((status, keep))
            }
            None => {
                io::copy(connection, &mut io::sink())?;
                Ok((status, false))
            }
        };
    }
}

/// `HTTP/1.x NNN ...` -> `NNN`.
fn status_code(line: &[u8]) -> Option<u16> {
    let rest = line.strip_prefix(b"HTTP/1.")?;
    let code = rest.get(2..5)?;
    if rest.get(1) != Some(&b' ') || !code.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(code).ok()?.parse().ok()
}

/// What the answer's headers say about its body and the connection.
#[derive(Debug, Default)]
struct Head {
    length: Option<u64>,
    chunked: bool,
    close: bool,
}

fn read_headers(connection: &mut BufReader<TcpStream>, line: &mut Vec<u8>) -> io::Result<Head> {
    let mut head = Head::default();
    loop {
        line.clear();
        if connection.read_until(b'\n', line)? == 0 {
            return Err(invalid("the answer's headers ended early"));
        }
        let text = String::from_utf8_lossy(line);
        let text = text.trim_end();
        if text.is_empty() {
            return Ok(head);
        }
        let Some((name, value)) = text.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            head.length = Some(value.parse().map_err(|_| invalid("a bad content-length"))?);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            head.chunked = value
                .rsplit(',')
                .next()
                .is_some_and(|last| last.trim().eq_ignore_ascii_case("chunked"));
        } else if name.eq_ignore_ascii_case("connection") {
            head.close = value
                .split(',')
                .any(|option| option.trim().eq_ignore_ascii_case("close"));
        }
    }
}

/// Reads a chunked body and its trailers, discarding them.
fn read_chunked(connection: &mut BufReader<TcpStream>, line: &mut Vec<u8>) -> io::Result<()> {
    loop {
        line.clear();
        if connection.read_until(b'\n', line)? == 0 {
            return Err(invalid("the chunked answer ended early"));
        }
        let text = String::from_utf8_lossy(line);
        let size = text.split(';').next().unwrap_or("").trim();
        let size = u64::from_str_radix(size, 16).map_err(|_| invalid("a bad chunk size"))?;
        if size == 0 {
            // Trailers, up to the blank line.
            loop {
                line.clear();
                if connection.read_until(b'\n', line)? == 0 || line.trim_ascii().is_empty() {
                    return Ok(());
                }
            }
        }
        let copied = io::copy(&mut connection.by_ref().take(size + 2), &mut io::sink())?;
        if copied < size + 2 {
            return Err(invalid("the chunked answer ended early"));
        }
    }
}

#[cfg(test)]
mod tests;
