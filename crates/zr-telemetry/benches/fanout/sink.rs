//! A loopback OTLP/HTTP sink: reads every export request whole (headers,
//! then `content-length` bytes), answers `200` with an empty
//! `ExportTraceServiceResponse`, and counts requests and bytes. What a
//! collector does on receipt, without storing anything.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A running sink; its threads end with the process (the bench's).
pub(crate) struct Sink {
    port: u16,
    requests: Arc<AtomicU64>,
    bytes: Arc<AtomicU64>,
}

impl Sink {
    pub(crate) fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let port = listener.local_addr().expect("its address").port();
        let requests = Arc::new(AtomicU64::new(0));
        let bytes = Arc::new(AtomicU64::new(0));
        let (r, b) = (Arc::clone(&requests), Arc::clone(&bytes));
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (r, b) = (Arc::clone(&r), Arc::clone(&b));
                std::thread::spawn(move || serve(stream, &r, &b));
            }
        });
        Self {
            port,
            requests,
            bytes,
        }
    }

    pub(crate) fn traces_endpoint(&self) -> String {
        format!("http://127.0.0.1:{}/v1/traces", self.port)
    }

    /// Export requests and body bytes received so far.
    pub(crate) fn received(&self) -> (u64, u64) {
        (
            self.requests.load(Ordering::Relaxed),
            self.bytes.load(Ordering::Relaxed),
        )
    }
}

/// Requests on one keep-alive connection, until the client closes it.
fn serve(stream: TcpStream, requests: &AtomicU64, bytes: &AtomicU64) {
    let mut writer = stream.try_clone().expect("a second handle");
    let mut reader = BufReader::new(stream);
    loop {
        let mut length = None;
        let mut line = String::new();
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse::<u64>().ok();
            }
        }
        let length = length.expect("OTLP/HTTP export requests carry content-length");
        let mut body = Vec::new();
        if (&mut reader).take(length).read_to_end(&mut body).is_err() {
            return;
        }
        requests.fetch_add(1, Ordering::Relaxed);
        bytes.fetch_add(length, Ordering::Relaxed);
        let answer =
            "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
        if writer.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}
