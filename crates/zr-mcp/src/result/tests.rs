//! Tests of MCP call results to zr content: every content kind, isError, bounding.
use serde_json::json;

use super::*;

fn result(value: serde_json::Value) -> CallToolResult {
    serde_json::from_value(value).unwrap()
}

fn t(s: &str) -> ToolResultContent {
    ToolResultContent::Text { text: s.to_owned() }
}

#[test]
fn every_content_kind_is_mapped() {
    let out = map_result(
        result(json!({
            "content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "data": "iVBORw0K", "mimeType": "image/png"},
                {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
                {"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "body"}},
                {"type": "resource", "resource": {"uri": "file:///b.png", "mimeType": "image/png", "blob": "AAAA"}},
                {"type": "resource", "resource": {"uri": "file:///c.bin", "blob": "AAAA"}},
                {"type": "resource_link", "uri": "file:///d.md", "name": "d", "mimeType": "text/markdown", "description": "notes"}
            ],
            "structuredContent": {"sum": 3}
        })),
        1 << 20,
    );
    assert!(!out.is_error);
    assert_eq!(
        out.content,
        [
            t("hello"),
            ToolResultContent::Image {
                source: ImageSource::Base64 {
                    media_type: "image/png".into(),
                    data: "iVBORw0K".into()
                }
            },
            t("[audio: audio/wav, 6 bytes, base64 follows]\nUklGRg=="),
            t("[resource file:///a.txt (text/plain)]\nbody"),
            ToolResultContent::Image {
                source: ImageSource::Base64 {
                    media_type: "image/png".into(),
                    data: "AAAA".into()
                }
            },
            t("[resource file:///c.bin: application/octet-stream, 3 bytes, base64 follows]\nAAAA"),
            t("[resource link: d file:///d.md (text/markdown) - notes]"),
            ToolResultContent::Json {
                value: json!({"sum": 3})
            },
        ]
    );
}

#[test]
fn is_error_becomes_an_error_result() {
    let out = map_result(
        result(json!({"content": [{"type": "text", "text": "bad"}], "isError": true})),
        100,
    );
    assert!(out.is_error);
    assert_eq!(out.content, [t("bad")]);
}

#[test]
fn large_audio_is_described_not_included() {
    let data = "A".repeat(INLINE_BINARY_LIMIT + 4);
    let out = map_result(
        result(json!({"content": [{"type": "audio", "data": data, "mimeType": "audio/wav"}]})),
        1 << 20,
    );
    let [ToolResultContent::Text { text }] = out.content.as_slice() else {
        panic!("{:?}", out.content);
    };
    assert!(
        text.starts_with("[audio: audio/wav, about 6147 bytes; too large"),
        "{text}"
    );
}

#[test]
fn output_over_the_limit_is_cut_with_a_note() {
    let big = "é".repeat(100); // 200 bytes
    let out = map_result(
        result(
            json!({"content": [{"type": "text", "text": "0123456789"}, {"type": "text", "text": big},
                                  {"type": "image", "data": "AAAA", "mimeType": "image/png"}],
                      "structuredContent": {"k": 1}}),
        ),
        51,
    );
    let texts: Vec<&ToolResultContent> = out.content.iter().collect();
    assert_eq!(texts[0], &t("0123456789"));
    // 41 bytes left: cut at a character boundary (20 two-byte characters).
    assert_eq!(texts[1], &t(&"é".repeat(20)));
    assert_eq!(texts[2], &t("[image of 4 base64 characters omitted]"));
    assert_eq!(texts[3], &t("[structured content of 7 bytes omitted]"));
    assert_eq!(
        texts[4],
        &t("[result cut: 171 of 221 bytes omitted; the limit is 51 bytes]")
    );
    assert_eq!(texts.len(), 5);
}

#[test]
fn output_within_the_limit_is_unchanged() {
    let out = map_result(
        result(json!({"content": [{"type": "text", "text": "abc"}]})),
        3,
    );
    assert_eq!(out.content, [t("abc")]);
}

fn any_block() -> impl proptest::strategy::Strategy<Value = ToolResultContent> {
    use proptest::prelude::*;
    prop_oneof![
        // Any characters, multibyte ones included.
        "\\PC{0,12}".prop_map(|text| ToolResultContent::Text { text }),
        "[é日🦀a]{0,8}".prop_map(|text| ToolResultContent::Text { text }),
        "[A-Za-z0-9+/]{0,12}".prop_map(|data| ToolResultContent::Image {
            source: ImageSource::Base64 {
                media_type: "image/png".into(),
                data,
            },
        }),
        (0u32..100_000).prop_map(|n| ToolResultContent::Json {
            value: json!({ "n": n })
        }),
    ]
}

proptest::proptest! {
    #[test]
    fn prop_bound_never_panics_keeps_prefixes_and_accounts_for_every_byte(
        blocks in proptest::collection::vec(any_block(), 0..6),
        max in 0usize..60,
    ) {
        let total: usize = blocks.iter().map(size).sum();
        let out = bound(blocks.clone(), max);
        if total <= max {
            proptest::prop_assert_eq!(out, blocks);
            return Ok(());
        }
        let Some((ToolResultContent::Text { text: note }, kept)) = out.split_last() else {
            panic!("no note: {out:?}");
        };
        let originals: Vec<&str> = blocks
            .iter()
            .filter_map(|b| match b {
                ToolResultContent::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        let mut kept_bytes = 0;
        for block in kept {
            match block {
                ToolResultContent::Text { text }
                    if text.starts_with("[image of ") || text.starts_with("[structured content of ") => {}
                ToolResultContent::Text { text } => {
                    proptest::prop_assert!(
                        originals.iter().any(|o| o.starts_with(text.as_str())),
                        "{:?} is no prefix of an original text", text
                    );
                    kept_bytes += text.len();
                }
                other => {
                    proptest::prop_assert!(blocks.contains(other));
                    kept_bytes += size(other);
                }
            }
        }
        proptest::prop_assert!(kept_bytes <= max);
        let expected = format!(
            "[result cut: {} of {total} bytes omitted; the limit is {max} bytes]",
            total - kept_bytes
        );
        proptest::prop_assert_eq!(note, &expected);
    }
}
