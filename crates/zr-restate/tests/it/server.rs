//! zr-test-support's `restate-server` itself: it answers on its own
//! loopback ports, in its own base folder, and dies with its handle.

use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

use zr_test_support::restate::{RestateServer, get};

#[test]
fn the_server_answers_on_its_own_ports_and_dies_with_its_handle() {
    let server = RestateServer::start();
    let ingress = server.addrs()[0];
    let (status, body) = get(ingress, "/restate/health").expect("the ingress answers");
    assert_eq!(status, 200, "ingress health: {body}");
    assert!(
        server.admin_url().starts_with("http://127.0.0.1:")
            && server.ingress_url() != server.admin_url(),
        "{} {}",
        server.admin_url(),
        server.ingress_url()
    );
    assert!(
        server.base().join("data").is_dir(),
        "the base folder is the temporary one"
    );
    let pid = server.pid();
    let addrs = server.addrs();
    drop(server);
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "restate-server {pid} outlived its handle"
    );
    for addr in addrs {
        assert!(
            TcpStream::connect_timeout(&addr, Duration::from_millis(500)).is_err(),
            "{addr} still answers after the server was dropped"
        );
    }
}
