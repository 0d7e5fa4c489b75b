//! Read, Write and Edit on real files, with the per-agent read ledger.

use serde_json::json;
use zr_types::{AgentId, ImageSource, ToolResultContent};

use crate::support::{Kit, assert_error, ctx_for, text};

#[tokio::test]
async fn read_numbers_lines_with_offset_and_limit() {
    let kit = Kit::new();
    let body: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    kit.write("a.txt", &body);
    let out = kit.call_read("a.txt").await;
    let t = text(&out);
    assert!(t.starts_with("     1\tline 1\n     2\tline 2\n"), "{t}");
    assert!(t.ends_with("    10\tline 10\n"), "{t}");
    let out = kit
        .call(
            "Read",
            json!({"file_path": "a.txt", "offset": 4, "limit": 2}),
        )
        .await;
    assert_eq!(
        text(&out),
        "     4\tline 4\n     5\tline 5\n[showing lines 4-5 of 10 because `limit` is 2; call Read with offset 6 to continue]"
    );
    let out = kit
        .call("Read", json!({"file_path": "a.txt", "offset": 50}))
        .await;
    assert_error(&out, "has 10 lines");
}

#[tokio::test]
async fn read_cuts_long_lines() {
    let kit = Kit::new();
    kit.write("long.txt", &format!("{}\nshort\n", "x".repeat(5000)));
    let t = text(&kit.call_read("long.txt").await);
    assert!(t.contains("[line cut: 3000 more chars]"), "{}", &t[..100]);
    assert!(t.contains("     2\tshort"));
}

#[tokio::test]
async fn read_of_a_huge_single_line_stays_bounded() {
    let kit = Kit::new();
    let mut body = "y".repeat(20 * 1024 * 1024);
    body.push_str("\nnext\n");
    kit.write("huge.txt", &body);
    let t = text(&kit.call_read("huge.txt").await);
    assert!(
        t.contains("[line cut: it is 20971521 bytes long]"),
        "{}",
        &t[t.len() - 100..]
    );
    assert!(t.ends_with("     2\tnext\n"), "{}", &t[t.len() - 100..]);
    assert!(t.len() < 3000);
}

#[tokio::test]
async fn read_refuses_binary_files() {
    let kit = Kit::new();
    std::fs::write(kit.path("blob.bin"), [0x7f, b'E', b'L', b'F', 0, 0, 1, 2]).unwrap();
    let out = kit.call_read("blob.bin").await;
    assert_error(&out, "is a binary file (8 bytes)");
}

#[tokio::test]
async fn read_returns_images_as_image_content() {
    let kit = Kit::new();
    let png = [
        0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d,
    ];
    std::fs::write(kit.path("pic.png"), png).unwrap();
    let out = kit.call_read("pic.png").await;
    assert!(!out.is_error);
    match &out.content[..] {
        [
            ToolResultContent::Image {
                source: ImageSource::Base64 { media_type, data },
            },
        ] => {
            assert_eq!(media_type, "image/png");
            assert_eq!(data, "iVBORw0KGgoAAAAN");
        }
        other => panic!("expected one image, got {other:?}"),
    }
    kit.write("fake.png", "just text");
    let out = kit.call_read("fake.png").await;
    assert_error(&out, "its bytes are not one");
}

#[tokio::test]
async fn read_lists_directories() {
    let kit = Kit::new();
    kit.write("d/b.txt", "b");
    kit.write("d/a.txt", "a");
    kit.write("d/sub/c.txt", "c");
    let t = text(&kit.call_read("d").await);
    assert!(t.ends_with("with 3 entries:\na.txt\nb.txt\nsub/\n"), "{t}");
}

#[tokio::test]
async fn read_of_a_missing_path_offers_near_matches() {
    let kit = Kit::new();
    kit.write("src/main.rs", "fn main() {}");
    kit.write("src/lib.rs", "");
    let out = kit.call_read("src/mian.rs").await;
    let t = text(&out);
    assert!(out.is_error);
    assert!(t.contains("does not exist. Did you mean:"), "{t}");
    assert!(t.contains("src/main.rs"), "{t}");
    let out = kit.call_read("nope/x.rs").await;
    assert!(
        text(&out).contains("does not exist either"),
        "{}",
        text(&out)
    );
}

