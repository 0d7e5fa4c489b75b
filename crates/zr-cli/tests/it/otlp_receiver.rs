//! A loopback OTLP/HTTP receiver for the telemetry tests.

/// A loopback OTLP/HTTP receiver: serves every connection (zr-telemetry's
/// `receive.rs`) and keeps the bodies' bytes.
pub(crate) struct OtlpReceiver {
    port: u16,
    bodies: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
}

impl OtlpReceiver {
    pub(crate) fn start() -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let port = listener.local_addr().expect("its address").port();
        let bodies = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = std::sync::Arc::clone(&bodies);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let seen = std::sync::Arc::clone(&seen);
                std::thread::spawn(move || {
                    zr_test_support::receive::serve_requests(stream, |body| {
                        seen.lock().expect("not poisoned").extend_from_slice(body);
                    });
                });
            }
        });
        Self { port, bodies }
    }

    pub(crate) fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}/v1/traces", self.port)
    }

    /// Whether `text` is among the bytes received.
    pub(crate) fn has(&self, text: &str) -> bool {
        let bodies = self.bodies.lock().expect("not poisoned");
        bodies.windows(text.len()).any(|w| w == text.as_bytes())
    }
}
