//! The built-in agent types, each with its written system prompt.

use zr_caps::{AgentDefinition, AgentType, ModelChoice};
use zr_types::AgentName;

/// One built-in: name, kind, description, prompt and model (`None`: its
/// parent's).
struct Builtin {
    name: &'static str,
    kind: AgentType,
    description: &'static str,
    prompt: &'static str,
    model: Option<&'static str>,
}

const BUILTINS: [Builtin; 5] = [
    Builtin {
        name: "general-purpose",
        kind: AgentType::GeneralPurpose,
        description: "General-purpose agent for researching complex questions, searching code and carrying out multi-step tasks. Use it when a task takes several steps, or when a search may not find the right match in the first few tries.",
        prompt: include_str!("builtin/general-purpose.md"),
        model: None,
    },
    Builtin {
        name: "explore",
        kind: AgentType::Explore,
        description: "Fast read-only agent for exploring a codebase: finds files by pattern, searches code for keywords and answers questions about how the code works. Say how thorough it should be: quick, medium or very thorough.",
        prompt: include_str!("builtin/explore.md"),
        model: Some("small"),
    },
    Builtin {
        name: "plan",
        kind: AgentType::Plan,
        description: "Read-only software architect: explores the code and returns a step-by-step implementation plan with the files to change, the tests to write and the risks.",
        prompt: include_str!("builtin/plan.md"),
        model: None,
    },
    Builtin {
        name: "verification",
        kind: AgentType::Verification,
        description: "Adversarial checker: give it finished work and what it was meant to do; it tries to break it (tests, edge cases, failure paths) and reports PASS or FAIL with reproducible evidence. It never fixes anything.",
        prompt: include_str!("builtin/verification.md"),
        model: None,
    },
    Builtin {
        name: "guide",
        kind: AgentType::Explore,
        description: "Answers questions about zr itself: subagent types, tools and tool pools, skills, MCP servers, permission modes and configuration files. Use it when the user asks how to do something with zr.",
        prompt: include_str!("builtin/guide.md"),
        model: None,
    },
];

/// The built-in agent types: general-purpose, explore and plan (read-only
/// kinds for the resolver), verification (tries to break the work it
/// checks) and guide (answers questions about zr; read-only, kind explore).
/// `explore` runs on the `small` model alias (the provider's smaller,
/// faster model, see `zr_caps::MODEL_ALIASES`); the others on their
/// parent's model.
/// None has capabilities of its own (C2: no custom or connection tools, no
/// skills, no allow list).
///
/// ```
/// let types = zr_skills::builtin_agent_types();
/// assert_eq!(types.len(), 5);
/// assert!(types.iter().all(|t| !t.prompt.is_empty()));
/// ```
#[must_use]
pub fn builtin_agent_types() -> Vec<AgentDefinition> {
    BUILTINS
        .iter()
        .map(|b| {
            let name: AgentName = b
                .name
                .parse()
                .expect("built-in agent names are valid agent names");
            let mut definition = AgentDefinition::new(name, b.description, b.prompt.trim())
                .with_type(b.kind.clone());
            if let Some(model) = b.model {
                definition.model = ModelChoice::parse(model);
            }
            definition
        })
        .collect()
}
