//! Output bounding: keep the head and the tail of long output and say how
//! much was cut.

use std::collections::VecDeque;

/// Collects a byte stream keeping the first `head_cap` and the last
/// `tail_cap` bytes.
#[derive(Debug)]
pub(crate) struct HeadTail {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    head_cap: usize,
    tail_cap: usize,
    total: u64,
}

impl HeadTail {
    pub(crate) fn new(head_cap: usize, tail_cap: usize) -> Self {
        Self {
            head: Vec::new(),
            tail: VecDeque::new(),
            head_cap,
            tail_cap,
            total: 0,
        }
    }

    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = self.head_cap.saturating_sub(self.head.len());
        let take = room.min(bytes.len());
        self.head.extend_from_slice(&bytes[..take]);
        bytes = &bytes[take..];
        if bytes.len() >= self.tail_cap {
            self.tail.clear();
            self.tail
                .extend(bytes[bytes.len() - self.tail_cap..].iter().copied());
        } else {
            let overflow = (self.tail.len() + bytes.len()).saturating_sub(self.tail_cap);
            self.tail.drain(..overflow);
            self.tail.extend(bytes.iter().copied());
        }
    }

    /// Bytes seen in total.
    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    /// The kept text (lossy UTF-8), with a line saying how many bytes were
    /// cut from the middle when some were.
    pub(crate) fn render(&self) -> String {
        let kept = (self.head.len() + self.tail.len()) as u64;
        let head = String::from_utf8_lossy(&self.head);
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let tail = String::from_utf8_lossy(&tail);
        if kept < self.total {
            let cut = self.total - kept;
            format!(
                "{head}\n[... {cut} bytes cut from the middle; {} bytes in total ...]\n{tail}",
                self.total
            )
        } else {
            format!("{head}{tail}")
        }
    }
}

/// Cuts `text` to at most `max` bytes (at a char boundary), saying how much
/// was cut and what to do about it.
pub(crate) fn cut_text(text: &str, max: usize, advice: &str) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n[... output cut: {} of {} bytes shown. {advice}]",
        &text[..end],
        end,
        text.len()
    )
}

/// The first `max` chars of a line, with a marker when it was longer.
pub(crate) fn cut_line(line: &str, max_chars: usize) -> String {
    match line.char_indices().nth(max_chars) {
        None => line.to_owned(),
        Some((idx, _)) => {
            let rest = line[idx..].chars().count();
            format!("{}... [line cut: {rest} more chars]", &line[..idx])
        }
    }
}

#[cfg(test)]
mod tests;
