//! WebFetch against a hand-written HTTP/1.1 server on 127.0.0.1: pages,
//! limits, and the address policy (loopback refused unless allowed, seen
//! from the server's side as connections that never came).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use zr_tools::{BuiltinTools, WebFetchLimits, WebFetchPolicy, fetch_host};

use crate::support::{Kit, assert_error, text};

const PAGE: &str = "<html><head><title>T</title><style>p{}</style></head><body>\
<script>var hidden = 1;</script><h1>Hello</h1><p>Some <b>bold</b> text and a \
<a href=\"https://example.invalid/x\">link</a>.</p><ul><li>one</li><li>two</li></ul></body></html>";

/// "café ©" in ISO-8859-1: 0xE9 and 0xA9 are not valid UTF-8 here.
const LATIN1_PAGE: &[u8] = b"<html><body><p>caf\xe9 \xa9</p></body></html>";

async fn serve(mut sock: TcpStream) {
    let mut buf = Vec::new();
    let mut chunk = [0_u8; 1024];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        match sock.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let head = String::from_utf8_lossy(&buf).into_owned();
    let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
    let reply = |status: &str, headers: &str, body: &[u8]| {
        let mut r = format!("HTTP/1.1 {status}\r\n{headers}Connection: close\r\n\r\n").into_bytes();
        r.extend_from_slice(body);
        r
    };
    let response = match path.as_str() {
        "/page" => reply(
            "200 OK",
            &format!(
                "Content-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n",
                PAGE.len()
            ),
            PAGE.as_bytes(),
        ),
        "/latin1" => reply(
            "200 OK",
            &format!(
                "Content-Type: text/html; charset=ISO-8859-1\r\nContent-Length: {}\r\n",
                LATIN1_PAGE.len()
            ),
            LATIN1_PAGE,
        ),
        "/latin1-text" => reply(
            "200 OK",
            "Content-Type: text/plain;charset=\"iso-8859-1\"\r\nContent-Length: 5\r\n",
            b"na\xefve",
        ),
        "/redirect" => reply("302 Found", "Location: /page\r\nContent-Length: 0\r\n", b""),
        p if p.starts_with("/go?") => reply(
            "302 Found",
            &format!("Location: {}\r\nContent-Length: 0\r\n", &p[4..]),
            b"",
        ),
        "/loop" => reply("302 Found", "Location: /loop\r\nContent-Length: 0\r\n", b""),
        "/json" => reply(
            "200 OK",
            "Content-Type: application/json\r\nContent-Length: 11\r\n",
            b"{\"a\": true}",
        ),
        "/image" => reply(
            "200 OK",
            "Content-Type: image/png\r\nContent-Length: 8\r\n",
            &[0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a],
        ),
        "/declared-big" => reply(
            "200 OK",
            "Content-Type: text/plain\r\nContent-Length: 200000\r\n",
            b"",
        ),
        "/streamed-big" => {
            // No Content-Length: the client must stop reading by itself.
            let _ = sock
                .write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n",
                )
                .await;
            let block = vec![b'z'; 8192];
            for _ in 0..64 {
                if sock.write_all(&block).await.is_err() {
                    return;
                }
            }
            return;
        }
        "/slow" => {
            tokio::time::sleep(Duration::from_secs(20)).await;
            reply("200 OK", "Content-Length: 2\r\n", b"ok")
        }
        _ => reply("404 Not Found", "Content-Length: 0\r\n", b""),
    };
    let _ = sock.write_all(&response).await;
    let _ = sock.shutdown().await;
}

/// A test server on `listener`: its port and the number of connections it
/// accepted so far.
struct Server {
    port: u16,
    accepted: Arc<AtomicUsize>,
}

impl Server {
    fn start(listener: TcpListener) -> Self {
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&accepted);
        tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(serve(sock));
            }
        });
        Self { port, accepted }
    }

    async fn loopback() -> Self {
        Self::start(TcpListener::bind("127.0.0.1:0").await.unwrap())
    }

    fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

async fn server() -> String {
    format!("http://127.0.0.1:{}", Server::loopback().await.port)
}

