//! `Read`: line-numbered text with offset and limit, images as image
//! content, directory listings, binary files refused, near matches for a
//! missing path.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine as _;
use schemars::JsonSchema;
use serde::Deserialize;
use zr_types::{
    Access, BoxFuture, BuiltinName, ImageSource, ToolContext, ToolError, ToolOutput,
    ToolResultContent,
};

use crate::bound::cut_line;
use crate::ledger::{FileStamp, ReadLedger};
use crate::path::resolve;
use crate::state::{AgentKey, AgentStates};
use crate::toolkit::{Builtin, Hints, blocking};

/// Lines returned when no `limit` is given.
pub(crate) const DEFAULT_LIMIT: usize = 2000;
/// Characters kept of one line.
pub(crate) const MAX_LINE_CHARS: usize = 2000;
/// Bytes of text returned at most by one call.
pub(crate) const MAX_OUTPUT_BYTES: usize = 256 * 1024;
/// Largest image returned.
pub(crate) const MAX_IMAGE_BYTES: u64 = 5 * 1024 * 1024;
/// Entries listed of a directory.
const MAX_DIR_ENTRIES: usize = 1000;

/// Input of `Read`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadInput {
    /// The file (or directory) to read; relative paths are resolved against the working directory.
    file_path: String,
    /// The line number to start from (1 = first line).
    #[schemars(range(min = 1))]
    offset: Option<usize>,
    /// How many lines to read (default 2000).
    #[schemars(range(min = 1))]
    limit: Option<usize>,
}

/// The `Read` tool.
#[derive(Debug)]
pub(crate) struct ReadTool {
    states: Arc<AgentStates<ReadLedger>>,
}

impl ReadTool {
    pub(crate) fn new(states: Arc<AgentStates<ReadLedger>>) -> Self {
        Self { states }
    }
}

enum Outcome {
    Output(ToolOutput),
    /// Read a file: record it in the ledger.
    Seen(ToolOutput, PathBuf, FileStamp),
}

impl Builtin for ReadTool {
    type Input = ReadInput;
    const NAME: BuiltinName = BuiltinName::Read;
    const HINTS: Hints = Hints::LOCAL;

    fn details(&self) -> String {
        format!(
            "Text comes back like `cat -n`: a right-aligned line number, a tab, the line. `offset` is the first line (1-based), `limit` the number of lines (default {DEFAULT_LIMIT}); lines longer than {MAX_LINE_CHARS} characters are cut, and one call returns at most {} KiB. PNG, JPEG, GIF and WebP images (up to {} MiB) come back as images; other binary files are refused; a directory is listed. Relative paths are resolved against the working directory; absolute paths are read as given. Reading a file is required before overwriting it with Write or changing it with Edit.",
            MAX_OUTPUT_BYTES / 1024,
            MAX_IMAGE_BYTES / (1024 * 1024)
        )
    }

    fn access(input: &Self::Input, cwd: &Path) -> Vec<Access> {
        vec![Access::Read(resolve(cwd, &input.file_path))]
    }

    fn run<'a>(
        &'a self,
        input: ReadInput,
        ctx: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            if input.file_path.is_empty() {
                return Ok(ToolOutput::error("Read: `file_path` is empty."));
            }
            if input.offset == Some(0) {
                return Ok(ToolOutput::error(
                    "Read: `offset` is a 1-based line number; use 1 for the first line.",
                ));
            }
            if input.limit == Some(0) {
                return Ok(ToolOutput::error("Read: `limit` must be at least 1."));
            }
            let path = resolve(&ctx.cwd, &input.file_path);
            let cwd = ctx.cwd.clone();
            let outcome =
                blocking(Self::NAME.as_str(), move || read_path(&path, &cwd, &input)).await?;
            Ok(match outcome {
                Outcome::Output(out) => out,
                Outcome::Seen(out, path, stamp) => {
                    self.states.record_read(&AgentKey::of(&ctx), &path, stamp);
                    out
                }
            })
        })
    }
}

fn read_path(path: &Path, cwd: &Path, input: &ReadInput) -> Outcome {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Outcome::Output(ToolOutput::error(missing(path, cwd)));
        }
        Err(e) => {
            return Outcome::Output(ToolOutput::error(format!(
                "Read: cannot read {}: {e}",
                path.display()
            )));
        }
    };
    if meta.is_dir() {
        return Outcome::Output(list_dir(path));
    }
    if !meta.is_file() {
        return Outcome::Output(ToolOutput::error(format!(
            "Read: {} is not a regular file (a device, socket or pipe); Read reads files and directories.",
            path.display()
        )));
    }
    let stamp = FileStamp::of(&meta);
    if let Some(media_type) = image_type(path) {
        return match read_image(path, meta.len(), media_type) {
            Ok(out) => Outcome::Seen(out, path.to_path_buf(), stamp),
            Err(msg) => Outcome::Output(ToolOutput::error(msg)),
        };
    }
    match read_text(path, meta.len(), input) {
        Ok(out) => Outcome::Seen(out, path.to_path_buf(), stamp),
        Err(msg) => Outcome::Output(ToolOutput::error(msg)),
    }
}

