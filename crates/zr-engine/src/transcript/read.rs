//! Reading a transcript back: records up to a torn last line, then the
//! history repaired so that a provider accepts it.

use std::collections::BTreeSet;
use std::path::Path;

use zr_protocol::transcript::{Finished, Header, Record, VERSION};
use zr_types::{ContentBlock, Message, MessageRole};

use crate::error::TranscriptError;

/// A transcript, read back.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Loaded {
    pub(crate) header: Header,
    /// The history, repaired; when the last run was cut short in the
    /// middle of a turn, it ends with that turn as it is on disk: the
    /// answer with its calls, and the results recorded so far (see
    /// [`interrupted_turn`]).
    pub(crate) history: Vec<Message>,
    /// The calls recorded as started (`call_started`).
    pub(crate) started: BTreeSet<String>,
    /// How the last run ended; `None` when it was cut short (no `finished`
    /// record after its last message).
    pub(crate) finished: Option<Finished>,
    /// Complete records read, the header included.
    pub(crate) records: usize,
    /// Bytes up to the end of the last complete record (where appending
    /// continues; a torn tail is cut there).
    pub(crate) valid_len: u64,
    /// Whether a torn or invalid last line was ignored.
    pub(crate) torn: bool,
    /// What the repair dropped or merged.
    pub(crate) repairs: Repairs,
}

/// What [`repair`] changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Repairs {
    /// Tool uses without a result in the next message.
    pub(crate) calls: usize,
    /// Tool results without their use in the message before.
    pub(crate) results: usize,
    /// Empty messages and empty text blocks.
    pub(crate) empty: usize,
    /// Messages merged into the one before (same role).
    pub(crate) merged: usize,
}

impl Repairs {
    /// Whether the history differs from what the records say.
    pub(crate) fn any(self) -> bool {
        self.calls + self.results + self.empty > 0
    }
}

/// The largest transcript read (a FIFO or a device in its place is
/// refused at once: `zr_tools::read_regular`).
pub(crate) const LIMIT: u64 = 1024 * 1024 * 1024;

/// Reads the transcript at `path`.
pub(crate) fn read(path: &Path) -> Result<Loaded, TranscriptError> {
    let bytes = zr_tools::read_regular(path, LIMIT).map_err(|source| TranscriptError::Io {
        path: path.to_owned(),
        source,
    })?;
    parse(path, &bytes)
}

/// Reads a transcript's bytes; `path` is for errors only.
pub(crate) fn parse(path: &Path, bytes: &[u8]) -> Result<Loaded, TranscriptError> {
    let mut header: Option<Header> = None;
    let mut history = Vec::new();
    let mut finished = None;
    let mut started = BTreeSet::new();
    let mut records = 0;
    let mut valid_len = 0;
    let mut torn = false;
    let mut offset = 0;
    let mut line = 0;
    while offset < bytes.len() {
        line += 1;
        let rest = bytes.get(offset..).unwrap_or_default();
        let (text, next, complete) = match rest.iter().position(|&b| b == b'\n') {
            Some(end) => (rest.get(..end).unwrap_or_default(), offset + end + 1, true),
            None => (rest, bytes.len(), false),
        };
        let blank = text.iter().all(u8::is_ascii_whitespace);
        // Only what follows a line decides whether it is the last one.
        let last = bytes
            .get(next..)
            .unwrap_or_default()
            .iter()
            .all(u8::is_ascii_whitespace);
        if blank && complete {
            offset = next;
            valid_len = next;
            continue;
        }
        if !complete {
            // A write cut short: the record and its newline go out in one
            // write, so a line without its newline is torn.
            torn = true;
            break;
        }
        let record: Record = match serde_json::from_slice(text) {
            Ok(record) => record,
            Err(_) if last => {
                torn = true;
                break;
            }
            Err(source) => {
                return Err(TranscriptError::InvalidLine {
                    path: path.to_owned(),
                    line,
                    source,
                });
            }
        };
        match (record, header.is_some()) {
            (Record::Header(h), false) => {
                if h.version > VERSION {
                    return Err(TranscriptError::UnsupportedVersion {
                        path: path.to_owned(),
                        version: h.version,
                        supported: VERSION,
                    });
                }
                header = Some(h);
            }
            (Record::Header(_), true) => {
                return Err(TranscriptError::SecondHeader {
                    path: path.to_owned(),
                    line,
                });
            }
            (_, false) => {
                return Err(TranscriptError::MissingHeader {
                    path: path.to_owned(),
                });
            }
            (Record::Message { message, .. }, true) => {
                history.push(message);
                finished = None;
            }
            (Record::HistoryReplaced { history: new }, true) => {
                history = new;
                finished = None;
            }
            (Record::Finished(f), true) => finished = Some(f),
            (Record::CallStarted { id }, true) => {
                started.insert(id);
                finished = None;
            }
            // The run ended (its `finished` record is before this one).
            (Record::QueryFailed { history: kept }, true) => history = kept,
        }
        records += 1;
        offset = next;
        valid_len = next;
    }
    let header = header.ok_or_else(|| TranscriptError::MissingHeader {
        path: path.to_owned(),
    })?;
    let tail = if finished.is_none() {
        interrupted_turn(&mut history)
    } else {
        Vec::new()
    };
    let repairs = repair(&mut history);
    history.extend(tail);
    Ok(Loaded {
        header,
        history,
        started,
        finished,
        records,
        valid_len: u64::try_from(valid_len).unwrap_or(u64::MAX),
        torn,
        repairs,
    })
}

