//! A real Restate server for the durable-run tests: `restate-server` from
//! `cargo xtask deps` (`@restatedev/restate-server`, pinned in
//! `xtask/deps`), started on loopback with free ports and a temporary base
//! folder, and killed with the test.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long the server may take to answer `/health` (it takes well under a
/// second on an idle machine; CI machines are shared).
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// A running `restate-server`: its process group is killed when this is
/// dropped (and, through zr-process, when the test process dies).
#[derive(Debug)]
pub struct RestateServer {
    child: Child,
    group: zr_process::ProcessGroup,
    ingress: SocketAddr,
    admin: SocketAddr,
    node: SocketAddr,
    base: tempfile::TempDir,
}

/// The server binary of this machine's platform package.
fn binary() -> PathBuf {
    let arch = match std::env::consts::ARCH {
        "aarch64" => "arm64",
        _ => "x64",
    };
    crate::deps::installed(&format!(
        "node/node_modules/@restatedev/restate-server-linux-{arch}/bin/restate-server"
    ))
}

/// A loopback port nothing listens on now (the server binds it a moment
/// later; a port taken in between makes the start fail and be retried).
fn free_port() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free loopback port");
    listener
        .local_addr()
        .expect("a bound listener has an address")
}

impl RestateServer {
    /// Starts a server and waits until its admin API answers `/health`.
    ///
    /// # Panics
    ///
    /// When the binary is missing (`cargo xtask deps` not run) or the
    /// server does not become healthy: the panic holds its log.
    pub fn start() -> Self {
        let mut last = String::new();
        for _ in 0..3 {
            match Self::try_start() {
                Ok(server) => return server,
                Err(log) => last = log,
            }
        }
        panic!("restate-server did not start; its log:\n{last}");
    }

    fn try_start() -> Result<Self, String> {
        let base = tempfile::tempdir().expect("a temporary folder");
        let (ingress, admin, node) = (free_port(), free_port(), free_port());
        let log = std::fs::File::create(base.path().join("server.log")).expect("a log file");
        let mut cmd = Command::new(binary());
        cmd.arg("--bind-ip")
            .arg("127.0.0.1")
            .arg("--bind-port")
            .arg(node.port().to_string())
            .arg("--base-dir")
            .arg(base.path().join("data"))
            .arg("--node-name")
            .arg("zr-test")
            .arg("--no-logo")
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("RESTATE_DISABLE_TELEMETRY", "true")
            .env("RESTATE_LISTEN_MODE", "tcp")
            .env("RESTATE_LOG_DISABLE_ANSI_CODES", "true")
            .env("RESTATE_ADMIN__BIND_ADDRESS", admin.to_string())
            .env("RESTATE_INGRESS__BIND_ADDRESS", ingress.to_string())
            // One invocation per HTTP/2 connection to a deployment: the
            // loopback proxy in front of the workers then decides the
            // worker of each invocation, as a load balancer would.
            .env(
                "RESTATE_WORKER__INVOKER__HTTP2_STREAMS_PER_CONNECTION_LIMIT",
                "1",
            )
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("a second handle"))
            .stderr(log);
        let (child, group) =
            zr_process::spawn_std(cmd, "restate-server").expect("restate-server starts");
        let mut server = Self {
            child,
            group,
            ingress,
            admin,
            node,
            base,
        };
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if get(admin, "/health").is_some_and(|(status, _)| status == 200) {
                return Ok(server);
            }
            let exited = server.child.try_wait().ok().flatten().is_some();
            if exited || Instant::now() > deadline {
                return Err(server.log());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `http://127.0.0.1:PORT` of the ingress (where invocations go).
    pub fn ingress_url(&self) -> String {
        format!("http://{}", self.ingress)
    }

    /// `http://127.0.0.1:PORT` of the admin API (deployments, health).
    pub fn admin_url(&self) -> String {
        format!("http://{}", self.admin)
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The three ports the server listens on.
    pub fn addrs(&self) -> [SocketAddr; 3] {
        [self.ingress, self.admin, self.node]
    }

    /// Its data folder's parent (the log is `server.log` in it).
    pub fn base(&self) -> &Path {
        self.base.path()
    }

    /// What the server logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.base.path().join("server.log")).unwrap_or_default()
    }
}

impl Drop for RestateServer {
    fn drop(&mut self) {
        self.group.end();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `GET path` of `addr` over HTTP/1.1: the status and body, or `None` when
/// nothing answers.
pub fn get(addr: SocketAddr, path: &str) -> Option<(u16, String)> {
    request(addr, "GET", path, None)
}

/// `METHOD path` of `addr` over HTTP/1.1, with a JSON `body`: the status
/// and body (de-chunked), or `None` when nothing answers.
pub fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let body = body.unwrap_or("");
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nAccept: application/json\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .ok()?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).ok()?;
    let text = String::from_utf8_lossy(&raw);
    let status = text.split(' ').nth(1)?.parse().ok()?;
    let (head, rest) = text.split_once("\r\n\r\n")?;
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(rest)
    } else {
        rest.to_owned()
    };
    Some((status, body))
}

/// The body of a chunked answer.
fn dechunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, tail)) = rest.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || tail.len() < size {
            break;
        }
        out.push_str(&tail[..size]);
        rest = tail[size..].trim_start_matches("\r\n");
    }
    out
}

/// The engine's and the SDK's logs in the test's output, filtered by
/// `ZR_LOG` (once per test binary).
pub fn log_to_test() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_env("ZR_LOG"))
        .with_test_writer()
        .try_init();
}

impl RestateServer {
    /// Registers the worker deployment at `endpoint` (`http://HOST:PORT`).
    ///
    /// # Panics
    ///
    /// When the admin API refuses it (with the server's log).
    pub async fn register(&self, endpoint: &str) {
        zr_restate::register(&self.admin_url(), endpoint)
            .await
            .unwrap_or_else(|e| panic!("{e}\n{}", self.log()));
    }

    /// The rows of an SQL query of the admin API (`POST /query`): the
    /// invocations table `sys_invocation` and the like.
    ///
    /// # Panics
    ///
    /// When the API does not answer with rows.
    pub fn sql(&self, query: &str) -> Vec<serde_json::Value> {
        let body = serde_json::json!({ "query": query }).to_string();
        let (status, text) = request(self.admin, "POST", "/query", Some(&body))
            .unwrap_or_else(|| panic!("the admin API did not answer {query}"));
        assert_eq!(status, 200, "{query}: {text}");
        let value: serde_json::Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        value["rows"].as_array().cloned().unwrap_or_default()
    }

    /// The invocations of `service`: id -> (status, completion failure).
    pub fn invocations(
        &self,
        service: &str,
    ) -> std::collections::BTreeMap<String, (String, String)> {
        self.sql(&format!(
            "SELECT id, status, completion_failure FROM sys_invocation WHERE target_service_name = '{service}'"
        ))
        .into_iter()
        .map(|row| {
            let text = |key: &str| row[key].as_str().unwrap_or_default().to_owned();
            (text("id"), (text("status"), text("completion_failure")))
        })
        .collect()
    }

    /// Cancels the invocation `id` through the admin API.
    ///
    /// # Panics
    ///
    /// When the API refuses.
    pub fn cancel(&self, id: &str) {
        let (status, text) = request(
            self.admin,
            "PATCH",
            &format!("/invocations/{id}/cancel"),
            None,
        )
        .unwrap_or_else(|| panic!("the admin API did not answer the cancel of {id}"));
        assert!(
            (200..300).contains(&status),
            "cancel {id}: HTTP {status} {text}"
        );
    }
}
