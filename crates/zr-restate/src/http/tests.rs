//! Tests of the HTTP exchange against loopback servers: one that never
//! answers, one whose chunked body splits characters.

#![allow(clippy::unwrap_used, reason = "tests")]

use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;

use super::get;
use crate::error::HttpError;

/// A loopback server that answers each connection with `answer` (after
/// reading the request), or never when `None`; its `http://` URL.
async fn server(answer: Option<Vec<Vec<u8>>>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((mut stream, _)) = listener.accept().await {
            let Some(parts) = answer.clone() else {
                // Accepted, never answered.
                held.push(stream);
                continue;
            };
            let mut request = Vec::new();
            let mut buf = [0_u8; 1024];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = stream.read(&mut buf).await.unwrap();
                if n == 0 {
                    break;
                }
                request.extend_from_slice(&buf[..n]);
            }
            for part in parts {
                stream.write_all(&part).await.unwrap();
                stream.flush().await.unwrap();
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    });
    url
}

#[tokio::test]
async fn a_server_that_never_answers_fails_with_a_timeout_naming_the_url() {
    let base = server(None).await;
    let start = Instant::now();
    let answer = tokio::time::timeout(
        Duration::from_secs(10),
        get(&base, "/query", Some(Duration::from_secs(1))),
    )
    .await
    .expect("the call ends by its own limit");
    let took = start.elapsed();
    match answer {
        Err(HttpError::Timeout { url, timeout }) => {
            assert_eq!(url, format!("{base}/query"));
            assert_eq!(timeout, Duration::from_secs(1));
        }
        other => panic!("{other:?}"),
    }
    assert!(took < Duration::from_secs(3), "{took:?}");
    let message = get(&base, "/query", Some(Duration::from_millis(200)))
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(message, format!("{base}/query did not answer within 200ms"));
}

#[tokio::test]
async fn a_chunked_body_split_inside_a_character_is_decoded_whole() {
    let body = "{\"rows\": [\"café ☕ 日本\"]}";
    let bytes = body.as_bytes();
    // Cut inside `é` (two bytes) and inside `☕` (three).
    let first = body.find('é').unwrap() + 1;
    let second = body.find('☕').unwrap() + 2;
    let mut chunked = Vec::new();
    for piece in [&bytes[..first], &bytes[first..second], &bytes[second..]] {
        chunked.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        chunked.extend_from_slice(piece);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n".to_vec();
    // Written in pieces too, so that the split also falls between reads.
    let (a, b) = chunked.split_at(first + 4);
    let base = server(Some(vec![head, a.to_vec(), b.to_vec()])).await;
    let (status, text) = get(&base, "/query", Some(Duration::from_secs(5)))
        .await
        .unwrap();
    assert_eq!(status, 200);
    assert_eq!(text, body);
}
