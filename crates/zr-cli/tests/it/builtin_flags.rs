//! One table for the builtins' flags: the resolver's default registry
//! (what `zr resolve --scenario` uses) and the definitions the engine runs
//! (zr-tools' builtins, zr-skills' `Skill`, the engine's Task, MultiTask
//! and FindTool) agree on read-only and deferred for every builtin.

use std::sync::Arc;

use zr_caps::RuntimeSettings;
use zr_engine::{Agent, AgentConfig, RuntimeEnvironment, ScriptedProvider};
use zr_skills::SkillTool;
use zr_tools::{
    AskUserService, BuiltinTools, ConfigService, ConfigSetting, Question, SearchQuery,
    SearchResult, ServiceError, UserAnswer, WebSearchService,
};
use zr_types::{BoxFuture, SkillDefinition, ToolOrigin};

/// Services that are never called: they only make the three tools that
/// need one part of the pool (a builtin without its service is in none).
#[derive(Debug)]
struct Unused;

impl WebSearchService for Unused {
    fn search<'a>(
        &'a self,
        _: SearchQuery,
    ) -> BoxFuture<'a, Result<Vec<SearchResult>, ServiceError>> {
        Box::pin(async { Err(ServiceError::NoAnswer) })
    }
}

impl AskUserService for Unused {
    fn ask<'a>(&'a self, _: Vec<Question>) -> BoxFuture<'a, Result<Vec<UserAnswer>, ServiceError>> {
        Box::pin(async { Err(ServiceError::NoAnswer) })
    }
}

impl ConfigService for Unused {
    fn settings(&self) -> Vec<ConfigSetting> {
        Vec::new()
    }
    fn get<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<serde_json::Value, ServiceError>> {
        Box::pin(async { Err(ServiceError::NoAnswer) })
    }
    fn set<'a>(
        &'a self,
        _: &'a str,
        _: serde_json::Value,
    ) -> BoxFuture<'a, Result<(), ServiceError>> {
        Box::pin(async { Err(ServiceError::NoAnswer) })
    }
}

#[test]
fn every_builtin_the_engine_runs_has_the_resolvers_flags() {
    let dir = tempfile::tempdir().unwrap();
    let settings = RuntimeSettings {
        model: "scripted".to_owned(),
        cwd: dir.path().to_path_buf(),
        env: Default::default(),
    };
    let provider = Arc::new(ScriptedProvider::new(zr_engine::Script::default()));
    let runtime = RuntimeEnvironment::new(
        provider,
        settings,
        BuiltinTools::new(dir.path().join("cron.json"))
            .with_web_search(Arc::new(Unused))
            .with_ask_user(Arc::new(Unused))
            .with_config(Arc::new(Unused)),
    )
    .with_skill_tool(
        Arc::new(SkillTool::definition()),
        Arc::new(SkillTool::new()),
    );
    let mut config = AgentConfig::new("root");
    // A skill, so that the root keeps `Skill` (R7).
    config.skills = vec![Arc::new(SkillDefinition::inline(
        "review".parse().unwrap(),
        "Review a diff.",
        "Look closely.",
    ))];
    let agent = Agent::new(Arc::new(runtime), config);
    let report = agent.preview_pools().unwrap();
    let root = &report.agents[0].pool;
    let engine: Vec<_> = root
        .executable()
        .iter()
        .chain(root.deferred())
        .filter(|d| d.origin == ToolOrigin::Builtin)
        .collect();
    let table = zr_resolve::default_builtins();
    let mut checked = Vec::new();
    for definition in &engine {
        let name = definition.name.as_str();
        let expected = table
            .iter()
            .find(|d| d.name.as_str() == name)
            .unwrap_or_else(|| panic!("{name} is not in the resolver's registry"));
        assert_eq!(
            (
                definition.annotations.read_only,
                definition.defer.unwrap_or(false)
            ),
            (
                expected.annotations.read_only,
                expected.defer.unwrap_or(false)
            ),
            "{name}: (read_only, deferred) of the engine's definition against the resolver's"
        );
        checked.push(name);
    }
    checked.sort_unstable();
    checked.dedup();
    // Every builtin of the registry was compared.
    let mut all: Vec<&str> = table.iter().map(|d| d.name.as_str()).collect();
    all.sort_unstable();
    assert_eq!(checked, all);
    let skill = engine.iter().find(|d| d.name.as_str() == "Skill").unwrap();
    assert!(skill.annotations.read_only, "DESIGN: Skill is read-only");
}