#[tokio::test]
async fn write_refuses_to_overwrite_an_unread_file() {
    let kit = Kit::new();
    let p = kit.write("keep.txt", "precious\n");
    let out = kit.call_write("keep.txt", "clobbered\n").await;
    assert_error(&out, "have not read it");
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "precious\n");
    // Another agent's read does not count.
    let other = ctx_for(kit.dir.path(), AgentId::root().child(1, "explore"));
    kit.call_as("Read", json!({"file_path": "keep.txt"}), other)
        .await;
    let out = kit.call_write("keep.txt", "clobbered\n").await;
    assert_error(&out, "have not read it");
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "precious\n");
    // After this agent's Read it may.
    kit.call_read("keep.txt").await;
    let out = kit.call_write("keep.txt", "new\n").await;
    assert!(!out.is_error, "{}", text(&out));
    assert!(text(&out).starts_with("Overwrote"));
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "new\n");
}

#[tokio::test]
async fn write_refuses_a_file_changed_since_it_was_read() {
    let kit = Kit::new();
    let p = kit.write("s.txt", "one\n");
    kit.call_read("s.txt").await;
    std::fs::write(&p, "changed by someone else, longer\n").unwrap();
    let out = kit.call_write("s.txt", "mine\n").await;
    assert_error(&out, "changed since you last read it");
}

#[tokio::test]
async fn write_creates_new_files_and_parent_folders() {
    let kit = Kit::new();
    let out = kit.call_write("deep/er/new.txt", "a\nb\n").await;
    assert_eq!(
        text(&out),
        format!(
            "Created {} (2 lines, 4 bytes).",
            kit.path("deep/er/new.txt").display()
        )
    );
    // Written files count as read: a second Write is fine.
    let out = kit.call_write("deep/er/new.txt", "c\n").await;
    assert!(!out.is_error, "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(kit.path("deep/er/new.txt")).unwrap(),
        "c\n"
    );
}

