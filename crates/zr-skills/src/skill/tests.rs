//! Unit tests of `SKILL.md` front-matter rules, and the no-panic property.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use proptest::prelude::*;

use super::*;
use crate::diagnostic::Severity;
use crate::roots::Scope;
use crate::stamp::front_matter_prefix;

fn root() -> Root {
    Root::new(Scope::Project, "/p/.zr/skills")
}

fn parse(folder: &str, text: &str) -> (Option<Skill>, Vec<Diagnostic>) {
    let file = format!("/p/.zr/skills/{folder}/SKILL.md");
    parse_skill(Path::new(&file), folder, text, &root())
}

fn errors(folder: &str, text: &str) -> Vec<String> {
    let (skill, diagnostics) = parse(folder, text);
    assert!(skill.is_none(), "{text:?} should not load");
    diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| format!("{}: {}", d.line.unwrap_or(0), d.problem))
        .collect()
}

#[test]
fn a_valid_skill_becomes_a_definition() {
    let text = "---\nname: pdf-tools\ndescription: Fill PDF forms.\nallowed-tools: Read, Bash(python fill.py:*)\nlicense: MIT\nmetadata:\n  version: 1.2\n  author: me\n---\nbody";
    let (skill, diagnostics) = parse("pdf-tools", text);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let skill = skill.unwrap();
    let d = &skill.definition;
    assert_eq!(d.name.as_str(), "pdf-tools");
    assert_eq!(d.description, "Fill PDF forms.");
    assert_eq!(
        d.allowed_tools.as_deref().unwrap(),
        ["Read", "Bash(python fill.py:*)"]
    );
    assert_eq!(
        d.root.as_deref(),
        Some(Path::new("/p/.zr/skills/pdf-tools"))
    );
    assert_eq!(
        d.body,
        SkillBody::File("/p/.zr/skills/pdf-tools/SKILL.md".into())
    );
    assert_eq!(skill.license.as_deref(), Some("MIT"));
    assert_eq!(skill.metadata["version"], "1.2");
    assert_eq!(skill.metadata["author"], "me");
}

#[test]
fn name_rules() {
    let with = |folder: &str, name: &str| {
        parse(folder, &format!("---\nname: {name}\ndescription: d\n---\n"))
    };
    assert!(with("a1-b2", "a1-b2").0.is_some());
    let longest = "a".repeat(64);
    assert!(with(&longest, &longest).0.is_some());
    for bad in [
        "Pdf",
        "pdf_tools",
        "-pdf",
        "pdf-",
        "pdf--x",
        "'../x'",
        "'a/b'",
        "'x y'",
    ] {
        let (skill, diagnostics) = with("x", bad);
        assert!(skill.is_none(), "{bad}");
        assert!(
            matches!(diagnostics[0].problem, Problem::InvalidName { .. }),
            "{bad}: {diagnostics:?}"
        );
        assert_eq!(diagnostics[0].line, Some(2));
    }
    let too_long = "a".repeat(65);
    let (_, diagnostics) = with(&too_long, &too_long);
    assert!(
        diagnostics[0].problem.to_string().contains("at most 64"),
        "{diagnostics:?}"
    );
    // A name that differs from its folder loads under the name, warned.
    let (skill, diagnostics) = with("pdf", "docx");
    assert_eq!(skill.unwrap().name().as_str(), "docx");
    let shown: Vec<String> = diagnostics
        .iter()
        .map(|d| format!("{} {}: {}", d.severity, d.line.unwrap_or(0), d.problem))
        .collect();
    assert_eq!(
        shown,
        [
            "warning 2: 'name' is 'docx' but the folder is 'pdf'; the skill loads as 'docx'; rename the folder or the name so that they match"
        ]
    );
}

#[test]
fn an_unquoted_colon_in_the_description_loads_with_a_warning() {
    let (skill, diagnostics) = parse(
        "pdf",
        "---\nname: pdf\ndescription: Use when: the user has a PDF\n---\n",
    );
    assert_eq!(
        skill.unwrap().definition.description,
        "Use when: the user has a PDF"
    );
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert_eq!(diagnostics[0].severity, Severity::Warning);
    assert_eq!(diagnostics[0].line, Some(3));
    assert!(
        diagnostics[0]
            .problem
            .to_string()
            .ends_with("quote it: description: \"Use when: the user has a PDF\""),
        "{}",
        diagnostics[0].problem
    );
}

