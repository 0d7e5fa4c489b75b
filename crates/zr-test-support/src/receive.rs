//! A receiver's side of OTLP/HTTP export requests on one keep-alive
//! connection: each read whole (headers, then `content-length` bytes) and
//! answered `200` with an empty `ExportTraceServiceResponse`. zr-telemetry's
//! bench sink and zr-cli's OTLP receiver serve with it.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;

/// Serves the requests on `stream` until the client closes it, giving
/// each body to `each`.
pub fn serve_requests(stream: TcpStream, mut each: impl FnMut(&[u8])) {
    let mut writer = stream.try_clone().expect("a second handle");
    let mut reader = BufReader::new(stream);
    loop {
        let mut length = None;
        let mut line = String::new();
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse::<u64>().ok();
            }
        }
        let length = length.expect("OTLP/HTTP export requests carry content-length");
        let mut body = Vec::new();
        if (&mut reader).take(length).read_to_end(&mut body).is_err() {
            return;
        }
        each(&body);
        let answer =
            "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
        if writer.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}
