//! Tests of permission rules, as tables: rule text, call, verdict.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use zr_types::{ServerName, ToolDefinition, ToolName, ToolOrigin};

use super::shell::split;
use super::*;

fn builtin(name: &str) -> ToolDefinition {
    ToolDefinition::new(name.parse().unwrap(), "", ToolOrigin::Builtin)
}

fn mcp(server: &str, tool: &str) -> ToolDefinition {
    let server: ServerName = server.parse().unwrap();
    let name = ToolName::mcp(&server, tool).unwrap();
    ToolDefinition::new(name, "", ToolOrigin::Connection { server })
}

fn base() -> RuleBase<'static> {
    RuleBase {
        base: Path::new("/proj"),
        home: Some(Path::new("/home/u")),
    }
}

fn rule(text: &str) -> PermissionRule {
    text.parse()
        .unwrap_or_else(|e| panic!("{text:?} should parse: {e}"))
}

/// Whether one allow rule `text` allows `subject` for `tool`.
fn allows(text: &str, tool: &ToolDefinition, subject: &Subject<'_>) -> bool {
    let rules = PermissionRules {
        allow: vec![rule(text)],
        ..PermissionRules::default()
    };
    rules.evaluate(tool, subject, &base()).is_some()
}

#[test]
fn rules_without_specifier_match_by_tool_pattern() {
    let cases: &[(&str, ToolDefinition, bool)] = &[
        ("Bash", builtin("Bash"), true),
        ("Bash", builtin("Read"), false),
        ("*", builtin("Read"), true),
        ("Web*", builtin("WebFetch"), true),
        ("Web*", builtin("Read"), false),
        ("mcp__gh", mcp("gh", "search"), true),
        ("mcp__gh", mcp("gl", "search"), false),
        ("mcp__gh__search", mcp("gh", "search"), true),
        ("mcp__gh__search", mcp("gh", "list"), false),
        ("mcp__gh__*", mcp("gh", "list"), true),
        // A bare Read is the tool Read only, not its family.
        ("Read", builtin("Glob"), false),
    ];
    for (text, tool, expected) in cases {
        for subject in [
            Subject::Name,
            Subject::Command("ls"),
            Subject::Path(Path::new("/x")),
        ] {
            assert_eq!(
                allows(text, tool, &subject),
                *expected,
                "{text} on {} {subject:?}",
                tool.name
            );
        }
    }
}

#[test]
fn bash_specifiers_match_simple_commands() {
    let cases: &[(&str, &str, bool)] = &[
        ("Bash(npm run test:*)", "npm run test", true),
        ("Bash(npm run test:*)", "npm run test -- --watch", true),
        ("Bash(npm run test:*)", "npm run testing", false),
        ("Bash(npm run test:*)", "npm  run   test  x", true),
        ("Bash(npm run test:*)", "  npm run test  ", true),
        ("Bash(git status)", "git status", true),
        ("Bash(git status)", " git status\n", true),
        ("Bash(git status)", "git status -s", false),
        ("Bash(git status)", "git", false),
        ("Bash(npm run *)", "npm run build", true),
        ("Bash(npm run *)", "npm run", true),
        ("Bash(npm run *)", "npm runx", false),
        ("Bash(git * main)", "git push origin main", true),
        ("Bash(git * main)", "git push origin main2", false),
        ("Bash(ls *)", "ls -la", true),
        ("Bash(ls *)", "ls", true),
        ("Bash(ls *)", "lsof", false),
        ("Bash(ls*)", "lsof", true),
        ("Bash(*)", "anything at all", true),
        ("Bash(git:*)", "git log", true),
        ("Bash(git:*)", "gitk", false),
        // Assignments before a command are part of it for allow rules:
        // `LD_PRELOAD=x.so git status` is not `git status`.
        ("Bash(npm test)", "CI=1 NODE_ENV='a b' npm test", false),
        ("Bash(CI=1 npm test)", "CI=1 npm test", true),
        // Redirections are part of the command; writes are the sandbox's.
        ("Bash(echo:*)", "echo x > f", true),
        ("Bash(echo:*)", "echo x 2>&1", true),
        ("Bash(echo:*)", "echo x &> log", true),
        // Not another tool's call, not another subject.
        ("Bash(ls)", "ls", true),
    ];
    let bash = builtin("Bash");
    for (text, command, expected) in cases {
        assert_eq!(
            allows(text, &bash, &Subject::Command(command)),
            *expected,
            "{text} on {command:?}"
        );
    }
    assert!(!allows(
        "Bash(ls)",
        &builtin("Read"),
        &Subject::Command("ls")
    ));
    assert!(!allows("Bash(ls)", &bash, &Subject::Name));
}

