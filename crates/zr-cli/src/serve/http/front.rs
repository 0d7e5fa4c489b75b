//! What stands in front of rmcp's HTTP service: a JSON request body is
//! read here (within the size limit), so that a body rmcp cannot read as
//! JSON-RPC is answered as JSON-RPC says (HTTP 400 with a -32700 parse
//! error, or -32600 for JSON that is not a message) rather than with
//! rmcp's 415 in plain text. Everything else, and the order of rmcp's
//! checks (host and origin first), is rmcp's.

use std::convert::Infallible;

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, Full, LengthLimitError, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode, header};
use rmcp::model::ClientJsonRpcMessage;
use serde_json::Value;

use crate::serve::jsonrpc::{INVALID_REQUEST, PARSE_ERROR, error, request_id};

/// The largest request body read: rmcp's default, 4 MiB.
pub(crate) const MAX_BODY: usize = 4 * 1024 * 1024;

/// A response as rmcp makes them.
pub(crate) type HttpResponse = Response<BoxBody<Bytes, Infallible>>;

/// A request read for rmcp: a JSON POST's body in memory, or the request
/// as it came; or the answer when its body cannot be read.
pub(crate) enum Read {
    /// A JSON POST, its body read, with the answer to give if rmcp says
    /// it cannot read the body.
    Json(Request<Full<Bytes>>, Option<HttpResponse>),
    /// Any other request, untouched.
    Other(Request<Incoming>),
    /// The body was too long or broke off.
    Answered(HttpResponse),
}

/// Reads `request`'s body when it is a JSON POST.
pub(crate) async fn read(request: Request<Incoming>) -> Read {
    if request.method() != Method::POST || !is_json(&request) {
        return Read::Other(request);
    }
    let (parts, body) = request.into_parts();
    let bytes = match Limited::new(body, MAX_BODY).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) if e.is::<LengthLimitError>() => {
            return Read::Answered(text(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("Payload Too Large: request body exceeds {MAX_BODY} bytes"),
            ));
        }
        Err(e) => {
            return Read::Answered(text(
                StatusCode::BAD_REQUEST,
                format!("Bad Request: cannot read the request body: {e}"),
            ));
        }
    };
    let refusal = refusal(&bytes);
    Read::Json(Request::from_parts(parts, Full::new(bytes)), refusal)
}

/// The JSON-RPC error for a body rmcp cannot read, `None` for one it
/// can.
fn refusal(body: &[u8]) -> Option<HttpResponse> {
    let (id, code, message) = match serde_json::from_slice::<Value>(body) {
        Err(e) => (Value::Null, PARSE_ERROR, format!("Parse error: {e}")),
        Ok(value) => match serde_json::from_value::<ClientJsonRpcMessage>(value) {
            Ok(_) => return None,
            Err(e) => (
                request_id(body),
                INVALID_REQUEST,
                format!("Invalid Request: {e}"),
            ),
        },
    };
    Some(
        Response::builder()
            .status(StatusCode::BAD_REQUEST)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(error(id, code, &message))).boxed())
            .expect("a status, a known header and a body make a valid response"),
    )
}

/// rmcp's answer, with its 415 for an unreadable body replaced by the
/// JSON-RPC error.
pub(crate) fn answer(response: HttpResponse, refusal: Option<HttpResponse>) -> HttpResponse {
    match refusal {
        Some(refusal) if response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE => refusal,
        _ => response,
    }
}

fn is_json<B>(request: &Request<B>) -> bool {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            let essence = v.split_once(';').map_or(v, |(essence, _)| essence);
            essence.trim().eq_ignore_ascii_case("application/json")
        })
}

/// A plain-text response, as rmcp's own.
pub(crate) fn text(status: StatusCode, message: String) -> HttpResponse {
    Response::builder()
        .status(status)
        .body(Full::new(Bytes::from(message)).boxed())
        .expect("a status and a body make a valid response")
}
