//! A loopback OTLP/HTTP sink: reads every export request whole (headers,
//! then `content-length` bytes), answers `200` with an empty
//! `ExportTraceServiceResponse`, and counts requests and bytes. What a
//! collector does on receipt, without storing anything.
//!
//! It runs in a process of its own (the bench binary again, with
//! `ZR_BENCH_SINK=serve`), as a receiver does: the CPU time of the bench's
//! process is then zr's alone (the kernel still charges loopback TCP's
//! receiving work partly to the sender). It prints its port, then the
//! running counts after each request, and ends when its standard input
//! closes (the bench's process ended) or it is killed (the `Sink` dropped).

use std::io::{BufRead as _, BufReader, Read as _};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The environment variable that makes the bench binary a sink.
pub(crate) const SERVE: &str = "ZR_BENCH_SINK";

/// A running sink process.
pub(crate) struct Sink {
    port: u16,
    requests: Arc<AtomicU64>,
    bytes: Arc<AtomicU64>,
    child: Child,
}

impl Sink {
    pub(crate) fn start() -> Self {
        let mut child = Command::new(std::env::current_exe().expect("the bench binary"))
            .env(SERVE, "serve")
            .env_remove("ZR_BENCH_ONCE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the sink process starts");
        let mut lines = BufReader::new(child.stdout.take().expect("piped")).lines();
        let port = lines
            .next()
            .and_then(Result::ok)
            .and_then(|line| line.trim().parse().ok())
            .expect("the sink prints its port");
        let requests = Arc::new(AtomicU64::new(0));
        let bytes = Arc::new(AtomicU64::new(0));
        let (r, b) = (Arc::clone(&requests), Arc::clone(&bytes));
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                if let Some((n, size)) = line.split_once(' ') {
                    r.store(n.parse().unwrap_or(0), Ordering::Relaxed);
                    b.store(size.parse().unwrap_or(0), Ordering::Relaxed);
                }
            }
        });
        Self {
            port,
            requests,
            bytes,
            child,
        }
    }

    pub(crate) fn traces_endpoint(&self) -> String {
        format!("http://127.0.0.1:{}/v1/traces", self.port)
    }

    /// Export requests and body bytes received so far (as the sink last
    /// said: wait a little after the final flush).
    pub(crate) fn received(&self) -> (u64, u64) {
        std::thread::sleep(std::time::Duration::from_millis(50));
        (
            self.requests.load(Ordering::Relaxed),
            self.bytes.load(Ordering::Relaxed),
        )
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The sink process's work: serve until standard input closes.
pub(crate) fn serve_here() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let port = listener.local_addr().expect("its address").port();
    println!("{port}");
    let requests = Arc::new(AtomicU64::new(0));
    let bytes = Arc::new(AtomicU64::new(0));
    let (r, b) = (Arc::clone(&requests), Arc::clone(&bytes));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (r, b) = (Arc::clone(&r), Arc::clone(&b));
            std::thread::spawn(move || serve(stream, &r, &b));
        }
    });
    // Ends with the bench's process.
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
}

/// Requests on one keep-alive connection, counted and said, until the
/// client closes it.
fn serve(stream: TcpStream, requests: &AtomicU64, bytes: &AtomicU64) {
    zr_test_support::receive::serve_requests(stream, |body| {
        let length = body.len() as u64;
        let n = requests.fetch_add(1, Ordering::Relaxed) + 1;
        let size = bytes.fetch_add(length, Ordering::Relaxed) + length;
        println!("{n} {size}");
    });
}
