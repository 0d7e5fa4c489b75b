//! `zr skills` and `zr skills show NAME`: the skills the project loads
//! (its folders and the user's) and the files that are broken.

use serde_json::{Value, json};
use zr_skills::Skill;
use zr_types::SkillBody;

use super::{diagnostic_json, json_text, print_diagnostics, shown, summary, table};
use crate::cli::{Format, ShowCommand, SkillsArgs};
use crate::error::{CliError, EXIT_OK};
use crate::project::Project;

/// `zr skills [show NAME]`.
///
/// # Errors
///
/// [`CliError::Usage`] when `show` names no loaded skill (a broken file or
/// an unknown name), [`CliError::Io`] when its `SKILL.md` cannot be read.
pub(crate) fn run(project: &Project, args: &SkillsArgs) -> Result<u8, CliError> {
    match &args.command {
        None => {
            print!("{}", list(project, args.format));
            if args.format == Format::Table {
                print_diagnostics(project, project.skills_view.diagnostics());
            }
        }
        Some(ShowCommand::Show { name }) => print!("{}", show(project, name, args.format)?),
    }
    Ok(EXIT_OK)
}

fn list(project: &Project, format: Format) -> String {
    let skills = project.skills_view.skills();
    match format {
        Format::Table => {
            let rows: Vec<Vec<String>> = skills
                .iter()
                .map(|s| {
                    vec![
                        s.name().to_string(),
                        format!("{} {}", s.root.scope, shown(project, &s.root.path)),
                        shown(project, s.folder()),
                        summary(&s.definition.description, 60),
                    ]
                })
                .collect();
            table(&["NAME", "SOURCE", "FOLDER", "DESCRIPTION"], &rows)
        }
        Format::Json => {
            let skills: Vec<Value> = skills.iter().map(|s| fields(project, s)).collect();
            let diagnostics: Vec<Value> = project
                .skills_view
                .diagnostics()
                .iter()
                .map(|d| diagnostic_json(d, project))
                .collect();
            json_text(&json!({"skills": skills, "diagnostics": diagnostics}))
        }
    }
}

/// The front matter and where the skill is, as JSON.
fn fields(project: &Project, s: &Skill) -> Value {
    json!({
        "name": s.name().to_string(),
        "description": s.definition.description,
        "source": s.root.scope.to_string(),
        "root": shown(project, &s.root.path),
        "folder": shown(project, s.folder()),
        "file": shown(project, s.file()),
        "allowed_tools": s.definition.allowed_tools,
        "license": s.license,
        "metadata": s.metadata,
        "other": s.extras,
    })
}

/// The text after the front matter (`---` ... `---`), without the blank
/// lines that start it.
pub(super) fn body_of(text: &str) -> &str {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    if lines.next().map(str::trim_end) != Some("---") {
        return text;
    }
    let mut offset = text.find('\n').map_or(text.len(), |i| i + 1);
    for line in lines {
        offset += line.len();
        if line.trim_end() == "---" {
            return text[offset..].trim_start_matches(['\n', '\r']);
        }
    }
    ""
}

fn show(project: &Project, name: &str, format: Format) -> Result<String, CliError> {
    let Some(skill) = project.skills_view.get(name) else {
        return Err(not_found(project, name));
    };
    let body = match &skill.definition.body {
        SkillBody::Inline(text) => text.clone(),
        SkillBody::File(path) => {
            let text = std::fs::read_to_string(path).map_err(|source| CliError::Io {
                action: "read skill file",
                path: path.clone(),
                source,
            })?;
            body_of(&text).to_owned()
        }
    };
    let own: Vec<_> = project
        .skills_view
        .diagnostics()
        .iter()
        .filter(|d| d.path == skill.file())
        .collect();
    Ok(match format {
        Format::Table => {
            print_diagnostics(project, own.iter().copied());
            let d = &skill.definition;
            let mut out = format!("skill {}\n", d.name);
            out.push_str(&format!(
                "  source: {} ({})\n",
                shown(project, &skill.root.path),
                skill.root.scope
            ));
            out.push_str(&format!("  file: {}\n", shown(project, skill.file())));
            out.push_str(&format!("  description: {:?}\n", d.description));
            match &d.allowed_tools {
                None => out.push_str("  allowed tools: unset\n"),
                Some(tools) => out.push_str(&format!("  allowed tools: {}\n", tools.join(", "))),
            }
            match &skill.license {
                None => out.push_str("  license: unset\n"),
                Some(license) => out.push_str(&format!("  license: {license:?}\n")),
            }
            for (key, value) in &skill.metadata {
                out.push_str(&format!("  metadata {key}: {value:?}\n"));
            }
            for (key, value) in &skill.extras {
                out.push_str(&format!("  other {key}: {value}\n"));
            }
            out.push_str("  body:\n");
            for line in body.lines() {
                if line.is_empty() {
                    out.push_str("  |\n");
                } else {
                    out.push_str(&format!("  | {line}\n"));
                }
            }
            out
        }
        Format::Json => {
            let mut value = fields(project, skill);
            value["body"] = Value::String(body);
            value["diagnostics"] = own.iter().map(|d| diagnostic_json(d, project)).collect();
            json_text(&value)
        }
    })
}

/// No loaded skill `name`: its file is broken, or there is none.
fn not_found(project: &Project, name: &str) -> CliError {
    let names: Vec<String> = project
        .skills_view
        .skills()
        .iter()
        .map(|s| s.name().to_string())
        .collect();
    super::not_found(
        project,
        "skill",
        name,
        &names,
        project.skills_view.diagnostics(),
        &format!(".zr/skills/{name}/SKILL.md"),
    )
}
