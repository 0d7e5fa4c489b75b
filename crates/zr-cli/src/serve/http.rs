//! `zr mcp serve --http ADDR`: rmcp's streamable HTTP service on a
//! loopback listener (HTTP/1.1 through hyper), one MCP session per
//! client, all calling into the one zr session. DNS-rebinding protection
//! is rmcp's: `Host` must be a loopback name and a present `Origin` a
//! loopback origin at the served port; anything else gets 403.

use std::net::SocketAddr;
use std::sync::Arc;

use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::error::{CliError, EXIT_OK};
use crate::serve::handler::{AgentServer, Served};
use crate::serve::http::front::Read;
use crate::signal::Signals;

mod front;

/// The hosts a request may name (any port): loopback only.
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Serves until a signal comes; prints the endpoint on standard error.
pub(crate) async fn serve(
    addr: SocketAddr,
    served: Arc<Served>,
    signals: &mut Signals,
) -> Result<u8, CliError> {
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
        Arc::new(LocalSessionManager::default()),
        config,
    ));
    eprintln!("zr mcp serve: listening on http://{local}/mcp");
    let result = loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let service = Arc::clone(&service);
                    let service = hyper::service::service_fn(move |request| {
                        let service = Arc::clone(&service);
                        async move {
                            Ok::<_, std::convert::Infallible>(match front::read(request).await {
                                Read::Json(request, refusal) => {
                                    front::answer(service.handle(request).await, refusal)
                                }
                                Read::Other(request) => service.handle(request).await,
                                Read::Answered(response) => response,
                            })
                        }
                    });
                    tokio::spawn(async move {
                        let connection = hyper::server::conn::http1::Builder::new()
                            .serve_connection(TokioIo::new(stream), service);
                        if let Err(error) = connection.await {
                            tracing::debug!(%error, "an HTTP connection ended with an error");
                        }
                    });
                }
                Err(error) => tracing::warn!(%error, "cannot accept a connection"),
            },
            signal = signals.recv() => break Err(signal.into()),
        }
    };
    stop.cancel();
    result.map(|()| EXIT_OK)
}
