//! `[model.aliases]`, the family per provider and the load-time warning.

use super::*;

fn load(files: &[(&str, &str)]) -> (tempfile::TempDir, Project) {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let project = Project::load(dir.path().to_path_buf()).unwrap();
    (dir, project)
}

const FAST: &str = "---\nname: fast\ndescription: Quick looks.\nmodel: haiku\n---\nBe quick.\n";

#[test]
fn zr_toml_adds_and_overrides_aliases_on_every_provider() {
    let (_dir, project) = load(&[(
        "zr.toml",
        "[model.aliases]\nhaiku = \"qwen3-small\"\nbig = \"qwen3-large\"\n",
    )]);
    for family in [ModelFamily::Anthropic, ModelFamily::OpenAiCompatible] {
        let aliases = table(&project, family).unwrap();
        assert_eq!(aliases.get("haiku"), Some("qwen3-small"));
        assert_eq!(aliases.get("big"), Some("qwen3-large"));
    }
    let anthropic = table(&project, ModelFamily::Anthropic).unwrap();
    assert_eq!(anthropic.get("sonnet"), Some("claude-sonnet-4-5"));
}

#[test]
fn a_blank_id_names_file_line_and_key() {
    let (_dir, project) = load(&[(
        "zr.toml",
        "[model]\nname = \"m\"\n\n[model.aliases]\nopus = \" \"\n",
    )]);
    let error = table(&project, ModelFamily::Anthropic)
        .unwrap_err()
        .to_string();
    assert!(error.contains("zr.toml:5:1"), "{error}");
    assert!(error.contains("model.aliases.opus"), "{error}");
}

#[test]
fn an_alias_the_provider_cannot_serve_warns_with_file_and_line() {
    let (_dir, project) = load(&[(".zr/agents/fast.md", FAST)]);
    let openai = table(&project, family(Some(ProviderKind::Openai))).unwrap();
    let lines = warnings(&project, &project.agents, &openai);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with("warning: .zr/agents/fast.md:4: model 'haiku' is a Claude alias with no id on this provider; agent 'fast' runs on the session's model"),
        "{}",
        lines[0]
    );
    let anthropic = table(&project, family(Some(ProviderKind::Anthropic))).unwrap();
    assert_eq!(
        warnings(&project, &project.agents, &anthropic),
        Vec::<String>::new()
    );
    let fast = project.agents.get("fast").unwrap();
    assert_eq!(shown(&anthropic, &fast.definition), "claude-haiku-4-5");
    assert_eq!(shown(&openai, &fast.definition), "inherit (alias unmapped)");
}

#[test]
fn the_assumed_provider_is_zr_tomls_then_the_environments() {
    let (_dir, project) = load(&[]);
    let none = |_: &str| None;
    assert_eq!(assumed_kind(&project, &none), None);
    let openai = |v: &str| (v == "OPENAI_BASE_URL").then(|| "http://x".to_owned());
    assert_eq!(assumed_kind(&project, &openai), Some(ProviderKind::Openai));
    let (_dir, project) = load(&[("zr.toml", "[model]\nprovider = \"anthropic\"\n")]);
    assert_eq!(
        assumed_kind(&project, &openai),
        Some(ProviderKind::Anthropic)
    );
}

#[test]
fn small_is_haiku_on_anthropic_a_mini_model_on_openais_own_api_and_none_elsewhere() {
    let (_dir, project) = load(&[]);
    let anthropic = table(&project, ModelFamily::Anthropic).unwrap();
    assert_eq!(anthropic.get("small"), Some("claude-haiku-4-5"));
    let openai = table(&project, ModelFamily::OpenAiCompatible).unwrap();
    assert_eq!(openai.get("small"), Some("gpt-4.1-mini"));
    // A server of its own has no model zr could name.
    let (_dir, project) = load(&[(
        "zr.toml",
        "[model]\nbase_url = \"http://127.0.0.1:8080/v1\"\n",
    )]);
    let local = table(&project, ModelFamily::OpenAiCompatible).unwrap();
    assert_eq!(local.get("small"), None);
}

#[test]
fn claude_codes_variables_map_the_aliases_and_zr_toml_wins() {
    // Through the settings files' env, as a gateway's users write them.
    let settings = r#"{"env": {"ANTHROPIC_DEFAULT_HAIKU_MODEL": "glm-air", "ANTHROPIC_DEFAULT_OPUS_MODEL": "glm-big"}}"#;
    let (_dir, project) = load(&[(".claude/settings.json", settings)]);
    let aliases = table(&project, ModelFamily::Anthropic).unwrap();
    assert_eq!(aliases.get("haiku"), Some("glm-air"));
    assert_eq!(aliases.get("small"), Some("glm-air"));
    assert_eq!(aliases.get("opus"), Some("glm-big"));
    assert_eq!(aliases.get("sonnet"), Some("claude-sonnet-4-5"));
    let (_dir, project) = load(&[
        (".claude/settings.json", settings),
        ("zr.toml", "[model.aliases]\nsmall = \"mine\"\n"),
    ]);
    let aliases = table(&project, ModelFamily::Anthropic).unwrap();
    assert_eq!(aliases.get("small"), Some("mine"));
    assert_eq!(aliases.get("haiku"), Some("glm-air"));
    // The variables are Anthropic's: an OpenAI server ignores them.
    let openai = table(&project, ModelFamily::OpenAiCompatible).unwrap();
    assert_eq!(openai.get("haiku"), None);
}
