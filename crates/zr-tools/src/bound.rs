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
    /// cut from the middle when some were. A character split by the cut is
    /// dropped whole (its bytes count as cut), never shown as `\u{FFFD}`.
    pub(crate) fn render(&self) -> String {
        let kept = (self.head.len() + self.tail.len()) as u64;
        let mut tail: Vec<u8> = self.tail.iter().copied().collect();
        if kept >= self.total {
            // Nothing was cut: head and tail are one stream, and a
            // character may straddle them.
            let mut all = self.head.clone();
            all.append(&mut tail);
            return String::from_utf8_lossy(&all).into_owned();
        }
        let head = &self.head[..utf8_prefix_end(&self.head)];
        let tail = &tail[utf8_suffix_start(&tail)..];
        let cut = self.total - (head.len() + tail.len()) as u64;
        format!(
            "{}\n[... {cut} bytes cut from the middle; {} bytes in total ...]\n{}",
            String::from_utf8_lossy(head),
            self.total,
            String::from_utf8_lossy(tail)
        )
    }
}

/// The end of `bytes` without a UTF-8 sequence cut short at its end.
fn utf8_prefix_end(bytes: &[u8]) -> usize {
    // A sequence is at most 4 bytes: look at the last 3 for its lead byte.
    for back in 1..=bytes.len().min(3) {
        let i = bytes.len() - back;
        let b = bytes[i];
        if b & 0xC0 == 0x80 {
            continue; // a continuation byte: keep looking for the lead
        }
        let need = match b {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1,
        };
        return if back < need { i } else { bytes.len() };
    }
    bytes.len()
}

/// Where `bytes` starts once continuation bytes of a sequence whose lead
/// was cut off are skipped (at most 3).
fn utf8_suffix_start(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .take(3)
        .take_while(|&&b| b & 0xC0 == 0x80)
        .count()
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
