//! WebFetch against a hand-written HTTP/1.1 server on 127.0.0.1.

use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use zr_tools::{BuiltinTools, WebFetchLimits};

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

async fn server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((sock, _)) = listener.accept().await {
            tokio::spawn(serve(sock));
        }
    });
    format!("http://{addr}")
}

fn kit(limits: WebFetchLimits) -> Kit {
    let dir = tempfile::tempdir().unwrap();
    let tools = BuiltinTools::new(dir.path().join("cron.json")).with_web_fetch_limits(limits);
    Kit::with(tools, dir)
}

#[tokio::test]
async fn html_becomes_markdown() {
    let base = server().await;
    let kit = Kit::new();
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
    let kit = Kit::new();
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
    let kit = Kit::new();
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
    let kit = Kit::new();
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
