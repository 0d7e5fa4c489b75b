//! JSON-RPC as `zr mcp serve` answers what rmcp does not read: the error
//! codes, an error response, and the id of a message that cannot be read
//! whole (too long, or not JSON-RPC).

use serde_json::{Value, json};

/// "Parse error": the text is not JSON.
pub(crate) const PARSE_ERROR: i64 = -32700;

/// "Invalid Request": JSON, but not a request this server can read.
pub(crate) const INVALID_REQUEST: i64 = -32600;

/// An error response for `id` (`Value::Null` when it is unknown, as
/// JSON-RPC 2.0 asks), as one line of JSON without its newline.
pub(crate) fn error(id: Value, code: i64, message: &str) -> String {
    // Members in the order the specification writes them.
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{}}}",
        json!({ "code": code, "message": message })
    )
}

/// The `id` of the JSON object that `start` begins, when it is among the
/// top-level members `start` holds whole and is a number or a string;
/// `Value::Null` otherwise.
pub(crate) fn request_id(start: &[u8]) -> Value {
    top_level_id(start).unwrap_or(Value::Null)
}

fn top_level_id(text: &[u8]) -> Option<Value> {
    let mut at = skip_space(text, 0);
    if text.get(at) != Some(&b'{') {
        return None;
    }
    at += 1;
    loop {
        at = skip_space(text, at);
        let (key, next) = one::<String>(text, at)?;
        at = skip_space(text, next);
        if text.get(at) != Some(&b':') {
            return None;
        }
        at = skip_space(text, at + 1);
        if key == "id" {
            let (id, _) = one::<Value>(text, at)?;
            return matches!(id, Value::Number(_) | Value::String(_)).then_some(id);
        }
        let (_, next) = one::<serde::de::IgnoredAny>(text, at)?;
        at = skip_space(text, next);
        if text.get(at) != Some(&b',') {
            return None;
        }
        at += 1;
    }
}

/// The JSON value at `at` in `text` and the offset after it.
fn one<T: serde::de::DeserializeOwned>(text: &[u8], at: usize) -> Option<(T, usize)> {
    let mut values = serde_json::Deserializer::from_slice(text.get(at..)?).into_iter::<T>();
    let value = values.next()?.ok()?;
    Some((value, at + values.byte_offset()))
}

fn skip_space(text: &[u8], mut at: usize) -> usize {
    while text.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests;