#[test]
fn description_rules() {
    let ok = format!(
        "---\nname: a\ndescription: {}\n---\n",
        "d".repeat(MAX_DESCRIPTION)
    );
    assert!(parse("a", &ok).0.is_some());
    let long = format!(
        "---\nname: a\ndescription: {}\n---\n",
        "é".repeat(MAX_DESCRIPTION + 1)
    );
    assert_eq!(
        errors("a", &long),
        ["3: 'description' is 1025 characters long; at most 1024 are allowed: shorten it"]
    );
    assert_eq!(
        errors("a", "---\nname: a\n---\n"),
        [
            "1: required key 'description' is missing or empty; add 'description: <what the skill does and when to use it>'"
        ]
    );
    assert_eq!(
        errors("a", "---\nname: a\ndescription: '  '\n---\n")[0],
        "3: required key 'description' is missing or empty; add 'description: <what the skill does and when to use it>'"
    );
}

#[test]
fn wrong_types_name_the_key_and_line_and_all_are_reported() {
    let text = "---\nname: 7\ndescription: [a]\nallowed-tools: {a: 1}\nlicense: true\nmetadata: [x]\n---\n";
    assert_eq!(
        errors("a", text),
        [
            "2: 'name' must be a string, found the number 7",
            "3: 'description' must be a string, found a list",
            "4: 'allowed-tools' must be a list of tool names or one string of them separated by commas or spaces, found a mapping",
            "5: 'license' must be a string (a license name or the file that holds it), found the boolean true",
            "6: 'metadata' must be a mapping of names to text values, found a list",
        ]
    );
    assert_eq!(
        errors(
            "a",
            "---\nname: a\ndescription: d\nmetadata:\n  k: [1]\n---\n"
        ),
        ["4: 'metadata' must be a mapping of names to text values, found a list under 'k'"]
    );
    assert_eq!(
        errors(
            "a",
            "---\nname: a\ndescription: d\nallowed-tools: [Read, 3]\n---\n"
        )
        .len(),
        1
    );
}

#[test]
fn structural_errors_use_skill_wording() {
    assert_eq!(
        errors("a", "name: a\n"),
        [
            "1: SKILL.md must start with a line '---' that opens the YAML front matter (name, description), followed by a closing '---' and the instructions"
        ]
    );
    assert!(errors("a", "---\nname: a\n")[0].contains("never closed"));
    let bad_yaml = errors("a", "---\nname: a\ndescription: [unclosed\n---\n");
    assert!(bad_yaml[0].contains("invalid YAML"), "{bad_yaml:?}");
    assert!(errors("a", "---\n- a\n---\n")[0].contains("found a list"));
}

#[test]
fn unknown_keys_warn_and_known_foreign_keys_are_kept_quietly() {
    let text = "---\nname: a\ndescription: d\nargument-hint: '[file]'\ncolour: red\n---\n";
    let (skill, diagnostics) = parse("a", text);
    let skill = skill.unwrap();
    assert_eq!(skill.extras.len(), 2);
    assert_eq!(diagnostics.len(), 1);
    assert_eq!(diagnostics[0].severity, Severity::Warning);
    assert_eq!(diagnostics[0].line, Some(5));
    assert!(
        diagnostics[0]
            .problem
            .to_string()
            .contains("unknown key 'colour'")
    );
}

#[test]
fn allowed_tools_strings_split_on_commas_and_spaces_outside_parentheses() {
    assert_eq!(split_tools("Read Grep"), ["Read", "Grep"]);
    assert_eq!(split_tools(" Read,Grep ,, Glob"), ["Read", "Grep", "Glob"]);
    assert_eq!(
        split_tools("Bash(git add:*) Bash(git commit:*), Read"),
        ["Bash(git add:*)", "Bash(git commit:*)", "Read"]
    );
    assert!(split_tools("  ").is_empty());
    assert_eq!(split_tools("a) b"), ["a)", "b"]);
}

