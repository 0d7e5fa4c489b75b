//! A loopback TCP proxy in front of the workers: Restate knows one
//! endpoint address; the test decides which workers are behind it (new
//! connections go to them in turn, as a load balancer's would) and can
//! cut every open connection at once (what a worker's death looks like
//! from the server).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// The proxy: its address, the worker behind it, the open connections.
#[derive(Debug)]
pub(crate) struct Proxy {
    addr: SocketAddr,
    targets: Arc<Mutex<Vec<SocketAddr>>>,
    open: Arc<Mutex<Vec<JoinHandle<()>>>>,
    accept: JoinHandle<()>,
}

impl Proxy {
    /// A proxy to `target` on a free loopback port.
    pub(crate) async fn start(target: SocketAddr) -> Self {
        Self::to_each(vec![target]).await
    }

    /// A proxy to `targets` in turn, connection by connection.
    pub(crate) async fn to_each(targets: Vec<SocketAddr>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a free port");
        let addr = listener.local_addr().expect("a bound address");
        let targets = Arc::new(Mutex::new(targets));
        let open: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let accept = {
            let (targets, open) = (Arc::clone(&targets), Arc::clone(&open));
            tokio::spawn(async move {
                let mut turn = 0;
                while let Ok((mut inbound, _)) = listener.accept().await {
                    let to = {
                        let targets = targets.lock().expect("not poisoned");
                        turn += 1;
                        targets[turn % targets.len()]
                    };
                    let pipe = tokio::spawn(async move {
                        if let Ok(mut outbound) = TcpStream::connect(to).await {
                            let _ =
                                tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                        }
                    });
                    open.lock().expect("not poisoned").push(pipe);
                }
            })
        };
        Self {
            addr,
            targets,
            open,
            accept,
        }
    }

    /// `http://127.0.0.1:PORT`, the endpoint Restate is told about.
    pub(crate) fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// New connections go to `target` from now on.
    pub(crate) fn point_to(&self, target: SocketAddr) {
        *self.targets.lock().expect("not poisoned") = vec![target];
    }

    /// Closes every open connection (both ends see them drop).
    pub(crate) fn cut(&self) {
        for pipe in self.open.lock().expect("not poisoned").drain(..) {
            pipe.abort();
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.cut();
        self.accept.abort();
    }
}
