//! A loopback TCP proxy in front of the workers: Restate knows one
//! endpoint address; the test decides which workers are behind it (each
//! new connection goes to the next of them in turn: Restate opens one per
//! invocation attempt) and can cut every open connection at once (what a
//! worker's death looks like from the server).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// The workers behind the proxy and the one the next connection goes to.
#[derive(Debug)]
struct Targets {
    addrs: Vec<SocketAddr>,
    next: usize,
}

impl Targets {
    fn take(&mut self) -> SocketAddr {
        let to = self.addrs[self.next % self.addrs.len()];
        self.next = (self.next + 1) % self.addrs.len();
        to
    }
}

/// The proxy: its address, the workers behind it, the open connections.
#[derive(Debug)]
pub struct Proxy {
    addr: SocketAddr,
    target: Arc<Mutex<Targets>>,
    open: Arc<Mutex<Vec<JoinHandle<()>>>>,
    accept: JoinHandle<()>,
}

impl Proxy {
    /// A proxy to `target` on a free loopback port.
    pub async fn start(target: SocketAddr) -> Self {
        Self::to_each(vec![target]).await
    }

    /// A proxy to `targets` in turn, connection by connection, the first
    /// one first.
    pub async fn to_each(targets: Vec<SocketAddr>) -> Self {
        assert!(!targets.is_empty(), "a proxy needs a worker behind it");
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a free port");
        let addr = listener.local_addr().expect("a bound address");
        let target = Arc::new(Mutex::new(Targets {
            addrs: targets,
            next: 0,
        }));
        let open: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let accept = {
            let (target, open) = (Arc::clone(&target), Arc::clone(&open));
            tokio::spawn(async move {
                while let Ok((mut inbound, _)) = listener.accept().await {
                    let to = target.lock().expect("not poisoned").take();
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
            target,
            open,
            accept,
        }
    }

    /// `http://127.0.0.1:PORT`, the endpoint Restate is told about.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// New connections go to `target` from now on.
    pub fn point_to(&self, target: SocketAddr) {
        self.point_to_all(&[target]);
    }

    /// New connections go to `targets` in turn from now on, the first
    /// one first.
    ///
    /// # Panics
    ///
    /// When `targets` is empty.
    pub fn point_to_all(&self, targets: &[SocketAddr]) {
        assert!(!targets.is_empty(), "a proxy needs a worker behind it");
        *self.target.lock().expect("not poisoned") = Targets {
            addrs: targets.to_vec(),
            next: 0,
        };
    }

    /// Closes every open connection (both ends see them drop).
    pub fn cut(&self) {
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