/// A dangling symlink is refused: writing through it would create its
/// target elsewhere, here outside the working folder.
#[cfg(unix)]
#[tokio::test]
async fn write_refuses_a_dangling_symlink() {
    let kit = Kit::new();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("sub/elsewhere.txt");
    let link = kit.path("link.txt");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let out = kit.call_write("link.txt", "x\n").await;
    assert!(out.is_error, "{}", text(&out));
    assert_eq!(
        text(&out),
        format!(
            "Write: {} is a symbolic link to {}, which does not exist (or cannot be resolved); nothing was written. Write to the target path itself, or to another path.",
            link.display(),
            target.display()
        )
    );
    assert!(!target.exists() && !target.parent().unwrap().exists());
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    // A link to an existing file still writes that file (after a Read).
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    std::fs::write(&target, "old\n").unwrap();
    kit.call_read("link.txt").await;
    let out = kit.call_write("link.txt", "new\n").await;
    assert!(!out.is_error, "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "new\n");
}

#[tokio::test]
async fn edit_replaces_a_unique_exact_string() {
    let kit = Kit::new();
    let p = kit.read_then("e.rs", "fn a() {}\nfn b() {}\n").await;
    let out = kit.call_edit("e.rs", "fn b()", "fn c()").await;
    let t = text(&out);
    assert!(!out.is_error, "{t}");
    assert!(t.contains("replaced 1 occurrence (exact match)"), "{t}");
    assert!(t.contains("     2\tfn c() {}"), "{t}");
    assert_eq!(
        std::fs::read_to_string(p).unwrap(),
        "fn a() {}\nfn c() {}\n"
    );
}

#[tokio::test]
async fn edit_refuses_a_non_unique_string_unless_replace_all() {
    let kit = Kit::new();
    let p = kit.read_then("n.txt", "x = 1\ny = 2\nx = 1\n").await;
    let out = kit.call_edit("n.txt", "x = 1", "x = 9").await;
    assert_error(&out, "occurs 2 times");
    assert!(text(&out).contains("lines 1, 3"), "{}", text(&out));
    let out = kit
        .call(
            "Edit",
            json!({"file_path": "n.txt", "old_string": "x = 1", "new_string": "x = 9", "replace_all": true}),
        )
        .await;
    assert!(
        text(&out).contains("replaced 2 occurrences"),
        "{}",
        text(&out)
    );
    assert_eq!(std::fs::read_to_string(p).unwrap(), "x = 9\ny = 2\nx = 9\n");
}

#[tokio::test]
async fn edit_falls_back_to_indentation_tolerant_matching_and_says_so() {
    let kit = Kit::new();
    let p = kit
        .read_then("t.py", "class A:\n    def f(self):\n        return 1\n")
        .await;
    let out = kit
        .call_edit(
            "t.py",
            "def f(self):\n    return 1",
            "def f(self):\n    return 2",
        )
        .await;
    let t = text(&out);
    assert!(!out.is_error, "{t}");
    assert!(t.contains("matched ignoring indentation"), "{t}");
    assert_eq!(
        std::fs::read_to_string(p).unwrap(),
        "class A:\n    def f(self):\n        return 2\n"
    );
}

#[tokio::test]
async fn edit_reports_what_it_could_not_find_and_needs_a_read() {
    let kit = Kit::new();
    kit.write("u.txt", "alpha\n");
    let out = kit.call_edit("u.txt", "alpha", "beta").await;
    assert_error(&out, "have not read it");
    kit.call_read("u.txt").await;
    let out = kit.call_edit("u.txt", "gamma", "beta").await;
    assert_error(&out, "was not found");
    let out = kit.call_edit("u.txt", "alpha", "alpha").await;
    assert_error(&out, "are the same");
}

#[tokio::test]
async fn a_read_in_another_session_does_not_count() {
    let kit = Kit::new();
    kit.write("shared.txt", "v1\n");
    let other_session = zr_types::ToolContext::new(
        zr_types::SessionId::from_parts(0x18c_0000_0001, 1),
        AgentId::root(),
        kit.dir.path().to_path_buf(),
        std::collections::BTreeMap::new(),
    );
    kit.call_as("Read", json!({"file_path": "shared.txt"}), other_session)
        .await;
    let out = kit.call_write("shared.txt", "v2\n").await;
    assert_error(&out, "have not read it");
    assert_eq!(
        std::fs::read_to_string(kit.path("shared.txt")).unwrap(),
        "v1\n"
    );
}

#[tokio::test]
async fn edit_accepts_old_string_copied_with_read_prefixes() {
    let kit = Kit::new();
    let p = kit.read_then("p.rs", "fn a() {\n    one();\n}\n").await;
    let out = kit
        .call_edit("p.rs", "     2\t    one();", "     2\t    two();")
        .await;
    assert!(
        text(&out).contains("line-number prefixes, which were removed"),
        "{}",
        text(&out)
    );
    assert_eq!(
        std::fs::read_to_string(p).unwrap(),
        "fn a() {\n    two();\n}\n"
    );
}

/// Regression: an exact match in a CRLF file wrote new_string's line
/// breaks as bare `\n`, leaving the file with mixed line endings.
#[tokio::test]
async fn edit_keeps_the_line_endings_of_a_crlf_file() {
    let kit = Kit::new();
    let p = kit
        .read_then("w.bat", "@echo off\r\necho one\r\nexit\r\n")
        .await;
    let out = kit
        .call_edit("w.bat", "echo one", "echo one\necho two")
        .await;
    assert!(!out.is_error, "{}", text(&out));
    assert_eq!(
        std::fs::read(&p).unwrap(),
        b"@echo off\r\necho one\r\necho two\r\nexit\r\n"
    );
    // A tolerant (line-by-line) match keeps CRLF as well.
    let out = kit
        .call_edit("w.bat", "echo two  \nexit\n", "echo 2\nexit /b 0\n")
        .await;
    assert!(text(&out).contains("trailing whitespace"), "{}", text(&out));
    assert_eq!(
        std::fs::read(&p).unwrap(),
        b"@echo off\r\necho one\r\necho 2\r\nexit /b 0\r\n"
    );
}

#[tokio::test]
async fn edit_refuses_an_ambiguous_tolerant_match_and_odd_inputs() {
    let kit = Kit::new();
    let content = "fn a() {\n    if x {\n        go();\n    }\n}\nfn b() {\n        if x {\n            go();\n        }\n}\n";
    let p = kit.read_then("amb.rs", content).await;
    // Not found exactly; found twice ignoring indentation: refused.
    let out = kit
        .call_edit("amb.rs", "if x {\n  go();\n}", "if y {\n  stop();\n}")
        .await;
    assert_error(&out, "occurs 2 times");
    assert!(text(&out).contains("lines 2, 7"), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&p).unwrap(), content);
    let out = kit.call_edit("amb.rs", "", "x").await;
    assert_error(&out, "`old_string` is empty");
    assert_eq!(std::fs::read_to_string(&p).unwrap(), content);
    // A file that is not UTF-8 is refused and left alone.
    let latin1 = kit.path("latin1.txt");
    std::fs::write(&latin1, b"caf\xe9 au lait\n").unwrap();
    let read = kit.call_read("latin1.txt").await;
    assert!(!read.is_error, "{}", text(&read));
    let out = kit.call_edit("latin1.txt", "lait", "sucre").await;
    assert_error(&out, "is not UTF-8");
    assert_eq!(std::fs::read(&latin1).unwrap(), b"caf\xe9 au lait\n");
}
