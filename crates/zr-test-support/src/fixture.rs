//! The recorded SSE answers in this crate's `fixtures/` folder, one
//! folder a wire (`anthropic/`, `openai/`, `responses/`): what each API
//! streamed, kept byte for byte so that the providers' parsers and the
//! loopback servers replay the real format.

use std::path::PathBuf;

/// The path of the fixture `fixtures/{name}` (`anthropic/text.sse`).
pub fn path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

/// The bytes of a fixture.
///
/// # Panics
///
/// When the file cannot be read.
pub fn bytes(name: &str) -> Vec<u8> {
    let path = path(name);
    std::fs::read(&path).unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()))
}

/// The fixture `fixtures/{name}` as text.
pub fn text(name: &str) -> String {
    String::from_utf8(bytes(name)).expect("fixtures are UTF-8")
}

/// The fixture `fixtures/{name}` as text, with `from` replaced by `to`;
/// panics if `from` does not occur, so that an edited fixture cannot
/// silently turn a test into a copy of another.
pub fn replaced(name: &str, from: &str, to: &str) -> String {
    let text = text(name);
    assert!(text.contains(from), "{name} does not contain {from:?}");
    text.replace(from, to)
}
