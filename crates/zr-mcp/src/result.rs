//! MCP call results as zr tool output: every content kind mapped, nothing dropped silently, size bounded.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use zr_types::{ImageSource, ToolOutput, ToolResultContent};

/// Binary data (audio, non-image blobs) up to this many base64 characters is
/// given to the model inline; larger data is described, not included.
pub(crate) const INLINE_BINARY_LIMIT: usize = 8 * 1024;

/// Maps a result. `max_bytes` bounds the sum of the sizes of the blocks
/// (text bytes, base64 characters, compact JSON bytes); what does not fit is
/// cut, with a note saying how much.
pub(crate) fn map_result(result: CallToolResult, max_bytes: usize) -> ToolOutput {
    let mut blocks: Vec<ToolResultContent> = result.content.into_iter().map(map_block).collect();
    if let Some(value) = result.structured_content {
        blocks.push(ToolResultContent::Json { value });
    }
    ToolOutput {
        content: bound(blocks, max_bytes),
        is_error: result.is_error.unwrap_or(false),
        display: None,
    }
}

fn text(text: String) -> ToolResultContent {
    ToolResultContent::Text { text }
}

fn binary_note(kind: &str, mime: &str, data: &str) -> String {
    // Base64 holds 3 bytes in 4 characters.
    let bytes = data.len() / 4 * 3;
    if data.len() <= INLINE_BINARY_LIMIT {
        format!("[{kind}: {mime}, {bytes} bytes, base64 follows]\n{data}")
    } else {
        format!("[{kind}: {mime}, about {bytes} bytes; too large to include]")
    }
}

pub(crate) fn map_block(block: ContentBlock) -> ToolResultContent {
    match block {
        ContentBlock::Text(t) => text(t.text),
        ContentBlock::Image(image) => ToolResultContent::Image {
            source: ImageSource::Base64 {
                media_type: image.mime_type,
                data: image.data,
            },
        },
        ContentBlock::Audio(audio) => text(binary_note("audio", &audio.mime_type, &audio.data)),
        ContentBlock::Resource(embedded) => map_resource(embedded.resource),
        ContentBlock::ResourceLink(link) => {
            let mut note = format!("[resource link: {} {}", link.name, link.uri);
            if let Some(mime) = &link.mime_type {
                note.push_str(&format!(" ({mime})"));
            }
            if let Some(description) = &link.description {
                note.push_str(&format!(" - {description}"));
            }
            note.push(']');
            text(note)
        }
        other => text(format!(
            "[content of an unknown kind: {}]",
            serde_json::to_string(&other).unwrap_or_default()
        )),
    }
}

/// A resource's contents: text with a header naming it, an image, or a
/// note for other binary data.
pub(crate) fn map_resource(resource: ResourceContents) -> ToolResultContent {
    match resource {
        ResourceContents::TextResourceContents {
            uri,
            mime_type,
            text: body,
            ..
        } => text(format!(
            "[resource {uri}{}]\n{body}",
            mime_type.map(|m| format!(" ({m})")).unwrap_or_default()
        )),
        ResourceContents::BlobResourceContents {
            uri,
            mime_type,
            blob,
            ..
        } => {
            let mime = mime_type.unwrap_or_else(|| "application/octet-stream".to_owned());
            if mime.starts_with("image/") {
                ToolResultContent::Image {
                    source: ImageSource::Base64 {
                        media_type: mime,
                        data: blob,
                    },
                }
            } else {
                text(binary_note(&format!("resource {uri}"), &mime, &blob))
            }
        }
        other => text(format!(
            "[resource of an unknown kind: {}]",
            serde_json::to_string(&other).unwrap_or_default()
        )),
    }
}

fn size(block: &ToolResultContent) -> usize {
    match block {
        ToolResultContent::Text { text } => text.len(),
        ToolResultContent::Image {
            source: ImageSource::Base64 { data, .. },
        } => data.len(),
        ToolResultContent::Image {
            source: ImageSource::Url { url },
        } => url.len(),
        ToolResultContent::Json { value } => serde_json::to_string(value).map_or(0, |s| s.len()),
    }
}

/// Keeps blocks while they fit in `max_bytes`; cuts the first text that
/// does not fit at a character boundary, and replaces any other block that
/// does not fit by a one-line description. Appends a note when anything was
/// cut.
pub(crate) fn bound(blocks: Vec<ToolResultContent>, max_bytes: usize) -> Vec<ToolResultContent> {
    let total: usize = blocks.iter().map(size).sum();
    if total <= max_bytes {
        return blocks;
    }
    let mut remaining = max_bytes;
    let mut kept = 0;
    let mut out = Vec::with_capacity(blocks.len() + 1);
    for block in blocks {
        let len = size(&block);
        if len <= remaining {
            remaining -= len;
            kept += len;
            out.push(block);
            continue;
        }
        match block {
            ToolResultContent::Text { mut text } if remaining > 0 => {
                let mut cut = remaining;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                text.truncate(cut);
                kept += cut;
                out.push(ToolResultContent::Text { text });
            }
            ToolResultContent::Text { .. } => {}
            ToolResultContent::Image { .. } => out.push(ToolResultContent::Text {
                text: format!("[image of {len} base64 characters omitted]"),
            }),
            ToolResultContent::Json { .. } => out.push(ToolResultContent::Text {
                text: format!("[structured content of {len} bytes omitted]"),
            }),
        }
        remaining = 0;
    }
    out.push(ToolResultContent::Text {
        text: format!(
            "[result cut: {} of {total} bytes omitted; the limit is {max_bytes} bytes]",
            total.saturating_sub(kept)
        ),
    });
    out
}

#[cfg(test)]
mod tests;