/// The policy of the tests that fetch from their own loopback server:
/// that one address, and nothing else, allowed.
fn loopback_allowed() -> WebFetchPolicy {
    WebFetchPolicy {
        private_hosts: vec!["127.0.0.1".to_owned()],
        ..WebFetchPolicy::default()
    }
}

fn kit_with(limits: WebFetchLimits, policy: WebFetchPolicy) -> Kit {
    let dir = tempfile::tempdir().unwrap();
    let tools = BuiltinTools::new(dir.path().join("cron.json"))
        .with_web_fetch_limits(limits)
        .with_web_fetch_policy(policy);
    Kit::with(tools, dir)
}

fn kit(limits: WebFetchLimits) -> Kit {
    kit_with(limits, loopback_allowed())
}

/// A kit whose WebFetch may reach the loopback test servers.
fn loopback_kit() -> Kit {
    kit(WebFetchLimits::default())
}

#[tokio::test]
async fn html_becomes_markdown() {
    let base = server().await;
    let kit = loopback_kit();
    let out = kit
        .call(
            "WebFetch",
            json!({"url": format!("{base}/page"), "prompt": "what is it?"}),
        )
        .await;
    let t = text(&out);
    assert!(!out.is_error, "{t}");
    assert!(t.starts_with("Your question: what is it?\nURL: "), "{t}");
    assert!(t.contains("Content-Type: text/html"), "{t}");
    assert!(t.contains("# Hello"), "{t}");
    assert!(t.contains("**bold**"), "{t}");
    assert!(t.contains("[link](https://example.invalid/x)"), "{t}");
    assert!(t.contains("one") && t.contains("two"), "{t}");
    assert!(!t.contains("hidden"), "script kept: {t}");
    assert!(!t.contains("p{}"), "style kept: {t}");
}

#[tokio::test]
async fn redirects_are_followed_and_bounded() {
    let base = server().await;
    let kit = loopback_kit();
    let t = text(
        &kit.call("WebFetch", json!({"url": format!("{base}/redirect")}))
            .await,
    );
    assert!(
        t.contains(&format!(
            "URL: {base}/page (redirected from {base}/redirect)"
        )),
        "{t}"
    );
    assert!(t.contains("# Hello"), "{t}");
    let out = kit
        .call("WebFetch", json!({"url": format!("{base}/loop")}))
        .await;
    assert_error(&out, "redirected more than 5 times");
}

#[tokio::test]
async fn text_and_json_pass_through_and_binary_is_refused() {
    let base = server().await;
    let kit = loopback_kit();
    let t = text(
        &kit.call("WebFetch", json!({"url": format!("{base}/json")}))
            .await,
    );
    assert!(t.ends_with("\n\n{\"a\": true}"), "{t}");
    let out = kit
        .call("WebFetch", json!({"url": format!("{base}/image")}))
        .await;
    assert_error(&out, "is image/png, not a text or HTML page");
    let out = kit
        .call("WebFetch", json!({"url": format!("{base}/missing")}))
        .await;
    assert_error(&out, "HTTP 404");
    let out = kit
        .call("WebFetch", json!({"url": "ftp://example.invalid/x"}))
        .await;
    assert!(text(&out).contains("scheme 'ftp' is not supported"));
    let out = kit.call("WebFetch", json!({"url": "not a url"})).await;
    assert!(text(&out).contains("is not a valid address"));
}

#[tokio::test]
async fn bodies_over_the_size_limit_are_refused() {
    let base = server().await;
    let kit = kit(WebFetchLimits {
        max_body_bytes: 50_000,
        ..WebFetchLimits::default()
    });
    let out = kit
        .call("WebFetch", json!({"url": format!("{base}/declared-big")}))
        .await;
    assert_error(&out, "is 200000 bytes; at most 50000");
    let out = kit
        .call("WebFetch", json!({"url": format!("{base}/streamed-big")}))
        .await;
    assert_error(&out, "larger than 50000 bytes; reading stopped");
}

#[tokio::test]
async fn slow_servers_hit_the_time_limit() {
    let base = server().await;
    let kit = kit(WebFetchLimits {
        timeout: Duration::from_millis(800),
        ..WebFetchLimits::default()
    });
    let started = std::time::Instant::now();
    let out = kit
        .call("WebFetch", json!({"url": format!("{base}/slow")}))
        .await;
    assert_error(&out, "did not answer within 0.8 s");
    assert!(started.elapsed() < Duration::from_secs(15));
}

