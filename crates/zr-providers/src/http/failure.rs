//! How one attempt of a request failed, and whether another may help:
//! what decoders, status checks and the retry driver hand each other, and
//! the shortening of what goes into their messages.

use std::time::Duration;

use crate::error::ProviderError;

/// Why an attempt failed, and whether another attempt may help.
#[derive(Debug)]
pub(crate) struct Failure {
    /// The error reported if this is the last attempt.
    pub(crate) error: ProviderError,
    /// `None`: final. `Some(hint)`: worth retrying, after `hint` if the
    /// server named a delay.
    pub(crate) retry: Option<Option<Duration>>,
}

impl Failure {
    /// A failure that ends the request.
    pub(crate) fn fatal(error: ProviderError) -> Self {
        Self { error, retry: None }
    }

    /// A failure worth retrying.
    pub(crate) fn retry(error: ProviderError, hint: Option<Duration>) -> Self {
        Self {
            error,
            retry: Some(hint),
        }
    }
}

/// Shortens `text` to at most `max` bytes (on a character boundary), marking
/// the cut.
pub(crate) fn truncate(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes)", &text[..end], text.len())
}
