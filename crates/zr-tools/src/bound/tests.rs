//! Tests of output bounding, with a head-and-tail law.

use super::*;

#[test]
fn short_output_is_kept_whole() {
    let mut b = HeadTail::new(4, 4);
    b.push(b"abc");
    b.push(b"de");
    assert_eq!(b.render(), "abcde");
    assert_eq!(b.total(), 5);
}

#[test]
fn long_output_keeps_head_and_tail_and_says_what_was_cut() {
    let mut b = HeadTail::new(3, 3);
    for chunk in [&b"0123"[..], b"456789", b"ab"] {
        b.push(chunk);
    }
    let r = b.render();
    assert!(r.starts_with("012\n"), "{r}");
    assert!(r.ends_with("\n9ab"), "{r}");
    assert!(r.contains("6 bytes cut"), "{r}");
    assert!(r.contains("12 bytes in total"), "{r}");
}

#[test]
fn cut_text_respects_char_boundaries() {
    let s = "ééééé";
    let cut = cut_text(s, 3, "narrow it");
    assert!(cut.starts_with('é'));
    assert!(cut.contains("2 of 10 bytes"), "{cut}");
    assert_eq!(cut_line("abcdef", 3), "abc... [line cut: 3 more chars]");
    assert_eq!(cut_line("abc", 3), "abc");
}

/// Regression: a multibyte character split by the head or tail cut, or
/// straddling head and tail of output that was not cut at all, came out as
/// U+FFFD replacement characters.
#[test]
fn multibyte_text_at_the_cut_points_stays_whole() {
    // 'é' is 2 bytes, '€' 3, '𝄞' 4: every cap splits some character.
    for text in ["ééééééééééé", "€€€€€€€€€€€", "𝄞𝄞𝄞𝄞𝄞𝄞𝄞𝄞", "a€é𝄞b€é𝄞c€é𝄞d"]
    {
        for cap in 1..8 {
            let mut b = HeadTail::new(cap, cap);
            b.push(text.as_bytes());
            let r = b.render();
            assert!(!r.contains('\u{FFFD}'), "cap {cap}: {r:?}");
            if text.len() <= 2 * cap {
                assert_eq!(r, text);
            } else {
                let (head, rest) = r.split_once("\n[... ").unwrap();
                let (note, tail) = rest.split_once(" ...]\n").unwrap();
                assert!(text.starts_with(head) && text.ends_with(tail), "{r:?}");
                let cut = text.len() - head.len() - tail.len();
                assert!(note.starts_with(&format!("{cut} bytes cut")), "{r:?}");
            }
        }
    }
    // Not cut, but a character straddles head and tail.
    let mut b = HeadTail::new(3, 10);
    b.push("ab€cd".as_bytes());
    assert_eq!(b.render(), "ab€cd");
}

mod laws {
    use proptest::prelude::*;

    use super::super::*;

    proptest! {
        /// Short streams are kept whole; long ones keep exactly their first
        /// and last bytes.
        #[test]
        fn prop_head_and_tail_are_kept(chunks in proptest::collection::vec(proptest::collection::vec(b'a'..=b'z', 0..20), 0..10), head in 0_usize..16, tail in 0_usize..16) {
            let mut b = HeadTail::new(head, tail);
            let all: Vec<u8> = chunks.concat();
            for c in &chunks {
                b.push(c);
            }
            let r = b.render();
            let all_text = String::from_utf8(all.clone()).unwrap();
            if all.len() <= head + tail {
                prop_assert_eq!(r, all_text);
            } else {
                prop_assert!(r.starts_with(&all_text[..head]));
                prop_assert!(r.ends_with(&all_text[all.len() - tail..]));
                let cut = format!("{} bytes cut", all.len() - head - tail);
                prop_assert!(r.contains(&cut));
            }
        }

        /// Valid UTF-8 in, valid UTF-8 out: whatever the caps and chunks,
        /// no replacement character, and uncut output comes back whole.
        #[test]
        fn prop_utf8_survives_bounding(parts in proptest::collection::vec(prop_oneof![Just("a"), Just("é"), Just("€"), Just("𝄞"), Just("\n")], 0..24), splits in proptest::collection::vec(0_usize..64, 0..4), head in 0_usize..12, tail in 0_usize..12) {
            let all = parts.concat();
            let bytes = all.as_bytes();
            let mut b = HeadTail::new(head, tail);
            let mut at = 0;
            for s in splits {
                let end = (at + s).min(bytes.len());
                b.push(&bytes[at..end]);
                at = end;
            }
            b.push(&bytes[at..]);
            let r = b.render();
            prop_assert!(!r.contains('\u{FFFD}'), "{:?}", r);
            if bytes.len() <= head + tail {
                prop_assert_eq!(r, all);
            }
        }
    }
}