#[tokio::test]
async fn long_pages_are_cut_and_say_so() {
    let base = server().await;
    let kit = kit(WebFetchLimits {
        max_output_bytes: 120,
        ..WebFetchLimits::default()
    });
    let t = text(
        &kit.call("WebFetch", json!({"url": format!("{base}/page")}))
            .await,
    );
    assert!(t.contains("[... output cut: 120 of "), "{t}");
    assert!(t.contains("fetch a more specific address"), "{t}");
}

/// The charset of the Content-Type is honoured: ISO-8859-1 bytes are
/// decoded, not turned into replacement characters.
#[tokio::test]
async fn declared_charsets_are_decoded() {
    let base = server().await;
    let kit = loopback_kit();
    let out = kit
        .call("WebFetch", json!({"url": format!("{base}/latin1")}))
        .await;
    let t = text(&out);
    assert!(!out.is_error, "{t}");
    assert!(t.contains("café ©"), "{t}");
    assert!(!t.contains('\u{FFFD}'), "{t}");
    let t = text(
        &kit.call("WebFetch", json!({"url": format!("{base}/latin1-text")}))
            .await,
    );
    assert!(t.ends_with("\n\nnaïve"), "{t}");
}

const REMEDY: &str = "allow this host (the WebFetch policy's private_hosts)";

/// With the default policy, every spelling of a loopback address is
/// refused before a connection is made: the server never sees one.
#[tokio::test]
async fn loopback_is_refused_by_default_in_every_spelling() {
    let server = Server::loopback().await;
    let port = server.port;
    let kit = Kit::new();
    for url in [
        format!("http://127.0.0.1:{port}/page"),
        format!("http://0x7f000001:{port}/page"),
        format!("http://2130706433:{port}/page"),
        format!("http://0x7f.1:{port}/page"),
        format!("http://127.1:{port}/page"),
        format!("http://[::ffff:127.0.0.1]:{port}/page"),
    ] {
        let out = kit.call("WebFetch", json!({ "url": url })).await;
        assert_error(
            &out,
            "127.0.0.1 is not a public internet address: it is a loopback address",
        );
        assert_error(&out, REMEDY);
    }
    let out = kit
        .call(
            "WebFetch",
            json!({ "url": format!("http://localhost:{port}/page") }),
        )
        .await;
    assert_error(&out, "localhost resolves to ");
    assert_error(&out, "a loopback address");
    assert_error(&out, REMEDY);
    assert_eq!(server.accepted(), 0, "the server saw a connection");
}

#[tokio::test]
async fn ipv6_loopback_is_refused_by_default() {
    let Ok(listener) = TcpListener::bind("[::1]:0").await else {
        eprintln!("no IPv6 loopback here; skipped");
        return;
    };
    let server = Server::start(listener);
    let kit = Kit::new();
    let out = kit
        .call(
            "WebFetch",
            json!({ "url": format!("http://[::1]:{}/page", server.port) }),
        )
        .await;
    assert_error(
        &out,
        "::1 is not a public internet address: it is a loopback address",
    );
    assert_eq!(server.accepted(), 0, "the server saw a connection");
    // Allowed by its address, it is fetched.
    let kit = kit_with(
        WebFetchLimits::default(),
        WebFetchPolicy {
            private_hosts: vec!["::1".to_owned()],
            ..WebFetchPolicy::default()
        },
    );
    let out = kit
        .call(
            "WebFetch",
            json!({ "url": format!("http://[::1]:{}/page", server.port) }),
        )
        .await;
    assert!(!out.is_error, "{}", text(&out));
    assert_eq!(server.accepted(), 1);
}

/// The cloud metadata address is refused like loopback; nothing listens
/// there in the test, and nothing needs to: no connection is tried.
#[tokio::test]
async fn link_local_and_private_literals_are_refused_by_default() {
    let kit = Kit::new();
    let out = kit
        .call(
            "WebFetch",
            json!({ "url": "http://169.254.169.254/latest/meta-data/" }),
        )
        .await;
    assert_error(
        &out,
        "169.254.169.254 is not a public internet address: it is a link-local address",
    );
    let out = kit
        .call("WebFetch", json!({ "url": "http://10.1.2.3/" }))
        .await;
    assert_error(&out, "it is a private network address");
}

