//! The capture helper: which bodies it writes, and where.

use zr_test_support::capture::{Capture, Wire};

#[test]
fn model_bodies_are_written_by_wire_and_test_and_others_are_not() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let capture = Capture::into_dir(Some(dir.path().to_owned()), "openai::a_test");
    let anthropic = capture
        .record("/v1/messages", br#"{"model":"m"}"#)
        .expect("a Messages body is captured");
    let chat = capture
        .record("/v1/chat/completions?x=1", b"{}")
        .expect("a Chat Completions body is captured");
    let responses = capture
        .record("/v1/responses", b"[]")
        .expect("a Responses body is captured");
    assert_eq!(capture.record("/mcp", b"{}"), None, "not a model API");

    for (file, folder, bytes) in [
        (&anthropic, "anthropic", &br#"{"model":"m"}"#[..]),
        (&chat, "openai-chat", b"{}"),
        (&responses, "openai-responses", b"[]"),
    ] {
        assert_eq!(file.parent(), Some(dir.path().join(folder).as_path()));
        let name = file
            .file_name()
            .and_then(|name| name.to_str())
            .expect("a name");
        assert!(
            name.starts_with("zr-providers--openai.a_test--") && name.ends_with(".json"),
            "{name}"
        );
        assert_eq!(
            std::fs::read(file).expect("written"),
            bytes,
            "byte for byte"
        );
    }
    assert_ne!(anthropic.file_name(), chat.file_name(), "numbered apart");
    let written = walk(dir.path());
    assert_eq!(written, 3, "nothing else is written");
}

#[test]
fn capture_is_off_without_a_folder() {
    let capture = Capture::into_dir(None, "a_test");
    assert_eq!(capture.record("/v1/messages", b"{}"), None);
}

#[test]
fn wires_are_told_apart_by_path() {
    for (path, wire) in [
        ("/v1/messages", Some(Wire::Anthropic)),
        ("/proxy/v1/messages?beta=true", Some(Wire::Anthropic)),
        ("/v1/chat/completions", Some(Wire::OpenAiChat)),
        ("/v1/responses", Some(Wire::OpenAiResponses)),
        ("/v1/messages/count_tokens", None),
        ("/v1/models", None),
    ] {
        assert_eq!(Wire::of_path(path), wire, "{path}");
    }
}

/// How many files are under `dir`.
fn walk(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .expect("readable")
        .map(|entry| {
            let path = entry.expect("an entry").path();
            if path.is_dir() { walk(&path) } else { 1 }
        })
        .sum()
}
