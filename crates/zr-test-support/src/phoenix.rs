//! A Phoenix server of the test's own: free loopback ports, a temporary
//! working folder, no telemetry of its own, killed on drop.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Phoenix as `cargo xtask deps` installed it.
fn phoenix_bin() -> PathBuf {
    crate::deps::installed("phoenix/bin/phoenix")
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

/// A running Phoenix, killed on drop.
#[derive(Debug)]
pub struct Phoenix {
    child: Child,
    port: u16,
    grpc_port: u16,
    _dir: tempfile::TempDir,
}

impl Phoenix {
    /// Starts Phoenix and waits until it answers (its start takes tens of
    /// seconds on a busy machine).
    pub async fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let grpc_port = free_port();
        let child = Command::new(phoenix_bin())
            .arg("serve")
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", dir.path())
            .env("PHOENIX_HOST", "127.0.0.1")
            .env("PHOENIX_PORT", port.to_string())
            .env("PHOENIX_GRPC_PORT", grpc_port.to_string())
            .env("PHOENIX_WORKING_DIR", dir.path())
            .env("PHOENIX_TELEMETRY_ENABLED", "false")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("phoenix.log")).unwrap())
            .spawn()
            .expect("phoenix starts");
        let mut phoenix = Self {
            child,
            port,
            grpc_port,
            _dir: dir,
        };
        phoenix.wait_healthy().await;
        phoenix
    }

    async fn wait_healthy(&mut self) {
        let start = Instant::now();
        let client = reqwest::Client::new();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("phoenix exited before it was ready: {status}");
            }
            let ready = client
                .get(format!("{}/healthz", self.url()))
                .send()
                .await
                .is_ok_and(|r| r.status().is_success());
            if ready {
                return;
            }
            // Its start (imports, database migrations) takes a minute or
            // two on a busy machine of two cores.
            assert!(
                start.elapsed() < Duration::from_secs(600),
                "phoenix did not answer within 600 s; its log ends: {}",
                self.log_tail()
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self._dir.path().join("phoenix.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }

    /// `http://127.0.0.1:PORT` of its web API.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Its OTLP/HTTP traces endpoint.
    pub fn traces_endpoint(&self) -> String {
        format!("{}/v1/traces", self.url())
    }

    /// Its OTLP/gRPC address.
    pub fn grpc_endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.grpc_port)
    }

    /// The spans Phoenix stored in its default project, once there are at
    /// least `count` (ingestion is asynchronous), within 60 s.
    pub async fn spans(&self, count: usize) -> Vec<Value> {
        self.project_spans("default", count).await
    }

    /// The spans Phoenix stored in `project` (the resource's
    /// `openinference.project.name`), once there are at least `count`,
    /// within 60 s.
    pub async fn project_spans(&self, project: &str, count: usize) -> Vec<Value> {
        let client = reqwest::Client::new();
        let start = Instant::now();
        loop {
            let answer = client
                .get(format!(
                    "{}/v1/projects/{project}/spans?limit=1000",
                    self.url()
                ))
                .send()
                .await
                .unwrap();
            if answer.status() == reqwest::StatusCode::NOT_FOUND
                && start.elapsed() < Duration::from_secs(60)
            {
                // The project is made when its first span is stored.
                tokio::time::sleep(Duration::from_millis(250)).await;
                continue;
            }
            let body: Value = answer.json().await.unwrap();
            let spans = body["data"].as_array().cloned().unwrap_or_default();
            if spans.len() >= count || start.elapsed() > Duration::from_secs(60) {
                return spans;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
}

impl Drop for Phoenix {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
