//! Claude Code's settings files: what is read from each, the merge, and
//! every mistake at its file, line and column.

use super::*;

/// A project folder and a home folder, with the files given.
struct Folders {
    dir: tempfile::TempDir,
}

impl Folders {
    fn new() -> Self {
        let folders = Self {
            dir: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir_all(folders.dir.path().join("home")).unwrap();
        std::fs::create_dir_all(folders.dir.path().join("p")).unwrap();
        folders
    }

    fn write(&self, rel: &str, text: &str) -> &Self {
        let path = self.dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        self
    }

    fn load(&self) -> Result<ClaudeSettings, CliError> {
        ClaudeSettings::load(
            &self.dir.path().join("p"),
            Some(&self.dir.path().join("home")),
        )
    }
}

fn texts<T: ToString>(list: &[Located<T>]) -> Vec<String> {
    list.iter().map(|l| l.value.to_string()).collect()
}

#[test]
fn every_file_is_read_and_merged_user_then_project_then_local() {
    let f = Folders::new();
    f.write(
        "home/.claude/settings.json",
        r#"{"permissions": {"allow": ["Bash(git status)"], "defaultMode": "plan"},
            "env": {"A": "user", "B": "user"}, "model": "haiku"}"#,
    )
    .write(
        "p/.claude/settings.json",
        r#"{"permissions": {"deny": ["Read(./.env)"], "defaultMode": "acceptEdits",
                            "additionalDirectories": ["../shared"]},
            "env": {"B": "project", "N": 3}, "model": "opus"}"#,
    )
    .write(
        "p/.claude/settings.local.json",
        r#"{"permissions": {"allow": ["Bash(npm run test:*)"]}, "env": {"B": "local"}}"#,
    );
    let s = f.load().unwrap();
    assert_eq!(
        texts(&s.allow),
        ["Bash(git status)", "Bash(npm run test:*)"]
    );
    assert_eq!(texts(&s.deny), ["Read(./.env)"]);
    assert_eq!(s.mode().unwrap().value, PermissionMode::AcceptEdits);
    assert_eq!(s.model().unwrap().value, "opus");
    assert_eq!(s.var("A").as_deref(), Some("user"));
    assert_eq!(s.var("B").as_deref(), Some("local"));
    assert_eq!(s.var("N").as_deref(), Some("3"));
    assert_eq!(s.additional_directories[0].value, "../shared");
    let deny = &s.deny[0].origin;
    assert_eq!(
        (deny.scope, deny.line, deny.column, deny.key.as_str()),
        (Scope::Project, 1, 27, "permissions.deny[0]")
    );
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
}

#[test]
fn no_file_is_no_settings() {
    let s = Folders::new().load().unwrap();
    assert!(s.allow.is_empty() && s.env.is_empty() && s.hooks.is_empty());
    assert_eq!(s.files.len(), 3);
    assert!(s.files.iter().all(|f| !f.found));
}

#[test]
fn hooks_take_zr_tomls_shape_and_later_events_are_kept_with_a_warning() {
    let f = Folders::new();
    f.write(
        "p/.claude/settings.json",
        r#"{
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh", "timeout": 10}]},
      {"hooks": [{"type": "prompt", "prompt": "is it safe?"}, {"type": "command", "command": "log", "timeout": 0.5}]}
    ],
    "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "date"}]}],
    "PermissionRequest": [{"hooks": [{"type": "command", "command": "date"}]}]
  }
}"#,
    );
    let s = f.load().unwrap();
    let events: Vec<&str> = s.hooks.iter().map(|h| h.event.as_str()).collect();
    assert_eq!(
        events,
        [
            "PermissionRequest",
            "PreToolUse",
            "PreToolUse",
            "UserPromptSubmit"
        ]
    );
    let first = &s.hooks[1].group;
    assert_eq!(first.matcher.as_deref(), Some("Bash"));
    assert_eq!(
        (first.hooks[0].command.as_str(), first.hooks[0].timeout),
        ("./check.sh", Some(10))
    );
    // The prompt hook is left out; half a second is one.
    assert_eq!(s.hooks[2].group.hooks.len(), 1);
    assert_eq!(s.hooks[2].group.hooks[0].timeout, Some(1));
    assert_eq!(s.warnings.len(), 2, "{:#?}", s.warnings);
    assert!(s.warnings[0].contains(":5:"), "{}", s.warnings[0]);
    assert!(s.warnings[0].contains("\"prompt\""), "{}", s.warnings[0]);
    assert!(
        s.warnings[1].contains("zr does not run PermissionRequest hooks yet"),
        "{}",
        s.warnings[1]
    );
    // Only the events zr runs reach the hooks it installs.
    let merged = s.add_hooks(&HooksConfig::default());
    assert_eq!(merged.pre_tool_use.len(), 2);
    assert_eq!(merged.stop.len(), 0);
}

