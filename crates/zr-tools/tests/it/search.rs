//! Glob and Grep on real folders, with .gitignore.

use std::time::{Duration, SystemTime};

use serde_json::json;

use crate::support::{Kit, assert_error, text};

fn age(kit: &Kit, rel: &str, secs_ago: u64) {
    let f = std::fs::File::options()
        .write(true)
        .open(kit.path(rel))
        .unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(secs_ago))
        .unwrap();
}

fn tree() -> Kit {
    let kit = Kit::new();
    kit.write(".gitignore", "ignored/\n*.log\n");
    kit.write("old.rs", "fn old() {}\n");
    kit.write(
        "src/new.rs",
        "fn main() {\n    let Needle = 1;\n    println!(\"needle\");\n}\n",
    );
    kit.write("src/mid.rs", "// nothing here\n");
    kit.write("ignored/hidden.rs", "needle\n");
    kit.write("debug.log", "needle\n");
    kit.write("notes.md", "a needle in markdown\n");
    kit.write(".config/settings.rs", "needle\n");
    age(&kit, "old.rs", 3000);
    age(&kit, "src/mid.rs", 2000);
    age(&kit, "src/new.rs", 10);
    age(&kit, "notes.md", 1000);
    age(&kit, ".config/settings.rs", 500);
    kit
}

#[tokio::test]
async fn glob_honours_gitignore_and_lists_newest_first() {
    let kit = tree();
    let t = text(&kit.call("Glob", json!({"pattern": "**/*.rs"})).await);
    let root = kit.dir.path().display().to_string();
    let rel: Vec<String> = t
        .lines()
        .map(|l| {
            l.trim_start_matches(&root)
                .trim_start_matches('/')
                .to_owned()
        })
        .collect();
    assert_eq!(
        rel,
        ["src/new.rs", ".config/settings.rs", "src/mid.rs", "old.rs"],
        "{t}"
    );
}

#[tokio::test]
async fn glob_star_stays_in_one_folder_and_path_narrows() {
    let kit = tree();
    let t = text(&kit.call("Glob", json!({"pattern": "*.rs"})).await);
    assert_eq!(t.lines().count(), 1, "{t}");
    assert!(t.ends_with("old.rs\n"), "{t}");
    let t = text(
        &kit.call("Glob", json!({"pattern": "./*.rs", "path": "src"}))
            .await,
    );
    assert_eq!(t.lines().count(), 2, "{t}");
    let out = kit.call("Glob", json!({"pattern": "a{b"})).await;
    assert_error(&out, "invalid pattern");
    let t = text(&kit.call("Glob", json!({"pattern": "**/*.zzz"})).await);
    assert!(t.starts_with("No files match"), "{t}");
}

#[tokio::test]
async fn glob_bounds_its_results() {
    let kit = Kit::new();
    for i in 0..130 {
        kit.write(&format!("f{i:03}.txt"), "");
    }
    let t = text(&kit.call("Glob", json!({"pattern": "*.txt"})).await);
    assert_eq!(t.lines().count(), 101, "{t}");
    assert!(
        t.contains("showing the 100 most recently modified of 130"),
        "{t}"
    );
}

#[tokio::test]
async fn grep_files_with_matches_is_the_default() {
    let kit = tree();
    let t = text(&kit.call("Grep", json!({"pattern": "needle"})).await);
    let names: Vec<&str> = t.lines().map(|l| l.rsplit('/').next().unwrap()).collect();
    assert_eq!(names, ["new.rs", "settings.rs", "notes.md"], "{t}");
}

#[tokio::test]
async fn grep_content_with_line_numbers_and_context() {
    let kit = tree();
    let out = kit
        .call(
            "Grep",
            json!({"pattern": "println", "output_mode": "content", "-C": 1, "path": "src"}),
        )
        .await;
    let t = text(&out);
    let p = kit.path("src/new.rs").display().to_string();
    assert_eq!(
        t,
        format!("{p}-2-    let Needle = 1;\n{p}:3:    println!(\"needle\");\n{p}-4-}}")
    );
    let t = text(
        &kit.call(
            "Grep",
            json!({"pattern": "needle", "output_mode": "content", "-n": false, "path": "notes.md"}),
        )
        .await,
    );
    assert_eq!(
        t,
        format!("{}:a needle in markdown", kit.path("notes.md").display())
    );
}

#[tokio::test]
async fn grep_count_case_insensitivity_and_filters() {
    let kit = tree();
    let t = text(
        &kit.call(
            "Grep",
            json!({"pattern": "needle", "output_mode": "count", "-i": true, "path": "src"}),
        )
        .await,
    );
    assert_eq!(
        t,
        format!(
            "{}:2\n[2 matching lines in 1 files]",
            kit.path("src/new.rs").display()
        )
    );
    let t = text(
        &kit.call("Grep", json!({"pattern": "needle", "glob": "*.md"}))
            .await,
    );
    assert_eq!(t.lines().count(), 1, "{t}");
    assert!(t.contains("notes.md"));
    let t = text(
        &kit.call("Grep", json!({"pattern": "needle", "type": "rust"}))
            .await,
    );
    assert_eq!(t.lines().count(), 2, "{t}");
    let out = kit
        .call("Grep", json!({"pattern": "needle", "type": "klingon"}))
        .await;
    assert_error(&out, "Grep: unknown file type \"klingon\"");
    let out = kit.call("Grep", json!({"pattern": "(unclosed"})).await;
    assert_error(&out, "invalid regular expression");
}

