//! Model aliases: `sonnet`, `opus`, `haiku`, `small` (and `inherit`) as
//! agent-type files write them, and the model id each stands for on each
//! provider.
//!
//! | alias     | Anthropic           | OpenAI-compatible     |
//! |-----------|---------------------|-----------------------|
//! | `sonnet`  | `claude-sonnet-4-5` | none: session's model |
//! | `opus`    | `claude-opus-4-5`   | none: session's model |
//! | `haiku`   | `claude-haiku-4-5`  | none: session's model |
//! | `small`   | `claude-haiku-4-5`  | none: session's model |
//! | `inherit` | the parent's model  | the parent's model    |
//!
//! `small` is the provider's smaller, faster model (Claude Code's "small
//! fast model"): the built-in `explore` type runs on it. Hosts map it for
//! the provider they talk to (the `zr` command: OpenAI's own API gets a
//! mini model, `ANTHROPIC_SMALL_FAST_MODEL` and `[model.aliases] small`
//! override it).
//!
//! The rows are [`MODEL_ALIASES`]. An OpenAI-compatible server (OpenAI
//! itself, a local server) has no Claude model, and which of its models is
//! "like sonnet" is the user's choice, not zr's: there is no default
//! mapping. A Claude alias there is unmapped ([`ModelResolution::Unmapped`]):
//! the agent runs on the session's model, and hosts report it when the
//! agent types load (the `zr` command warns naming file and line). Both
//! tables can be extended or overridden (`zr.toml` `[model.aliases]`,
//! [`ModelAliases::set`]); an override maps on every provider.
//!
//! An id that is no alias (`claude-sonnet-4-5-20250929`, `gpt-4.1`) is sent
//! as written.

use std::collections::BTreeMap;

use crate::definition::ModelChoice;

/// One row of the alias table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelAlias {
    /// What a file writes (`model: sonnet`).
    pub alias: &'static str,
    /// The Anthropic model id it stands for.
    pub anthropic: &'static str,
}

/// The built-in aliases, the same names Claude Code's agent files use.
pub const MODEL_ALIASES: &[ModelAlias] = &[
    ModelAlias {
        alias: "sonnet",
        anthropic: "claude-sonnet-4-5",
    },
    ModelAlias {
        alias: "opus",
        anthropic: "claude-opus-4-5",
    },
    ModelAlias {
        alias: "haiku",
        anthropic: "claude-haiku-4-5",
    },
    ModelAlias {
        alias: "small",
        anthropic: "claude-haiku-4-5",
    },
];

/// Which provider's column of [`MODEL_ALIASES`] applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelFamily {
    /// The Anthropic Messages API: the table's ids.
    Anthropic,
    /// An OpenAI-compatible server: no default mapping.
    OpenAiCompatible,
}

/// The aliases of one session: alias -> model id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelAliases {
    ids: BTreeMap<String, String>,
}

impl Default for ModelAliases {
    /// The Anthropic table.
    fn default() -> Self {
        Self::for_family(ModelFamily::Anthropic)
    }
}

/// What a definition's `model` comes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelResolution<'a> {
    /// The parent's model (`inherit`, or nothing set).
    Inherit,
    /// This model id: one written as is, or an alias's.
    Id(&'a str),
    /// A built-in alias the session's provider has no id for: the agent
    /// runs on the parent's model.
    Unmapped {
        /// The alias as written.
        alias: &'a str,
    },
}

impl ModelAliases {
    /// The default table of `family`.
    #[must_use]
    pub fn for_family(family: ModelFamily) -> Self {
        let ids = match family {
            ModelFamily::Anthropic => MODEL_ALIASES
                .iter()
                .map(|row| (row.alias.to_owned(), row.anthropic.to_owned()))
                .collect(),
            ModelFamily::OpenAiCompatible => BTreeMap::new(),
        };
        Self { ids }
    }

    /// Maps `alias` to `id` (adding an alias or overriding a built-in one).
    pub fn set(&mut self, alias: impl Into<String>, id: impl Into<String>) {
        self.ids.insert(alias.into(), id.into());
    }

    /// The id `alias` maps to, if it is mapped.
    #[must_use]
    pub fn get(&self, alias: &str) -> Option<&str> {
        self.ids.get(alias).map(String::as_str)
    }

    /// What `choice` comes to in this session.
    #[must_use]
    pub fn resolve<'a>(&'a self, choice: &'a ModelChoice) -> ModelResolution<'a> {
        match choice {
            ModelChoice::Inherit => ModelResolution::Inherit,
            ModelChoice::Id(id) => match self.get(id) {
                Some(mapped) => ModelResolution::Id(mapped),
                None if is_builtin_alias(id) => ModelResolution::Unmapped { alias: id },
                None => ModelResolution::Id(id),
            },
        }
    }

    /// The model an agent with `choice` runs on when its parent runs on
    /// `parent`.
    #[must_use]
    pub fn model_for(&self, choice: &ModelChoice, parent: &str) -> String {
        match self.resolve(choice) {
            ModelResolution::Id(id) => id.to_owned(),
            ModelResolution::Inherit | ModelResolution::Unmapped { .. } => parent.to_owned(),
        }
    }
}

/// Whether `name` is one of [`MODEL_ALIASES`].
#[must_use]
pub fn is_builtin_alias(name: &str) -> bool {
    MODEL_ALIASES.iter().any(|row| row.alias == name)
}

#[cfg(test)]
mod tests;
