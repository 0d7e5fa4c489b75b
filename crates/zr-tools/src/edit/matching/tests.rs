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

    use super::super::{Strategy as Matched, find, uses_crlf};

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
                if found.strategy == Matched::Exact && !uses_crlf(&content) {
                    prop_assert_eq!(&out, &content.replace(&old, &new));
                }
                // A CRLF file gains no bare `\n` and no `\r\r\n` it did not have.
                if uses_crlf(&content) && found.strategy == Matched::Exact {
                    let bare = |s: &str| s.matches('\n').count() - s.matches("\r\n").count();
                    prop_assert!(bare(&out) <= bare(&content), "{:?}", out);
                    prop_assert!(
                        out.matches("\r\r\n").count() <= content.matches("\r\r\n").count() + new.matches("\r\r\n").count(),
                        "{:?}", out
                    );
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

/// Regression: the indentation of a tolerant match was taken from the
/// file line matched by old_string's first line even when that line was
/// blank, so new_string lost all its indentation.
#[test]
fn a_blank_first_line_does_not_decide_the_indentation() {
    let content = "mod m {\n\n        foo();\n}\n";
    let f = find(content, "\n    foo();", "\n    bar();").unwrap();
    assert_eq!(f.strategy, Strategy::Indentation);
    assert_eq!(apply(content, &f), "mod m {\n\n        bar();\n}\n");
    // The same with whitespace-only blank lines in the file.
    let content = "mod m {\n   \n        foo( 1 );\n}\n";
    let f = find(content, "\n    foo(  1 );", "\n    bar();").unwrap();
    assert_eq!(f.strategy, Strategy::Whitespace);
    assert_eq!(apply(content, &f), "mod m {\n\n        bar();\n}\n");
}

/// Regression: an exact match in a CRLF file wrote new_string's line
/// breaks as bare `\n`, mixing line endings in the file.
#[test]
fn crlf_files_keep_crlf_line_endings() {
    let content = "a\r\nb\r\nc\r\n";
    let f = find(content, "b", "b1\nb2").unwrap();
    assert_eq!(f.strategy, Strategy::Exact);
    assert_eq!(apply(content, &f), "a\r\nb1\r\nb2\r\nc\r\n");
    // new_string already in CRLF is not doubled.
    let f = find(content, "b\r\n", "x\r\ny\r\n").unwrap();
    assert_eq!(apply(content, &f), "a\r\nx\r\ny\r\nc\r\n");
    // A match that starts inside a CRLF pair does not double its CR.
    let f = find(content, "\nb", "\nx").unwrap();
    assert_eq!(apply(content, &f), "a\r\nx\r\nc\r\n");
    // Regression: one that removes the line break takes its CR with it
    // (a lone CR was left, making `\r\r\n` or a bare `\r`).
    let f = find(content, "\nb", "").unwrap();
    assert_eq!(apply(content, &f), "a\r\nc\r\n");
    let f = find(content, "\nb", " x").unwrap();
    assert_eq!(apply(content, &f), "a x\r\nc\r\n");
    let content = "\r\nb\r\n ";
    let f = find(content, "\nb", "").unwrap();
    assert_eq!(apply(content, &f), "\r\n ");
    // A LF file is left alone, even with a stray CR inside.
    let content = "a\nb\r\nc\nd\n";
    let f = find(content, "c", "c1\nc2").unwrap();
    assert_eq!(apply(content, &f), "a\nb\r\nc1\nc2\nd\n");
}

/// Regression: when old_string carried Read's prefixes but new_string had
/// them only on some lines (the model added a line), new_string was kept
/// as given and the prefixes were written into the file.
#[test]
fn read_prefixes_never_reach_the_file() {
    let content = "a\n    let x = 1;\nb\n";
    let f = find(
        content,
        "     2\t    let x = 1;",
        "     2\t    let x = 1;\n    let y = 2;",
    )
    .unwrap();
    assert!(f.prefixes_removed);
    assert_eq!(apply(content, &f), "a\n    let x = 1;\n    let y = 2;\nb\n");
}