#[test]
fn the_splitter_finds_every_simple_command() {
    let cases: &[(&str, &[&str], bool)] = &[
        (
            "a && b || c; d | e & f",
            &["a", "b", "c", "d", "e", "f"],
            true,
        ),
        ("a\nb", &["a", "b"], true),
        ("a |& b", &["a", "b"], true),
        ("echo 'x && y' \"z; w\"", &["echo 'x && y' \"z; w\""], true),
        ("echo a\\;b", &["echo a\\;b"], true),
        ("echo $(rm -rf /)", &["rm -rf /", "echo $(rm -rf /)"], true),
        (
            "echo \"$(whoami)\"",
            &["whoami", "echo \"$(whoami)\""],
            true,
        ),
        ("echo `id`", &["id", "echo `id`"], true),
        (
            "diff <(ls a) <(ls b)",
            &["ls a", "ls b", "diff <(ls a) <(ls b)"],
            true,
        ),
        ("(cd x && make) > log", &["cd x", "make", "> log"], true),
        ("X=1 Y=\"a b\" cmd arg", &["X=1 Y=\"a b\" cmd arg"], true),
        (
            "PATH=/tmp/evil; git status",
            &["PATH=/tmp/evil", "git status"],
            true,
        ),
        ("if test -f x; then rm x; fi", &["test -f x", "rm x"], true),
        ("for f in *; do rm $f; done", &["for f in *", "rm $f"], true),
        ("{ a; b; }", &["a", "b"], true),
        ("! grep -q x f", &["grep -q x f"], true),
        ("echo hi # && rm x", &["echo hi"], true),
        ("echo x >| f", &["echo x >| f"], true),
        ("git \\\n  status", &["git status"], true),
        ("", &[], true),
        ("echo 'unclosed && rm x", &["echo 'unclosed && rm x"], false),
        ("echo \"a", &["echo \"a"], false),
        ("echo $(ls", &["ls", "echo $(ls"], false),
        ("echo `ls", &["echo `ls"], false),
        ("a ) b", &["a", "b"], false),
    ];
    for (command, parts, complete) in cases {
        let got = split(command);
        assert_eq!(got.parts, *parts, "{command:?}");
        assert_eq!(got.complete, *complete, "{command:?}");
    }
}

#[test]
fn compound_commands_deny_on_any_part_and_allow_on_every_part() {
    let rules = PermissionRules {
        allow: vec![
            rule("Bash(git status)"),
            rule("Bash(git log:*)"),
            rule("Bash(echo:*)"),
        ],
        ask: vec![rule("Bash(git commit:*)")],
        deny: vec![rule("Bash(rm:*)"), rule("Bash(git push:*)")],
    };
    let bash = builtin("Bash");
    let cases: &[(&str, Option<(Verdict, &str)>)] = &[
        ("git status", Some((Verdict::Allow, "Bash(git status)"))),
        (
            "git status && git log -3",
            Some((Verdict::Allow, "Bash(git status)")),
        ),
        ("git log | echo", Some((Verdict::Allow, "Bash(git log:*)"))),
        ("git status && make", None),
        // An assignment is no `git status`: allowed only if a rule allows it.
        ("LD_PRELOAD=/x.so git status", None),
        ("PATH=/tmp/evil; git status", None),
        ("git status; rm -rf x", Some((Verdict::Deny, "Bash(rm:*)"))),
        ("echo $(rm x)", Some((Verdict::Deny, "Bash(rm:*)"))),
        ("echo `git push`", Some((Verdict::Deny, "Bash(git push:*)"))),
        (
            "FOO=1 git push origin",
            Some((Verdict::Deny, "Bash(git push:*)")),
        ),
        ("git  push", Some((Verdict::Deny, "Bash(git push:*)"))),
        (
            "git log && git commit -m x",
            Some((Verdict::Ask, "Bash(git commit:*)")),
        ),
        ("git commit -m x; rm y", Some((Verdict::Deny, "Bash(rm:*)"))),
        ("echo 'a && rm b'", Some((Verdict::Allow, "Bash(echo:*)"))),
        // Unparsable: no allow, but deny still reads it.
        ("echo 'unclosed", None),
        ("rm -rf 'x", Some((Verdict::Deny, "Bash(rm:*)"))),
        ("", None),
    ];
    for (command, expected) in cases {
        let got = rules
            .evaluate(&bash, &Subject::Command(command), &base())
            .map(|m| (m.verdict, m.rule.as_str()));
        assert_eq!(got, *expected, "{command:?}");
    }
    // A bare Bash allows whatever the text, and a bare deny denies it.
    let bare = PermissionRules {
        allow: vec![rule("Bash")],
        ..PermissionRules::default()
    };
    let got = bare.evaluate(&bash, &Subject::Command("echo 'x"), &base());
    assert_eq!(got.map(|m| m.verdict), Some(Verdict::Allow));
}