#[test]
fn disable_all_hooks_turns_the_files_hooks_off() {
    let f = Folders::new();
    f.write(
        "p/.claude/settings.json",
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}}"#,
    )
    .write(
        "p/.claude/settings.local.json",
        r#"{"disableAllHooks": true}"#,
    );
    let s = f.load().unwrap();
    assert!(s.hooks_disabled());
    assert!(s.add_hooks(&HooksConfig::default()).stop.is_empty());
}

/// The errors of `text` as `project settings`, one line each:
/// `LINE:COLUMN KEY: MESSAGE`.
fn errors(text: &str) -> Vec<String> {
    let f = Folders::new();
    f.write("p/.claude/settings.json", text);
    f.load()
        .unwrap_err()
        .into_list()
        .into_iter()
        .map(|e| match e {
            CliError::Config {
                line,
                column,
                key,
                message,
                ..
            } => format!("{line}:{column} {key}: {message}"),
            other => panic!("{other:?}"),
        })
        .collect()
}

#[test]
fn a_syntax_error_names_its_line_and_column() {
    assert_eq!(
        errors("{\n  \"permissions\": {\"allow\": [\"Bash\",]}\n}"),
        ["2:36 : invalid JSON: trailing comma"]
    );
}

#[test]
fn every_mistake_is_reported_at_its_place() {
    let text = r#"{
  "permissions": {
    "allow": ["Bash(", 3],
    "defaultMode": "acceptEdit"
  },
  "env": {"OK": "1", "BAD": ["x"]},
  "model": 4,
  "hooks": {"Stop": [{"matcher": "(", "hooks": []}, {"hooks": [{"type": "command"}]}]}
}"#;
    let found = errors(text);
    let first_lines: Vec<&str> = found.iter().map(|e| e.lines().next().unwrap()).collect();
    assert_eq!(
        first_lines,
        [
            "3:15 permissions.allow[0]: 'Bash(': permission rule 'Bash(' has unbalanced parentheses; write 'Tool(specifier)' with one closing ')' at the end",
            "3:24 permissions.allow[1]: expected a string, found the number 3",
            "4:5 permissions.defaultMode: unknown permission mode \"acceptEdit\"",
            "6:22 env.BAD: expected a string, found a list",
            "7:3 model: expected a model name, found the number 4",
            "8:23 hooks.Stop[0].matcher: the matcher is not a regular expression: regex parse error:",
            "8:64 hooks.Stop[1].hooks[0].command: the command is empty",
        ]
    );
}

#[test]
fn unknown_keys_are_warnings_and_claude_codes_own_are_listed() {
    let f = Folders::new();
    f.write(
        "p/.claude/settings.json",
        r#"{"$schema": "https://json.schemastore.org/claude-code-settings.json",
 "statusLine": {"type": "command", "command": "x"},
 "permisions": {},
 "permissions": {"disableBypassPermissionsMode": "disable", "alow": []}}"#,
    );
    let s = f.load().unwrap();
    let ignored: Vec<&str> = s.ignored.iter().map(|k| k.value.as_str()).collect();
    assert_eq!(
        ignored,
        [
            "$schema",
            "statusLine",
            "permissions.disableBypassPermissionsMode"
        ],
        "in the file's order"
    );
    assert_eq!(s.warnings.len(), 2, "{:#?}", s.warnings);
    assert!(
        s.warnings[0].contains(":3:2: permisions: unknown key `permisions`")
            && s.warnings[0].contains("did you mean `permissions`?"),
        "{}",
        s.warnings[0]
    );
    assert!(
        s.warnings[1].contains("did you mean `allow`?"),
        "{}",
        s.warnings[1]
    );
}

#[test]
fn claude_code_tool_names_are_read_as_zrs() {
    let f = Folders::new();
    f.write(
        "p/.claude/settings.json",
        r#"{"permissions": {"allow": ["MultiEdit(src/**)", "NotebookEdit", "Agent(explore)"]}}"#,
    );
    let s = f.load().unwrap();
    assert_eq!(texts(&s.allow), ["Edit(src/**)", "Task(explore)"]);
    assert_eq!(s.rule_entries.len(), 3);
}

#[test]
fn the_project_folder_as_home_reads_its_settings_once() {
    let f = Folders::new();
    f.write(
        "p/.claude/settings.json",
        r#"{"permissions": {"deny": ["Bash"]}}"#,
    );
    let p = f.dir.path().join("p");
    let s = ClaudeSettings::load(&p, Some(&p)).unwrap();
    assert_eq!(texts(&s.deny), ["Bash"]);
    assert_eq!(s.deny[0].origin.scope, Scope::User);
}
