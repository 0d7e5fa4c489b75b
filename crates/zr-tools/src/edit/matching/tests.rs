//! Tests of the edit matching strategies, with a no-panic law.

use super::*;

fn apply(content: &str, f: &Found) -> String {
    let mut out = content.to_owned();
    for (r, t) in f.ranges.iter().zip(&f.replacements).rev() {
        out.replace_range(r.clone(), t);
    }
    out
}

#[test]
fn exact_first() {
    let f = find("a b a", "a", "x").unwrap();
    assert_eq!(f.strategy, Strategy::Exact);
    assert_eq!(f.ranges, vec![0..1, 4..5]);
}

#[test]
fn trailing_whitespace_and_crlf() {
    let content = "fn a() {  \r\n    x();\r\n}\r\n";
    let f = find(content, "fn a() {\n    x();\n", "fn b() {\n    y();\n").unwrap();
    assert_eq!(f.strategy, Strategy::TrailingWhitespace);
    assert_eq!(apply(content, &f), "fn b() {\r\n    y();\r\n}\r\n");
}

#[test]
fn indentation_is_carried_over() {
    let content = "mod m {\n        if x {\n            go();\n        }\n}\n";
    let old = "if x {\n    go();\n}";
    let new = "if y {\n    stop();\n}";
    let f = find(content, old, new).unwrap();
    assert_eq!(f.strategy, Strategy::Indentation);
    assert_eq!(
        apply(content, &f),
        "mod m {\n        if y {\n            stop();\n        }\n}\n"
    );
}

#[test]
fn inner_whitespace() {
    let content = "let  x =   1;\n";
    let f = find(content, "let x = 1;", "let x = 2;").unwrap();
    assert_eq!(f.strategy, Strategy::Whitespace);
    assert_eq!(apply(content, &f), "let x = 2;\n");
}

#[test]
fn nothing_matches() {
    assert!(find("abc\n", "xyz", "q").is_none());
    assert!(find("abc\n", "", "q").is_none());
    assert!(find("abc\n", "\n\n", "q").is_none());
}

mod laws {
    use proptest::prelude::*;

    use super::super::{Strategy as Matched, find};

    fn text() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                Just("a"),
                Just("b"),
                Just(" "),
                Just("\t"),
                Just("\n"),
                Just("\r\n"),
                Just("é"),
                Just("    "),
            ],
            0..16,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest! {
        /// Whatever the input, matches are in order, disjoint, on char
        /// boundaries, and applying them never panics.
        #[test]
        fn prop_matches_are_disjoint_char_ranges(content in text(), old in text(), new in text()) {
            if let Some(found) = find(&content, &old, &new) {
                prop_assert_eq!(found.ranges.len(), found.replacements.len());
                let mut last = 0;
                for r in &found.ranges {
                    prop_assert!(r.start >= last && r.start <= r.end && r.end <= content.len());
                    prop_assert!(content.is_char_boundary(r.start) && content.is_char_boundary(r.end));
                    last = r.end;
                }
                let mut out = content.clone();
                for (r, t) in found.ranges.iter().zip(&found.replacements).rev() {
                    out.replace_range(r.clone(), t);
                }
                if found.strategy == Matched::Exact {
                    prop_assert_eq!(out, content.replace(&old, &new));
                }
            }
        }
    }
}

#[test]
fn read_line_number_prefixes_are_removed() {
    let content = "a\n    let x = 1;\nb\n";
    let f = find(content, "     2\t    let x = 1;", "     2\t    let x = 2;").unwrap();
    assert!(f.prefixes_removed);
    assert_eq!(f.strategy, Strategy::Exact);
    assert_eq!(apply(content, &f), "a\n    let x = 2;\nb\n");
    assert!(
        f.describe()
            .starts_with("old_string carried Read's line-number prefixes")
    );
    // Without prefixes on every line, nothing is stripped.
    assert!(find(content, "     2\tnope\nplain", "x").is_none());
    assert_eq!(
        strip_line_numbers("  10\tx\n\n  11\ty"),
        Some("x\n\ny".to_owned())
    );
    assert_eq!(strip_line_numbers("\tx"), None);
}