#[test]
fn the_prefix_reader_stops_at_the_closing_fence() {
    let text = "---\nname: a\n---\nbody that is never read\n";
    assert_eq!(
        front_matter_prefix(text.as_bytes()).unwrap(),
        "---\nname: a\n---\n"
    );
    assert_eq!(
        front_matter_prefix("no fence\nmore".as_bytes()).unwrap(),
        "no fence\n"
    );
    assert_eq!(
        front_matter_prefix("---\nopen".as_bytes()).unwrap(),
        "---\nopen"
    );
    assert_eq!(
        front_matter_prefix(&b"---\nname: \xff\n---\n"[..]).unwrap_err(),
        Problem::NotUtf8
    );
    let huge = format!("---\n{}", "a: b\n".repeat(20_000));
    assert!(matches!(
        front_matter_prefix(huge.as_bytes()).unwrap_err(),
        Problem::FrontMatterTooLong { .. }
    ));
    assert_eq!(
        front_matter_prefix("\u{feff}---\r\nname: a\r\n---\r\nb".as_bytes()).unwrap(),
        "\u{feff}---\r\nname: a\r\n---\r\n"
    );
    // A byte-order mark only counts before the first line: a later line
    // starting with one is not a fence (it used to end the read early).
    let text = "---\n\u{feff}---\nname: a\n---\nbody\n";
    assert_eq!(
        front_matter_prefix(text.as_bytes()).unwrap(),
        "---\n\u{feff}---\nname: a\n---\n"
    );
}

fn mostly_front_matter() -> impl Strategy<Value = Vec<u8>> {
    let line = prop_oneof![
        Just(b"name: a".to_vec()),
        Just(b"description: d".to_vec()),
        Just(b"allowed-tools: [Read, {x: 1}]".to_vec()),
        Just(b"metadata: {a: [1, .nan]}".to_vec()),
        Just(b"license: ~".to_vec()),
        Just(b"---".to_vec()),
        Just(b"\xef\xbb\xbf---\r".to_vec()),
        Just(b"--- \t\r".to_vec()),
        Just(b"----".to_vec()),
        Just(b"description: |".to_vec()),
        Just(b"  \xc3\xa9\r".to_vec()),
        proptest::collection::vec(any::<u8>(), 0..24),
    ];
    // The opening fence as editors write it: plain, with a byte-order mark,
    // CRLF, trailing blanks, or broken.
    let opening = prop_oneof![
        Just(b"---\n".to_vec()),
        Just(b"\xef\xbb\xbf---\r\n".to_vec()),
        Just(b"---  \r\n".to_vec()),
        Just(b"--\n".to_vec()),
        Just(b"\xef\xbb".to_vec()),
    ];
    (opening, proptest::collection::vec(line, 0..8)).prop_map(|(opening, lines)| {
        let mut out = opening;
        out.extend(lines.join(&b'\n'));
        out
    })
}

proptest! {
    /// The front-matter reader and the skill rules never panic, whatever
    /// the bytes; every diagnostic names the file and a line from 1.
    #[test]
    fn prop_front_matter_never_panics_on_arbitrary_bytes(
        bytes in prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..256),
            mostly_front_matter(),
        ]
    ) {
        match front_matter_prefix(&bytes[..]) {
            Err(problem) => prop_assert!(
                matches!(problem, Problem::NotUtf8 | Problem::FrontMatterTooLong { .. }),
                "{problem:?}"
            ),
            Ok(text) => {
                let (skill, diagnostics) = parse("a", &text);
                for d in &diagnostics {
                    prop_assert!(d.line.is_some_and(|l| l >= 1), "{d:?}");
                    prop_assert!(d.to_string().starts_with("/p/.zr/skills/a/SKILL.md:"), "{d}");
                }
                if let Some(skill) = skill {
                    prop_assert_eq!(skill.name().as_str(), "a");
                    prop_assert!(!skill.definition.description.is_empty());
                }
            }
        }
        // The whole-text parser, on the lossy text, never panics either.
        let _ = zr_caps::parse_front_matter(Path::new("x.md"), &String::from_utf8_lossy(&bytes));
    }
}

proptest! {
    /// Reading only up to the closing fence loses nothing: the prefix's
    /// front matter is the whole file's (same keys, values and lines, or
    /// the same error at the same line).
    #[test]
    fn prop_the_prefix_has_the_whole_files_front_matter(bytes in mostly_front_matter()) {
        let Ok(whole) = std::str::from_utf8(&bytes) else {
            return Ok(());
        };
        let prefix = front_matter_prefix(&bytes[..]).unwrap();
        let path = Path::new("x.md");
        let keys = |text: &str| {
            zr_caps::parse_front_matter(path, text)
                .map(|fm| fm.entries)
                .map_err(|e| (e.line, e.problem))
        };
        prop_assert_eq!(keys(&prefix), keys(whole), "prefix {:?}", prefix);
    }
}