#[test]
fn path_rules_resolve_against_root_home_and_base() {
    let cases: &[(&str, &str, bool)] = &[
        ("Read(./.env)", "/proj/.env", true),
        ("Read(./.env)", "/proj/sub/.env", false),
        ("Read(.env)", "/proj/sub/.env", true),
        ("Read(.env)", "/other/.env", false),
        ("Read(/.env)", "/proj/.env", true),
        ("Read(/.env)", "/.env", false),
        ("Edit(src/**)", "/proj/src/a/b.rs", true),
        ("Edit(src/**)", "/proj/src", true),
        ("Edit(src/**)", "/proj/lib/src/a.rs", false),
        ("Edit(src)", "/proj/src/a/b.rs", true),
        ("Edit(src/)", "/proj/src/a.rs", true),
        ("Edit(src/*.rs)", "/proj/src/a.rs", true),
        ("Edit(src/*.rs)", "/proj/src/a/b.rs", false),
        ("Edit(*.rs)", "/proj/src/a/b.rs", true),
        ("Edit(src/**/*.rs)", "/proj/src/a.rs", true),
        ("Edit(src/**/*.rs)", "/proj/src/a/b/c.rs", true),
        ("Read(~/.ssh/**)", "/home/u/.ssh/id_rsa", true),
        ("Read(~/.ssh/**)", "/proj/.ssh/id_rsa", false),
        ("Read(~)", "/home/u/x/y", true),
        ("Read(//etc/**)", "/etc/passwd", true),
        ("Read(//etc/**)", "/proj/etc/passwd", false),
        ("Read(//etc/pass*)", "/etc/passwd", true),
        ("Read(**/*.pem)", "/proj/a/b/k.pem", true),
        ("Read(*.{pem,key})", "/proj/k.key", true),
        ("Read(secret?)", "/proj/secret1", true),
        ("Read(src/**)", "relative/src/a", false),
    ];
    for (text, path, expected) in cases {
        let tool = builtin(&text[..text.find('(').unwrap()]);
        assert_eq!(
            allows(text, &tool, &Subject::Path(Path::new(path))),
            *expected,
            "{text} on {path}"
        );
    }
    // No home folder: `~` rules match nothing.
    let no_home = RuleBase {
        base: Path::new("/proj"),
        home: None,
    };
    let rules = PermissionRules {
        deny: vec![rule("Read(~/**)")],
        ..PermissionRules::default()
    };
    let subject = Subject::Path(Path::new("/home/u/a"));
    assert!(
        rules
            .evaluate(&builtin("Read"), &subject, &no_home)
            .is_none()
    );
}

#[test]
fn path_rules_apply_to_their_tool_family() {
    let path = Subject::Path(Path::new("/proj/src/a.rs"));
    let cases: &[(&str, &str, bool)] = &[
        ("Read(src/**)", "Read", true),
        ("Read(src/**)", "Glob", true),
        ("Read(src/**)", "Grep", true),
        ("Read(src/**)", "Edit", false),
        ("Edit(src/**)", "Edit", true),
        ("Edit(src/**)", "Write", true),
        ("Write(src/**)", "Edit", true),
        ("Edit(src/**)", "Read", false),
        ("Glob(src/**)", "Glob", true),
        ("Glob(src/**)", "Read", false),
        ("Grep(src/**)", "Grep", true),
    ];
    for (text, tool, expected) in cases {
        assert_eq!(
            allows(text, &builtin(tool), &path),
            *expected,
            "{text} on {tool}"
        );
    }
    // Not a path: no match.
    assert!(!allows("Read(src/**)", &builtin("Read"), &Subject::Name));
    assert!(!allows(
        "Read(src/**)",
        &builtin("Read"),
        &Subject::Command("cat src/a")
    ));
}