fn image_type(path: &Path) -> Option<&'static str> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "png" => Some("image/png"),
        "jpg" | "jpeg" => Some("image/jpeg"),
        "gif" => Some("image/gif"),
        "webp" => Some("image/webp"),
        _ => None,
    }
}

fn read_image(path: &Path, len: u64, media_type: &str) -> Result<ToolOutput, String> {
    if len > MAX_IMAGE_BYTES {
        return Err(format!(
            "Read: the image {} is {len} bytes; images of at most {MAX_IMAGE_BYTES} bytes are returned.",
            path.display()
        ));
    }
    let bytes =
        std::fs::read(path).map_err(|e| format!("Read: cannot read {}: {e}", path.display()))?;
    if !magic_matches(&bytes, media_type) {
        return Err(format!(
            "Read: {} is named like a {media_type} image but its bytes are not one; it was not sent as an image.",
            path.display()
        ));
    }
    let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
    Ok(ToolOutput {
        content: vec![ToolResultContent::Image {
            source: ImageSource::Base64 {
                media_type: media_type.to_owned(),
                data,
            },
        }],
        is_error: false,
        display: Some(format!("image {} ({len} bytes)", path.display())),
    })
}

/// Whether `bytes` start with the signature of `media_type`.
fn magic_matches(bytes: &[u8], media_type: &str) -> bool {
    match media_type {
        "image/png" => bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "image/jpeg" => bytes.starts_with(&[0xff, 0xd8, 0xff]),
        "image/gif" => bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a"),
        "image/webp" => bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP",
        _ => false,
    }
}

/// Whether the first bytes look binary: a NUL byte, or many control bytes.
pub(crate) fn looks_binary(head: &[u8]) -> bool {
    if head.contains(&0) {
        return true;
    }
    let controls = head
        .iter()
        .filter(|&&b| b < 0x09 || (0x0e..0x20).contains(&b) && b != 0x1b)
        .count();
    !head.is_empty() && controls * 10 > head.len()
}

fn read_text(path: &Path, len: u64, input: &ReadInput) -> Result<ToolOutput, String> {
    let cannot = |e: std::io::Error| format!("Read: cannot read {}: {e}", path.display());
    let file = std::fs::File::open(path).map_err(cannot)?;
    let mut reader = BufReader::new(file);
    let mut head = Vec::with_capacity(8192);
    (&mut reader)
        .take(8192)
        .read_to_end(&mut head)
        .map_err(cannot)?;
    if looks_binary(&head) {
        return Err(format!(
            "Read: {} is a binary file ({len} bytes); Read shows text files and PNG, JPEG, GIF or WebP images. Use Bash (e.g. `file`, `xxd | head`) to inspect it.",
            path.display()
        ));
    }
    if len == 0 {
        return Ok(ToolOutput::text(format!(
            "(the file {} exists and is empty)",
            path.display()
        )));
    }
    let mut reader = std::io::Cursor::new(head).chain(reader);
    let offset = input.offset.unwrap_or(1);
    let limit = input.limit.unwrap_or(DEFAULT_LIMIT);
    let mut text = String::new();
    let mut line_no = 0_usize;
    let mut raw = Vec::new();
    let mut shown = 0_usize;
    let mut cut_for_size = false;
    loop {
        raw.clear();
        let n = read_line_capped(&mut reader, &mut raw, MAX_LINE_BYTES).map_err(cannot)?;
        if n == 0 {
            break;
        }
        line_no += 1;
        if line_no < offset {
            continue;
        }
        if shown == limit {
            // Count the remaining lines cheaply to tell the model what is left.
            line_no += count_lines(&mut reader);
            line_no -= 1;
            break;
        }
        if text.len() > MAX_OUTPUT_BYTES {
            cut_for_size = true;
            line_no += count_lines(&mut reader);
            line_no -= 1;
            break;
        }
        let line = String::from_utf8_lossy(&raw);
        let line = line.trim_end_matches(['\n', '\r']);
        let shown_line = if n > raw.len() {
            let head: String = line.chars().take(MAX_LINE_CHARS).collect();
            format!("{head}... [line cut: it is {n} bytes long]")
        } else {
            cut_line(line, MAX_LINE_CHARS)
        };
        let _ = writeln!(text, "{line_no:>6}\t{shown_line}");
        shown += 1;
    }
    let total = line_no;
    if offset > total {
        return Err(format!(
            "Read: `offset` {offset} is past the end of {}, which has {total} lines.",
            path.display()
        ));
    }
    let last = offset + shown - 1;
    if last < total {
        let why = if cut_for_size {
            format!("the output reached {} KiB", MAX_OUTPUT_BYTES / 1024)
        } else {
            format!("`limit` is {limit}")
        };
        let _ = write!(
            text,
            "[showing lines {offset}-{last} of {total} because {why}; call Read with offset {} to continue]",
            last + 1
        );
    }
    Ok(ToolOutput::text(text))
}

