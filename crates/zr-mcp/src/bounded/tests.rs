//! Tests of the bounded line reader's limits on oversized and ordinary messages.
use tokio::io::AsyncReadExt;

use super::*;

async fn read_all(input: &[u8], limit: usize, chunk: usize) -> (Vec<u8>, bool) {
    // A reader that hands out `chunk` bytes at a time.
    let reader = tokio_test_reader(input, chunk);
    let (mut bounded, tripped) = BoundedLines::new(reader, limit);
    let mut out = Vec::new();
    bounded.read_to_end(&mut out).await.unwrap();
    let tripped = *tripped.borrow();
    (out, tripped)
}

fn tokio_test_reader(input: &[u8], chunk: usize) -> impl AsyncRead + Unpin {
    Chunks {
        data: input.to_vec(),
        at: 0,
        chunk: chunk.max(1),
    }
}

/// Hands out at most `chunk` bytes per read.
struct Chunks {
    data: Vec<u8>,
    at: usize,
    chunk: usize,
}

impl AsyncRead for Chunks {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let n = self
            .chunk
            .min(buf.remaining())
            .min(self.data.len() - self.at);
        let at = self.at;
        buf.put_slice(&self.data[at..at + n]);
        self.at += n;
        Poll::Ready(Ok(()))
    }
}

#[tokio::test]
async fn lines_within_the_limit_pass_unchanged() {
    let input = b"{\"a\":1}\n{\"b\":22}\n\n12345\n";
    for chunk in [1, 3, 7, 100] {
        let (out, tripped) = read_all(input, 8, chunk).await;
        assert_eq!(out, input, "chunk {chunk}");
        assert!(!tripped);
    }
}

#[tokio::test]
async fn the_stream_ends_before_the_first_oversized_line() {
    let input = b"short\nthis line is far too long\nnever seen\n";
    for chunk in [1, 4, 9, 100] {
        let (out, tripped) = read_all(input, 10, chunk).await;
        assert!(tripped, "chunk {chunk}");
        // Whole lines before the long one always come through; a part of
        // the long line may too (it had not yet reached the limit), but
        // never more than the limit and never a newline after it.
        assert!(out.starts_with(b"short\n"), "chunk {chunk}: {out:?}");
        assert!(out.len() <= "short\n".len() + 10, "chunk {chunk}: {out:?}");
        assert_eq!(out.iter().filter(|b| **b == b'\n').count(), 1);
    }
}

#[tokio::test]
async fn an_unterminated_line_over_the_limit_trips() {
    let (out, tripped) = read_all(&[b'x'; 50], 10, 4).await;
    assert!(tripped);
    assert!(out.len() <= 10);
}

proptest::proptest! {
    #[test]
    fn prop_output_is_the_input_up_to_the_first_oversized_line(
        input in proptest::collection::vec(proptest::prop_oneof![proptest::strategy::Just(b'a'), proptest::strategy::Just(b'\n')], 0..64),
        limit in 1usize..10,
        chunk in 1usize..9,
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let (out, tripped) = runtime.block_on(read_all(&input, limit, chunk));
        // The first line (maybe unterminated) longer than the limit.
        let mut start = 0;
        let mut first_long = None;
        for line in input.split(|b| *b == b'\n') {
            if line.len() > limit {
                first_long = Some(start);
                break;
            }
            start += line.len() + 1;
        }
        proptest::prop_assert!(input.starts_with(&out));
        match first_long {
            None => {
                proptest::prop_assert!(!tripped);
                proptest::prop_assert_eq!(out, input);
            }
            Some(at) => {
                proptest::prop_assert!(tripped);
                proptest::prop_assert!(out.len() >= at);
                proptest::prop_assert!(out.len() <= at + limit);
            }
        }
    }
}