#[tokio::test]
async fn grep_multiline_and_head_limit() {
    let kit = tree();
    let t = text(
        &kit.call(
            "Grep",
            json!({"pattern": "fn main\\(\\) \\{.*Needle", "multiline": true, "output_mode": "content"}),
        )
        .await,
    );
    assert!(t.contains(":1:fn main() {"), "{t}");
    assert!(t.contains(":2:    let Needle = 1;"), "{t}");
    let t = text(
        &kit.call("Grep", json!({"pattern": "fn main\\(\\) \\{.*Needle"}))
            .await,
    );
    assert!(t.starts_with("No files match"), "without multiline: {t}");
    let many: String = (0..50).map(|i| format!("hit {i}\n")).collect();
    kit.write("many.txt", &many);
    let t = text(
        &kit.call(
            "Grep",
            json!({"pattern": "hit", "output_mode": "content", "head_limit": 5, "path": "many.txt"}),
        )
        .await,
    );
    assert_eq!(t.lines().count(), 6, "{t}");
    assert!(
        t.ends_with("[output stopped after 5 lines (head_limit 5, `--` separators included); more matches were left out. Narrow the search or raise head_limit]"),
        "{t}"
    );
}

/// The note appears only when something was left out, and `head_limit`
/// bounds every output line, `--` separators included.
#[tokio::test]
async fn grep_head_limit_is_exact_and_counts_separators() {
    let kit = Kit::new();
    kit.write("three.txt", "hit 1\nhit 2\nhit 3\n");
    let t = text(
        &kit.call(
            "Grep",
            json!({"pattern": "hit", "output_mode": "content", "head_limit": 3}),
        )
        .await,
    );
    assert_eq!(t.lines().count(), 3, "exactly 3 matches fit: {t}");
    assert!(!t.contains("stopped"), "nothing was cut: {t}");
    // Matches far apart: each group is `-`, `:`, `-` plus a `--` between.
    let spread: String = (0..40)
        .map(|i| {
            if i % 10 == 5 {
                "hit\n".to_owned()
            } else {
                format!("pad {i}\n")
            }
        })
        .collect();
    kit.write("spread.txt", &spread);
    for limit in 1..=16 {
        let t = text(
            &kit.call(
                "Grep",
                json!({"pattern": "^hit", "output_mode": "content", "-C": 1, "head_limit": limit, "path": "spread.txt"}),
            )
            .await,
        );
        let body: Vec<&str> = t
            .lines()
            .filter(|l| !l.starts_with("[output stopped"))
            .collect();
        assert!(body.len() <= limit, "limit {limit}: {t}");
        assert_ne!(
            body.last(),
            Some(&"--"),
            "limit {limit}: no dangling separator: {t}"
        );
        // 4 groups of 3 lines and 3 separators: 15 lines in all.
        assert_eq!(
            t.contains("[output stopped"),
            limit < 15,
            "limit {limit}: {t}"
        );
    }
}

/// Bad patterns of every kind come back as error results the model can
/// act on, never as `Err` or a panic.
#[tokio::test]
async fn bad_patterns_are_model_facing_errors() {
    let kit = tree();
    for (tool, input, says) in [
        ("Glob", json!({"pattern": "src/{a,b"}), "invalid pattern"),
        ("Glob", json!({"pattern": "[z-a]"}), "invalid pattern"),
        ("Glob", json!({"pattern": ""}), "`pattern` is empty"),
        (
            "Grep",
            json!({"pattern": "(unclosed"}),
            "invalid regular expression",
        ),
        (
            "Grep",
            json!({"pattern": "a\nb"}),
            "invalid regular expression",
        ),
        (
            "Grep",
            json!({"pattern": "x", "glob": "{a,"}),
            "invalid glob",
        ),
        (
            "Grep",
            json!({"pattern": "x", "type": "no-such-type"}),
            "unknown file type",
        ),
        (
            "Grep",
            json!({"pattern": "x", "path": "missing/dir"}),
            "does not exist",
        ),
        (
            "Grep",
            json!({"pattern": "x", "head_limit": 0}),
            "at least 1",
        ),
    ] {
        let out = kit.call(tool, input.clone()).await;
        assert!(out.is_error, "{tool} {input}: {}", text(&out));
        assert!(text(&out).contains(says), "{tool} {input}: {}", text(&out));
    }
}

/// Grep cuts long matching lines on character boundaries.
#[tokio::test]
async fn grep_cuts_long_multibyte_lines_cleanly() {
    let kit = Kit::new();
    kit.write("wide.txt", &format!("needle {}\n", "€".repeat(3000)));
    let out = kit
        .call(
            "Grep",
            json!({"pattern": "needle", "output_mode": "content"}),
        )
        .await;
    let t = text(&out);
    assert!(!out.is_error, "{t}");
    assert!(!t.contains('\u{FFFD}'));
    assert!(t.contains("[line cut: 2507 more chars]"), "{t}");
}

/// Extreme numbers are answered, never a panic or an overflow.
#[tokio::test]
async fn extreme_numbers_are_handled() {
    let kit = tree();
    let max = u64::MAX;
    for (tool, input) in [
        (
            "Grep",
            json!({"pattern": "needle", "output_mode": "content", "-A": max, "-B": max, "head_limit": max}),
        ),
        (
            "Grep",
            json!({"pattern": "needle", "output_mode": "content", "-C": max}),
        ),
        (
            "Read",
            json!({"file_path": "old.rs", "offset": max, "limit": max}),
        ),
        (
            "Read",
            json!({"file_path": "old.rs", "offset": 1, "limit": max}),
        ),
    ] {
        let out = kit.call(tool, input.clone()).await;
        assert!(!text(&out).is_empty(), "{tool} {input}");
    }
}
