//! C6: every `fixtures/agents/*.md` parsed, snapshot of the result or error.

use std::fmt::Write as _;

use zr_caps::{ParsedAgentFile, parse_agent_file};

fn render(file: &ParsedAgentFile) -> String {
    let mut out = file.definition.to_string();
    let show = |v: &Option<String>| {
        v.as_deref()
            .map_or("unset".to_owned(), |s| format!("{s:?}"))
    };
    writeln!(out, "color: {}", show(&file.color)).unwrap();
    writeln!(out, "memory: {}", show(&file.memory)).unwrap();
    for server in &file.inline_servers {
        writeln!(
            out,
            "inline server (line {}): {} = {}",
            server.line, server.name, server.config
        )
        .unwrap();
    }
    writeln!(
        out,
        "extras:{}",
        if file.extras.is_empty() { " none" } else { "" }
    )
    .unwrap();
    for extra in &file.extras {
        writeln!(
            out,
            "  line {}: {} = {}",
            extra.line, extra.key, extra.value
        )
        .unwrap();
    }
    writeln!(
        out,
        "warnings:{}",
        if file.warnings.is_empty() {
            " none"
        } else {
            ""
        }
    )
    .unwrap();
    for warning in &file.warnings {
        writeln!(out, "  {warning}").unwrap();
    }
    out
}

#[test]
fn agent_files() {
    insta::glob!("../fixtures/agents", "*.md", |path| {
        let text = std::fs::read_to_string(path).unwrap();
        let name = crate::relative(path);
        let shown = match parse_agent_file(std::path::Path::new(&name), &text) {
            Ok(file) => render(&file),
            Err(err) => {
                assert!(err.to_string().starts_with(&format!("{name}:")), "{err}");
                format!("error: {err}\n")
            }
        };
        insta::assert_snapshot!(shown);
    });
}
