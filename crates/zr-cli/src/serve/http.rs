//! `zr mcp serve --http ADDR`: rmcp's streamable HTTP service on a
//! loopback listener (HTTP/1.1 through hyper), one MCP session per
//! client, all calling into the one zr session. DNS-rebinding protection
//! is rmcp's: `Host` must be a loopback name and a present `Origin` a
//! loopback origin at the served port; anything else gets 403.
//!
//! Local clients cannot tie it up (`http/limits.rs`): a connection that
//! sends no request head within the head time (half-open, or idle
//! between requests) is closed, as is one slow to send a body; at most
//! so many connections are served at once; when the process is out of
//! file descriptors the accept loop pauses instead of spinning, with one
//! warning per burst; idle MCP sessions expire (`http/sessions.rs`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::{CliError, EXIT_OK};
use crate::serve::handler::{AgentServer, Served};
use crate::serve::http::front::Read;
use crate::serve::http::limits::Limits;
use crate::serve::http::sessions::Sessions;
use crate::signal::Signals;

mod front;
mod limits;
mod sessions;

/// The hosts a request may name (any port): loopback only.
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// How long the accept loop pauses when the process is out of file
/// descriptors (or the system out of memory for sockets).
const BACKOFF: Duration = Duration::from_millis(100);

type Service = StreamableHttpService<AgentServer, Sessions>;

/// Serves until a signal comes; prints the endpoint on standard error.
pub(crate) async fn serve(
    addr: SocketAddr,
    served: Arc<Served>,
    signals: &mut Signals,
) -> Result<u8, CliError> {
    let limits = Limits::from_env(&|v| std::env::var(v).ok());
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| {
        CliError::usage(
            format!("cannot listen on {addr}: {e}"),
            "choose a free port (or port 0 for any)",
        )
    })?;
    let local = listener.local_addr().map_err(|e| {
        CliError::usage(
            format!("cannot read the listening address: {e}"),
            "try again",
        )
    })?;
    let port = local.port();
    let origins = ["localhost", "127.0.0.1", "[::1]"].map(|host| format!("http://{host}:{port}"));
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(LOOPBACK_HOSTS)
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_max_request_body_bytes(front::MAX_BODY);
    let stop = config.cancellation_token.clone();
    let service = Arc::new(StreamableHttpService::new(
        move || Ok(AgentServer::new(Arc::clone(&served))),
        Sessions::start(limits.session_idle, limits.sessions),
        config,
    ));
    let slots = Arc::new(Semaphore::new(limits.connections));
    eprintln!("zr mcp serve: listening on http://{local}/mcp");
    // Accept errors since the last accepted connection.
    let mut failed: u64 = 0;
    let result = loop {
        // A free slot first: at the cap, new connections wait in the
        // listen queue.
        let permit = tokio::select! {
            permit = Arc::clone(&slots).acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break Ok(()),
            },
            signal = signals.recv() => break Err(signal.into()),
        };
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    if failed > 0 {
                        tracing::info!(failed, "accepting connections again");
                        failed = 0;
                    }
                    tokio::spawn(connection(stream, Arc::clone(&service), limits, permit));
                }
                Err(error) if out_of_resources(&error) => {
                    if failed == 0 {
                        tracing::warn!(
                            %error,
                            "cannot accept a connection: pausing {} ms at a time until one can be (this warning is not repeated)",
                            BACKOFF.as_millis()
                        );
                    }
                    failed += 1;
                    drop(permit);
                    tokio::time::sleep(BACKOFF).await;
                }
                Err(error) => tracing::debug!(%error, "cannot accept a connection"),
            },
            signal = signals.recv() => break Err(signal.into()),
        }
    };
    stop.cancel();
    result.map(|()| EXIT_OK)
}

/// Whether an accept error is the process or the system out of file
/// descriptors or memory: retrying at once would fail again.
fn out_of_resources(error: &std::io::Error) -> bool {
    matches!(
        error.raw_os_error(),
        Some(code) if code == nix::libc::EMFILE
            || code == nix::libc::ENFILE
            || code == nix::libc::ENOBUFS
            || code == nix::libc::ENOMEM
    )
}

/// Serves one connection: a head within `limits.head` (at its start and
/// between requests), a body within `limits.body`; its slot is freed when
/// it ends.
async fn connection(
    stream: TcpStream,
    service: Arc<Service>,
    limits: Limits,
    _slot: OwnedSemaphorePermit,
) {
    let service = hyper::service::service_fn(move |request| {
        let service = Arc::clone(&service);
        async move {
            let response = match tokio::time::timeout(limits.body, front::read(request)).await {
                Err(_) => front::text(
                    hyper::StatusCode::REQUEST_TIMEOUT,
                    format!(
                        "Request Timeout: the body did not arrive within {} ms",
                        limits.body.as_millis()
                    ),
                ),
                Ok(Read::Json(request, refusal)) => {
                    front::answer(service.handle(request).await, refusal)
                }
                Ok(Read::Other(request)) => service.handle(request).await,
                Ok(Read::Answered(response)) => response,
            };
            Ok::<_, std::convert::Infallible>(response)
        }
    });
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.head)
        .serve_connection(TokioIo::new(stream), service);
    if let Err(error) = connection.await {
        tracing::debug!(%error, "an HTTP connection ended with an error");
    }
}
