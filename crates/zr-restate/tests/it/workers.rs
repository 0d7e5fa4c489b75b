//! Workers in this process behind the loopback proxy, and a turn
//! submitted to them: the set-up the server tests share.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;
use tokio::task::JoinHandle;
use zr_restate::{RestateError, TurnAnswer};
use zr_types::SessionId;

use crate::host::TestHost;
use zr_test_support::proxy::Proxy;
use zr_test_support::restate::RestateServer;

/// Serves `host` as a Restate endpoint on a free loopback port.
pub(crate) async fn serve(host: Arc<TestHost>) -> SocketAddr {
    let listener = zr_restate::listen("127.0.0.1:0")
        .await
        .expect("a free port");
    let addr = listener.local_addr().expect("an address");
    tokio::spawn(zr_restate::serve(listener, host, std::future::pending()));
    addr
}

/// Two workers registered behind one proxy: everything goes to the first
/// until [`Takeover::take_over`].
pub(crate) struct Takeover {
    proxy: Proxy,
    first: SocketAddr,
    second: SocketAddr,
}

impl Takeover {
    /// Serves `first` and `second` and registers the proxy with `server`.
    pub(crate) async fn start(
        server: &RestateServer,
        first: &Arc<TestHost>,
        second: &Arc<TestHost>,
    ) -> Self {
        let first = serve(Arc::clone(first)).await;
        let second = serve(Arc::clone(second)).await;
        let proxy = Proxy::start(first).await;
        server.register(&proxy.url()).await;
        Self {
            proxy,
            first,
            second,
        }
    }

    /// The first worker is dead to the server: its connections drop and
    /// every new one goes to the second.
    pub(crate) fn take_over(&self) {
        self.proxy.point_to(self.second);
        self.proxy.cut();
    }

    /// The second worker is dead to the server, and the first serves
    /// again.
    pub(crate) fn give_back(&self) {
        self.proxy.point_to(self.first);
        self.proxy.cut();
    }
}

/// A turn under way.
pub(crate) type Turn = JoinHandle<Result<TurnAnswer, RestateError>>;

/// Submits `prompt` to `session` through the server's ingress.
pub(crate) fn submit(server: &RestateServer, session: &str, prompt: &str) -> Turn {
    let ingress = server.ingress_url();
    let session: SessionId = session.parse().expect("a session id");
    let prompt = prompt.to_owned();
    tokio::spawn(async move { zr_restate::submit(&ingress, &session, &prompt).await })
}

/// Waits until `crash` is told (a worker crashed in its `bump`), or
/// panics with `what` never happened and the server's log.
pub(crate) async fn crashed(server: &RestateServer, crash: &Notify, what: &str) {
    tokio::time::timeout(Duration::from_secs(60), crash.notified())
        .await
        .unwrap_or_else(|_| panic!("{what}\n{}", server.log()));
}

/// The answer of `turn` within `limit`, or a panic with the server's log.
pub(crate) async fn answer(server: &RestateServer, turn: Turn, limit: Duration) -> TurnAnswer {
    tokio::time::timeout(limit, turn)
        .await
        .unwrap_or_else(|_| panic!("the turn did not end\n{}", server.log()))
        .expect("the request task")
        .unwrap_or_else(|e| panic!("{e}"))
}
