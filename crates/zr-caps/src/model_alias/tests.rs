//! The alias table per provider, overrides, and ids that are no alias.

use super::*;

fn id(text: &str) -> ModelChoice {
    ModelChoice::parse(text)
}

#[test]
fn anthropic_maps_every_builtin_alias_to_its_id() {
    let aliases = ModelAliases::for_family(ModelFamily::Anthropic);
    for row in MODEL_ALIASES {
        let choice = id(row.alias);
        assert_eq!(aliases.resolve(&choice), ModelResolution::Id(row.anthropic));
    }
    assert_eq!(
        aliases.model_for(&id("haiku"), "parent"),
        "claude-haiku-4-5"
    );
    assert_eq!(aliases, ModelAliases::default());
}

#[test]
fn an_openai_compatible_provider_maps_no_claude_alias() {
    let aliases = ModelAliases::for_family(ModelFamily::OpenAiCompatible);
    let sonnet = id("sonnet");
    assert_eq!(
        aliases.resolve(&sonnet),
        ModelResolution::Unmapped { alias: "sonnet" }
    );
    assert_eq!(
        aliases.model_for(&sonnet, "gpt-4.1"),
        "gpt-4.1",
        "the parent's model"
    );
}

#[test]
fn inherit_and_plain_ids_pass_through() {
    let aliases = ModelAliases::default();
    assert_eq!(aliases.resolve(&id("inherit")), ModelResolution::Inherit);
    assert_eq!(aliases.model_for(&id("inherit"), "m"), "m");
    let exact = id("claude-sonnet-4-5-20250929");
    assert_eq!(
        aliases.resolve(&exact),
        ModelResolution::Id("claude-sonnet-4-5-20250929")
    );
}

#[test]
fn overrides_replace_and_add_on_every_provider() {
    let mut aliases = ModelAliases::for_family(ModelFamily::OpenAiCompatible);
    aliases.set("sonnet", "qwen3-coder");
    aliases.set("fast", "gpt-4.1-mini");
    assert_eq!(aliases.model_for(&id("sonnet"), "p"), "qwen3-coder");
    assert_eq!(aliases.model_for(&id("fast"), "p"), "gpt-4.1-mini");
    assert_eq!(aliases.model_for(&id("opus"), "p"), "p");
}
