//! The plain client against loopback servers that answer as receivers do:
//! with a length, chunked, closing, with an error status; a connection
//! the server closed while idle is replaced.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::sync::mpsc;
use std::thread;

use super::*;

#[test]
fn endpoints_parse_into_what_is_connected_to_and_asked_for() {
    let parts = |endpoint: &str| Target::parse(endpoint).map(|t| (t.authority, t.address, t.path));
    let owned = |a: &str, b: &str, c: &str| Some((a.to_owned(), b.to_owned(), c.to_owned()));
    assert_eq!(
        parts("http://localhost:4318/v1/traces"),
        owned("localhost:4318", "localhost:4318", "/v1/traces")
    );
    assert_eq!(
        parts("http://collector"),
        owned("collector", "collector:80", "/")
    );
    assert_eq!(
        parts("http://[::1]/v1/traces?x=1"),
        owned("[::1]", "[::1]:80", "/v1/traces?x=1")
    );
    assert_eq!(
        parts("http://[::1]:4318?x"),
        owned("[::1]:4318", "[::1]:4318", "/?x")
    );
    assert_eq!(parts("https://collector/v1/traces"), None);
    assert_eq!(parts("http://user:pw@collector/v1/traces"), None);
    assert_eq!(parts("http:///v1/traces"), None);
    assert_eq!(
        parts("http://collector/v1/traces#top"),
        owned("collector", "collector:80", "/v1/traces")
    );
    assert_eq!(parts("http://collector/v1 traces"), None);
    assert_eq!(parts("http://collector/v1/trac\u{e9}s"), None);
}

/// What a server saw of one request: its head's lines and its body.
struct Seen {
    lines: Vec<String>,
    body: Vec<u8>,
}

/// A server that answers each request on a connection with the next of
/// `answers` (raw bytes), closing the connection after those marked so;
/// it reports each request, and the connection it came on.
fn server(answers: Vec<(&'static str, bool)>) -> (Target, mpsc::Receiver<(usize, Seen)>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut answers = answers.into_iter();
        for (connection, stream) in listener.incoming().enumerate() {
            let stream = stream.unwrap();
            let mut writer = stream.try_clone().unwrap();
            let mut reader = BufReader::new(stream);
            loop {
                let mut lines = Vec::new();
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        break;
                    }
                    if line.trim_end().is_empty() {
                        break;
                    }
                    lines.push(line.trim_end().to_owned());
                }
                if lines.is_empty() {
                    break;
                }
                let length: usize = lines
                    .iter()
                    .find_map(|l| l.strip_prefix("content-length: "))
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0);
                let mut body = vec![0; length];
                reader.read_exact(&mut body).unwrap();
                let Some((answer, close)) = answers.next() else {
                    return;
                };
                writer.write_all(answer.as_bytes()).unwrap();
                let _ = tx.send((connection, Seen { lines, body }));
                if close {
                    break;
                }
            }
        }
    });
    let target = Target::parse(&format!("http://127.0.0.1:{port}/v1/traces")).unwrap();
    (target, rx)
}

fn client(target: Target) -> PlainHttp {
    let headers = [
        ("content-type", &b"application/x-protobuf"[..]),
        ("x-key", b"v"),
    ];
    PlainHttp::new(target, headers.into_iter(), Duration::from_secs(5))
}

const OK: &str =
    "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 2\r\n\r\nab";
const CHUNKED: &str = "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";

#[test]
fn requests_carry_the_headers_and_the_parts_and_share_a_connection() {
    let (target, seen) = server(vec![(OK, false), (CHUNKED, false), (OK, false)]);
    let mut http = client(target);
    let bodies: [[&[u8]; 2]; 3] = [[b"he", b"llo"], [b"", b"x"], [b"yz", b""]];
    for body in bodies {
        assert_eq!(http.post(&body).unwrap(), 200);
    }
    let seen: Vec<(usize, Seen)> = seen.iter().take(3).collect();
    assert_eq!(
        seen.iter()
            .map(|(c, s)| (*c, s.body.clone()))
            .collect::<Vec<_>>(),
        [
            (0, b"hello".to_vec()),
            (0, b"x".to_vec()),
            (0, b"yz".to_vec())
        ]
    );
    let lines = &seen[0].1.lines;
    assert_eq!(lines[0], "POST /v1/traces HTTP/1.1");
    for expected in [
        "content-type: application/x-protobuf",
        "x-key: v",
        "content-length: 5",
        "accept: */*",
    ] {
        assert!(
            lines.iter().any(|l| l == expected),
            "{expected} in {lines:?}"
        );
    }
    assert!(
        lines.iter().any(|l| l.starts_with("host: 127.0.0.1:")),
        "{lines:?}"
    );
}

#[test]
fn a_connection_closed_by_the_server_is_replaced() {
    let closing = "HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";
    // The first connection is closed after its answer, without saying so:
    // the next request finds it gone and is sent again on a new one.
    let (target, seen) = server(vec![(closing, true), (OK, false)]);
    let mut http = client(target);
    assert_eq!(http.post(&[b"one"]).unwrap(), 200);
    thread::sleep(Duration::from_millis(50));
    assert_eq!(http.post(&[b"two"]).unwrap(), 200);
    let connections: Vec<(usize, Vec<u8>)> =
        seen.iter().take(2).map(|(c, s)| (c, s.body)).collect();
    assert_eq!(connections, [(0, b"one".to_vec()), (1, b"two".to_vec())]);
}

#[test]
fn an_error_status_and_a_body_to_the_end_are_read() {
    let error = "HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\nno good";
    let (target, _seen) = server(vec![(error, true), (OK, false)]);
    let mut http = client(target);
    assert_eq!(http.post(&[b"x"]).unwrap(), 400);
    assert!(
        http.connection.is_none(),
        "a closing answer drops the connection"
    );
    assert_eq!(http.post(&[b"y"]).unwrap(), 200);
}

#[test]
fn an_answer_that_is_not_http_is_an_error() {
    let (target, _seen) = server(vec![("SSH-2.0-nope\r\n\r\n", true)]);
    let mut http = client(target);
    let error = http.post(&[b"x"]).unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidData, "{error}");
}

#[test]
fn no_receiver_is_an_error_not_a_wait() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let target = Target::parse(&format!("http://127.0.0.1:{port}/v1/traces")).unwrap();
    assert!(client(target).post(&[b"x"]).is_err());
}