/// Bytes of one line kept in memory; the rest of a longer line is skipped
/// (a 1 GiB single-line file must not be loaded whole).
const MAX_LINE_BYTES: usize = MAX_LINE_CHARS * 4 + 4;

/// Reads one line (with its `\n`) into `raw`, keeping at most `cap` bytes
/// of it; returns the bytes consumed (0 at the end).
pub(crate) fn read_line_capped(
    reader: &mut impl BufRead,
    raw: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<usize> {
    let mut consumed = 0;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(consumed);
        }
        let (take, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        let room = cap.saturating_sub(raw.len());
        raw.extend_from_slice(&buf[..take.min(room)]);
        reader.consume(take);
        consumed += take;
        if done {
            return Ok(consumed);
        }
    }
}

/// 1 + the number of lines left in `reader`.
fn count_lines(reader: &mut impl BufRead) -> usize {
    let mut count = 1;
    let mut last = b'\n';
    while let Ok(buf) = reader.fill_buf() {
        let Some(&end) = buf.last() else {
            break;
        };
        last = end;
        let len = buf.len();
        count += buf.iter().filter(|&&b| b == b'\n').count();
        reader.consume(len);
    }
    if last != b'\n' {
        count += 1;
    }
    count
}

fn list_dir(path: &Path) -> ToolOutput {
    let entries = match std::fs::read_dir(path) {
        Ok(e) => e,
        Err(e) => {
            return ToolOutput::error(format!("Read: cannot list {}: {e}", path.display()));
        }
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| {
            let mut name = e.file_name().to_string_lossy().into_owned();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                name.push('/');
            }
            name
        })
        .collect();
    names.sort();
    let total = names.len();
    let mut text = format!("{} is a directory with {total} entries:\n", path.display());
    for name in names.iter().take(MAX_DIR_ENTRIES) {
        text.push_str(name);
        text.push('\n');
    }
    if total > MAX_DIR_ENTRIES {
        let _ = write!(
            text,
            "[{} more entries not shown; use Glob to find specific files]",
            total - MAX_DIR_ENTRIES
        );
    }
    ToolOutput::text(text)
}

/// The error for a missing path, with near matches from its folder.
fn missing(path: &Path, cwd: &Path) -> String {
    let mut msg = format!("Read: {} does not exist.", path.display());
    let parent = path.parent().unwrap_or(Path::new("/"));
    let wanted = path
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    match std::fs::read_dir(parent) {
        Ok(entries) => {
            let mut near: Vec<(usize, String)> = entries
                .filter_map(Result::ok)
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    near_score(&wanted, &name.to_lowercase()).map(|s| (s, name))
                })
                .collect();
            near.sort();
            if !near.is_empty() {
                msg.push_str(" Did you mean:");
                for (_, name) in near.iter().take(5) {
                    let _ = write!(msg, "\n  {}", parent.join(name).display());
                }
            }
        }
        Err(_) => {
            let _ = write!(
                msg,
                " Its folder {} does not exist either.",
                parent.display()
            );
        }
    }
    let _ = write!(msg, "\n(The working directory is {}.)", cwd.display());
    msg
}

/// A distance for names close to `wanted` (same stem, small edit distance,
/// one containing the other), `None` for unrelated names.
fn near_score(wanted: &str, name: &str) -> Option<usize> {
    let stem = |s: &str| s.split('.').next().unwrap_or(s).to_owned();
    let d = zr_types::edit_distance(wanted, name);
    let budget = (wanted.chars().count() / 3).max(2);
    if d <= budget {
        Some(d)
    } else if !stem(wanted).is_empty() && stem(wanted) == stem(name) {
        Some(budget + 1)
    } else if wanted.len() >= 3 && name.contains(wanted) {
        Some(budget + 2)
    } else {
        None
    }
}

#[cfg(test)]
mod tests;
