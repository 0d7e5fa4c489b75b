//! Tests of Read's helpers: binary detection, near names, capped lines, image signatures.

use super::*;

#[test]
fn binary_detection() {
    assert!(looks_binary(b"PK\x03\x04\x00\x00"));
    assert!(!looks_binary(b"fn main() {}\n\tlet x = 1;\r\n"));
    assert!(!looks_binary("héllo wörld".as_bytes()));
    assert!(looks_binary(&[1, 2, 3, 4, 5, 6, 7, 8, b'a']));
}

#[test]
fn near_names() {
    assert_eq!(zr_types::edit_distance("kitten", "sitting"), 3);
    // Within the edit budget (a third of the name, at least 2): the distance.
    assert_eq!(near_score("main.rs", "mian.rs"), Some(2));
    assert_eq!(near_score("config.toml", "config.yaml"), Some(2));
    // Same stem: just beyond the budget.
    assert_eq!(near_score("lib.rs", "lib.rs.bak"), Some(3));
    // Contained in the name: after same-stem names.
    assert_eq!(near_score("util", "my_util_helpers.rs"), Some(4));
    assert!(near_score("main.rs", "zzzzzzzzz").is_none());
}

#[test]
fn capped_lines_and_counts() {
    let data = b"abcdef\nxy\nlast";
    let mut r = std::io::Cursor::new(&data[..]);
    let mut raw = Vec::new();
    assert_eq!(read_line_capped(&mut r, &mut raw, 3).unwrap(), 7);
    assert_eq!(raw, b"abc");
    assert_eq!(count_lines(&mut r), 3);
    let mut r = std::io::Cursor::new(&b"a\nb\n"[..]);
    assert_eq!(count_lines(&mut r), 3);
    let mut r = std::io::Cursor::new(&b""[..]);
    assert_eq!(count_lines(&mut r), 1);
}

#[test]
fn image_signatures() {
    assert!(magic_matches(b"\x89PNG\r\n\x1a\nrest", "image/png"));
    assert!(!magic_matches(b"not a png", "image/png"));
    assert!(magic_matches(&[0xff, 0xd8, 0xff, 0xe0], "image/jpeg"));
    assert!(magic_matches(b"GIF89a..", "image/gif"));
    assert!(magic_matches(b"RIFF\0\0\0\0WEBPVP8 ", "image/webp"));
}
