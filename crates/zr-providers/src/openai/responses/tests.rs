//! Unit tests of the Responses API decoder: chunk boundaries and bytes
//! from the network.

use super::decode::EventDecoder;
use crate::provider::ModelEvent;

const TOOLS: &str = include_str!("../../../../zr-test-support/fixtures/responses/tools.sse");

/// The tools fixture cut into pieces at `cuts`.
fn split(text: &str, cuts: &[usize]) -> Vec<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    points.sort_unstable();
    let mut chunks = Vec::new();
    let mut from = 0;
    for point in points {
        chunks.push(bytes[from..point].to_vec());
        from = point;
    }
    chunks.push(bytes[from..].to_vec());
    chunks
}

#[test]
fn the_reasoning_item_becomes_a_signed_thinking_block() {
    let events =
        crate::http::decode_chunks(&mut EventDecoder::default(), vec![TOOLS.into()]).unwrap();
    let Some(ModelEvent::Completed(response)) = events.last() else {
        panic!("expected Completed: {events:?}");
    };
    let zr_types::ContentBlock::Thinking {
        thinking,
        signature,
    } = &response.content[0]
    else {
        panic!("expected thinking first: {:?}", response.content);
    };
    assert_eq!(thinking, "I should read the file.");
    let item = super::Reasoning::from_signature(signature.as_deref().unwrap()).unwrap();
    assert_eq!(
        (item.id.as_str(), item.encrypted_content.as_str()),
        (
            "rs_68af1c30c1d48190aa11bb22cc33dd44",
            "gAAAAABor-ENCRYPTED-1=="
        )
    );
}

proptest::proptest! {
    /// Law: however the body is cut into chunks, the events are the same.
    #[test]
    fn prop_chunk_boundaries_do_not_matter(cuts in proptest::collection::vec(0_usize..20_000, 0..8)) {
        let whole = crate::http::decode_chunks(&mut EventDecoder::default(), vec![TOOLS.into()]).unwrap();
        let pieces = crate::http::decode_chunks(&mut EventDecoder::default(), split(TOOLS, &cuts)).unwrap();
        proptest::prop_assert_eq!(whole, pieces);
    }

    /// Law: no bytes make the decoder panic.
    #[test]
    fn prop_arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..300)) {
        let _ = crate::http::decode_chunks(&mut EventDecoder::default(), vec![bytes]);
    }

    /// Law: a corrupted fixture (one byte changed) fails or decodes, never
    /// panics.
    #[test]
    fn prop_corrupted_fixtures_never_panic(at in 0_usize..TOOLS.len(), byte in proptest::num::u8::ANY) {
        let mut bytes = TOOLS.as_bytes().to_vec();
        bytes[at] = byte;
        let _ = crate::http::decode_chunks(&mut EventDecoder::default(), vec![bytes]);
    }
}