/// Takes off the end of `history` the turn a kill cut short, so that the
/// repair leaves it whole: the model's last answer when some of its tool
/// calls have no result yet, and the results recorded after it (merged
/// into one message). Empty when the last turn is complete (or the history
/// ends otherwise); the answer's empty text blocks are dropped.
fn interrupted_turn(history: &mut Vec<Message>) -> Vec<Message> {
    let Some(end) = history
        .iter()
        .rposition(|m| m.role == MessageRole::Assistant)
    else {
        return Vec::new();
    };
    let start = history
        .get(..end)
        .unwrap_or_default()
        .iter()
        .rposition(|m| m.role != MessageRole::Assistant)
        .map_or(0, |p| p + 1);
    let answer = Message {
        role: MessageRole::Assistant,
        content: history
            .get(start..=end)
            .unwrap_or_default()
            .iter()
            .flat_map(|m| m.content.iter().cloned())
            .filter(|b| !matches!(b, ContentBlock::Text { text } if text.is_empty()))
            .collect(),
    };
    let results = Message {
        role: MessageRole::User,
        content: history
            .get(end + 1..)
            .unwrap_or_default()
            .iter()
            .flat_map(|m| m.content.iter().cloned())
            .collect(),
    };
    let uses = uses_of(&answer);
    let answered = results_of(&results);
    let only_its_results = results.content.iter().all(
        |b| matches!(b, ContentBlock::ToolResult { tool_use_id, .. } if uses.contains(tool_use_id)),
    );
    if uses.is_empty() || uses.is_subset(&answered) || !only_its_results {
        return Vec::new();
    }
    history.truncate(start);
    let mut tail = vec![answer];
    if !results.content.is_empty() {
        tail.push(results);
    }
    tail
}

/// Makes `history` what providers accept: no empty text block, no empty
/// message, roles alternating (a message is merged into the one before it
/// when both have the same role), every tool use answered in the next
/// message and every tool result answering a use in the message before
/// (unmatched ones are dropped). Nothing else is touched.
pub(crate) fn repair(history: &mut Vec<Message>) -> Repairs {
    let mut repairs = Repairs::default();
    // Each round drops or merges something, or is the last.
    loop {
        let before = repairs;
        drop_empty(history, &mut repairs);
        merge_roles(history, &mut repairs);
        drop_unmatched(history, &mut repairs);
        if repairs == before {
            return repairs;
        }
    }
}

fn drop_empty(history: &mut Vec<Message>, repairs: &mut Repairs) {
    for message in history.iter_mut() {
        let n = message.content.len();
        message
            .content
            .retain(|b| !matches!(b, ContentBlock::Text { text } if text.is_empty()));
        repairs.empty += n - message.content.len();
    }
    let n = history.len();
    history.retain(|m| !m.content.is_empty());
    repairs.empty += n - history.len();
}

fn merge_roles(history: &mut Vec<Message>, repairs: &mut Repairs) {
    let mut merged: Vec<Message> = Vec::with_capacity(history.len());
    for message in history.drain(..) {
        match merged.last_mut() {
            Some(last) if last.role == message.role => {
                last.content.extend(message.content);
                repairs.merged += 1;
            }
            _ => merged.push(message),
        }
    }
    *history = merged;
}

pub(super) fn uses_of(message: &Message) -> BTreeSet<String> {
    message
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolUse { id, .. } if message.role == MessageRole::Assistant => {
                Some(id.clone())
            }
            _ => None,
        })
        .collect()
}

pub(crate) fn results_of(message: &Message) -> BTreeSet<String> {
    message
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolResult { tool_use_id, .. } if message.role == MessageRole::User => {
                Some(tool_use_id.clone())
            }
            _ => None,
        })
        .collect()
}

fn drop_unmatched(history: &mut [Message], repairs: &mut Repairs) {
    let empty = BTreeSet::new();
    let asked: Vec<BTreeSet<String>> = history.iter().map(uses_of).collect();
    let answered: Vec<BTreeSet<String>> = history.iter().map(results_of).collect();
    for (i, message) in history.iter_mut().enumerate() {
        let next = answered.get(i + 1).unwrap_or(&empty);
        let previous = i
            .checked_sub(1)
            .and_then(|p| asked.get(p))
            .unwrap_or(&empty);
        let n = message.content.len();
        let role = message.role;
        message.content.retain(|b| match b {
            ContentBlock::ToolUse { id, .. } => role == MessageRole::Assistant && next.contains(id),
            ContentBlock::ToolResult { tool_use_id, .. } => {
                role == MessageRole::User && previous.contains(tool_use_id)
            }
            _ => true,
        });
        let dropped = n - message.content.len();
        if role == MessageRole::Assistant {
            repairs.calls += dropped;
        } else {
            repairs.results += dropped;
        }
    }
}

/// Reads only the header of the transcript at `path`.
pub(crate) fn read_header(path: &Path) -> Result<Header, TranscriptError> {
    use std::io::BufRead as _;
    let io = |source| TranscriptError::Io {
        path: path.to_owned(),
        source,
    };
    let file = zr_tools::open_regular(path).map_err(io)?;
    let mut line = Vec::new();
    std::io::BufReader::new(file)
        .read_until(b'\n', &mut line)
        .map_err(io)?;
    let missing = || TranscriptError::MissingHeader {
        path: path.to_owned(),
    };
    if line.last() != Some(&b'\n') {
        return Err(missing());
    }
    match serde_json::from_slice(&line) {
        Ok(Record::Header(header)) => Ok(header),
        Ok(_) => Err(missing()),
        Err(source) => Err(TranscriptError::InvalidLine {
            path: path.to_owned(),
            line: 1,
            source,
        }),
    }
}