#[test]
fn domain_and_argument_rules() {
    let fetch = builtin("WebFetch");
    let cases: &[(&str, &str, bool)] = &[
        ("WebFetch(domain:docs.rs)", "docs.rs", true),
        ("WebFetch(domain:docs.rs)", "DOCS.rs.", true),
        ("WebFetch(domain:docs.rs)", "evil-docs.rs", false),
        ("WebFetch(domain:docs.rs)", "api.docs.rs", false),
        ("WebFetch(domain:*.example.com)", "api.example.com", true),
        ("WebFetch(domain:*.example.com)", "a.b.example.com", true),
        ("WebFetch(domain:*.example.com)", "example.com", false),
        ("WebFetch(domain:*.example.com)", "badexample.com", false),
        ("WebFetch(domain:*)", "anything.org", true),
    ];
    for (text, host, expected) in cases {
        assert_eq!(
            allows(text, &fetch, &Subject::Url { host }),
            *expected,
            "{text} on {host}"
        );
    }
    assert!(!allows("WebFetch(domain:docs.rs)", &fetch, &Subject::Name));
    let task = builtin("Task");
    assert!(allows(
        "Task(Explore)",
        &task,
        &Subject::Argument("Explore")
    ));
    assert!(!allows("Task(Explore)", &task, &Subject::Argument("Plan")));
    assert!(!allows("Task(Explore)", &task, &Subject::Name));
}

#[test]
fn deny_then_ask_then_allow() {
    let rules = PermissionRules {
        allow: vec![rule("Read")],
        ask: vec![rule("Read(src/**)")],
        deny: vec![rule("Read(./.env)")],
    };
    let read = builtin("Read");
    let cases: &[(&str, Verdict)] = &[
        ("/proj/.env", Verdict::Deny),
        ("/proj/src/a", Verdict::Ask),
        ("/proj/README.md", Verdict::Allow),
    ];
    for (path, verdict) in cases {
        let got = rules.evaluate(&read, &Subject::Path(Path::new(path)), &base());
        assert_eq!(got.map(|m| m.verdict), Some(*verdict), "{path}");
    }
    assert!(
        PermissionRules::default()
            .evaluate(&read, &Subject::Name, &base())
            .is_none()
    );
}

#[test]
fn refused_rules_say_what_is_wrong_and_how_to_write_it() {
    let cases: &[(&str, &str)] = &[
        ("", "permission rule is empty"),
        ("  ", "permission rule is empty"),
        (
            "Bash()",
            "'Bash()' has an empty specifier; write 'Bash' for every use",
        ),
        ("Bash(  )", "e.g. 'Bash(npm run test:*)'"),
        ("Read()", "e.g. 'Read(./.env)'"),
        (
            "Bash(git status",
            "'Bash(git status' has unbalanced parentheses",
        ),
        ("Bash(a) b", "unbalanced parentheses"),
        ("Bash(a))", "unbalanced parentheses"),
        ("Bash)", "unbalanced parentheses"),
        ("(ls)", "names no tool before '('"),
        (
            "mcp__gh(x)",
            "gives a specifier to 'mcp__gh', which takes none",
        ),
        ("mcp__gh__search(x)", "takes none"),
        ("Web*(x)", "takes none"),
        ("*(x)", "takes none"),
        ("Read(../x)", "climbs with '..'"),
        ("Read(src/[)", "has a bad path glob"),
        (
            "WebFetch(docs.rs)",
            "WebFetch rules name a host after 'domain:'",
        ),
        ("WebFetch(domain:)", "the host is empty"),
        ("WebFetch(domain:https://x)", "no scheme, port or path"),
        ("WebFetch(domain:a.*.b)", "write 'WebFetch(domain:docs.rs)'"),
        ("Bad Tool", "contains white space"),
    ];
    for (text, wanted) in cases {
        let err = text.parse::<PermissionRule>().unwrap_err().to_string();
        assert!(err.contains(wanted), "{text:?}: {err}");
    }
}

#[test]
fn text_display_and_serde_round_trip() {
    for text in [
        "Bash",
        "Bash(npm run test:*)",
        "Read(./.env)",
        "WebFetch(domain:docs.rs)",
        "mcp__gh",
        "Task(Explore)",
    ] {
        let r = rule(text);
        assert_eq!(r.to_string(), text);
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(json, format!("{text:?}"));
        assert_eq!(serde_json::from_str::<PermissionRule>(&json).unwrap(), r);
    }
    assert_eq!(rule("  Bash(ls)  ").as_str(), "Bash(ls)");
    let rules: PermissionRules =
        serde_json::from_str(r#"{"allow": ["Bash(git status)"], "deny": ["Read(./.env)"]}"#)
            .unwrap();
    assert_eq!(rules.allow.len(), 1);
    assert!(rules.ask.is_empty());
    let err = serde_json::from_str::<PermissionRules>(r#"{"allow": ["Bash()"]}"#).unwrap_err();
    assert!(err.to_string().contains("empty specifier"), "{err}");
}