/// Credentials in the address are refused even when every private address
/// is allowed, and the refusal does not repeat the password.
#[tokio::test]
async fn credentials_in_the_address_are_always_refused() {
    let server = Server::loopback().await;
    let kit = kit_with(
        WebFetchLimits::default(),
        WebFetchPolicy {
            allow_private: true,
            private_hosts: vec!["127.0.0.1".to_owned()],
        },
    );
    let out = kit
        .call(
            "WebFetch",
            json!({ "url": format!("http://user:hunter2@127.0.0.1:{}/page", server.port) }),
        )
        .await;
    assert_error(&out, "carries a user name or password");
    assert_error(&out, "No setting allows credentials");
    assert!(!text(&out).contains("hunter2"), "{}", text(&out));
    assert_eq!(server.accepted(), 0, "the server saw a connection");
}

/// A server the policy allows redirects to loopback hosts it does not
/// allow: an IP literal (the redirect policy's check), a name (the
/// resolver's) and credentials. The second server never sees a connection.
#[tokio::test]
async fn redirects_to_refused_addresses_are_not_followed() {
    let allowed = Server::loopback().await;
    let target = Server::loopback().await;
    let (a, b) = (allowed.port, target.port);
    // "localhost" is allowed, 127.0.0.1 as a literal is not.
    let kit = kit_with(
        WebFetchLimits::default(),
        WebFetchPolicy {
            private_hosts: vec!["localhost".to_owned()],
            ..WebFetchPolicy::default()
        },
    );
    let out = kit
        .call(
            "WebFetch",
            json!({ "url": format!("http://localhost:{a}/redirect") }),
        )
        .await;
    assert!(!out.is_error, "the allowed host is fetched: {}", text(&out));
    let out = kit
        .call(
            "WebFetch",
            json!({ "url": format!("http://localhost:{a}/go?http://127.0.0.1:{b}/page") }),
        )
        .await;
    assert_error(
        &out,
        &format!(
            "it redirects to http://127.0.0.1:{b}/page, and 127.0.0.1 is not a public internet address"
        ),
    );
    assert_error(&out, REMEDY);
    // 127.0.0.1 is allowed, the name localhost is not.
    let kit = loopback_kit();
    let out = kit
        .call(
            "WebFetch",
            json!({ "url": format!("http://127.0.0.1:{a}/go?http://localhost:{b}/page") }),
        )
        .await;
    assert_error(&out, "localhost resolves to ");
    let out = kit
        .call(
            "WebFetch",
            json!({ "url": format!("http://127.0.0.1:{a}/go?http://u:pw@127.0.0.1:{b}/page") }),
        )
        .await;
    assert_error(
        &out,
        &format!(
            "it redirects to http://127.0.0.1:{b}/page, and the address of 127.0.0.1 carries a user name or password"
        ),
    );
    assert_eq!(target.accepted(), 0, "the redirect target saw a connection");
    // /redirect and /page (each answer closes its connection), then one
    // connection for each refused redirect.
    assert_eq!(allowed.accepted(), 5);
}

#[test]
fn fetch_host_names_the_normalised_host() {
    let host = |url: &str| fetch_host(&json!({ "url": url, "prompt": "p" }));
    assert_eq!(host("https://DOCS.rs./std"), Some("docs.rs".to_owned()));
    assert_eq!(
        host("http://user:pw@Example.COM:8080/"),
        Some("example.com".to_owned())
    );
    assert_eq!(host("http://2130706433/"), Some("127.0.0.1".to_owned()));
    assert_eq!(host("http://[::1]:80/"), Some("[::1]".to_owned()));
    assert_eq!(
        host("https://bücher.example/"),
        Some("xn--bcher-kva.example".to_owned())
    );
    assert_eq!(host("ftp://example.com/"), None);
    assert_eq!(host("not a url"), None);
    assert_eq!(fetch_host(&json!({ "prompt": "no url" })), None);
    assert_eq!(fetch_host(&json!({ "url": 7 })), None);
}
