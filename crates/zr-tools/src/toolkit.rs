//! The toolkit every tool is written with: the [`Builtin`] trait and its
//! [`Hints`], the adapter to [`ToolHandler`], the definition built from the
//! registry's flags, and the helpers for blocking work and failures.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use zr_types::{
    Access, Annotations, BoxFuture, BuiltinName, ToolCall, ToolContext, ToolDefinition, ToolError,
    ToolHandler, ToolOrigin, ToolOutput,
};

use crate::input;

/// Behavioural hints beyond `read_only` (which comes from the registry).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hints {
    pub(crate) destructive: Option<bool>,
    pub(crate) idempotent: Option<bool>,
    pub(crate) open_world: Option<bool>,
}

impl Hints {
    /// Stays on this machine; nothing else stated (tools that only look).
    pub(crate) const LOCAL: Self = Self {
        destructive: None,
        idempotent: None,
        open_world: Some(false),
    };
    /// Reaches outside the machine (the network, the user); nothing else stated.
    pub(crate) const OPEN_WORLD: Self = Self {
        open_world: Some(true),
        ..Self::LOCAL
    };

    /// Changes something on this machine: whether it may destroy data and
    /// whether a second identical call has no further effect.
    pub(crate) const fn local_change(destructive: bool, idempotent: bool) -> Self {
        Self {
            destructive: Some(destructive),
            idempotent: Some(idempotent),
            open_world: Some(false),
        }
    }
}

/// One builtin tool: a typed input and a run function. [`Handler`] turns it
/// into a [`ToolHandler`] that parses the model's input first.
pub(crate) trait Builtin: Send + Sync + fmt::Debug + 'static {
    /// The typed input; its JSON Schema is the tool's input schema.
    type Input: DeserializeOwned + JsonSchema + Send + 'static;
    /// The tool's name: its entry in `DEFAULT_BUILTINS`.
    const NAME: BuiltinName;
    /// Hints beyond read-only.
    const HINTS: Hints;
    /// What the model is told about the tool beyond the registry's
    /// one-line description, which comes first in the tool's description.
    fn details(&self) -> String;
    /// What a call with `input` touches, for an agent in `cwd` (see
    /// [`ToolHandler::access`]); nothing by default.
    fn access(input: &Self::Input, cwd: &Path) -> Vec<Access> {
        let _ = (input, cwd);
        Vec::new()
    }
    /// Runs one call with parsed input.
    fn run<'a>(
        &'a self,
        input: Self::Input,
        ctx: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;
}

/// Runs blocking work (file system walks, reads, the cron file) off the
/// async threads; a panic in it becomes `ToolError::Failed` for `tool`.
pub(crate) async fn blocking<R: Send + 'static>(
    tool: &str,
    f: impl FnOnce() -> R + Send + 'static,
) -> Result<R, ToolError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|source| tool_failed(tool, source))
}

/// `ToolError::Failed` of `tool`, caused by `source`.
pub(crate) fn tool_failed(
    tool: &str,
    source: impl std::error::Error + Send + Sync + 'static,
) -> ToolError {
    ToolError::Failed {
        tool: tool.to_owned(),
        source: Box::new(source),
    }
}

/// Adapts a [`Builtin`] to the [`ToolHandler`] contract.
#[derive(Debug)]
pub(crate) struct Handler<T>(pub(crate) T);

impl<T: Builtin> ToolHandler for Handler<T> {
    fn call<'a>(
        &'a self,
        call: &'a ToolCall,
        ctx: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            match input::parse::<T::Input>(T::NAME.as_str(), &call.input) {
                Ok(parsed) => self.0.run(parsed, ctx).await,
                Err(output) => Ok(output),
            }
        })
    }

    fn access(&self, input: &serde_json::Value, cwd: &Path) -> Vec<Access> {
        // The same parse as `call`'s: a call whose input does not parse
        // touches nothing, it fails on it.
        input::parse::<T::Input>(T::NAME.as_str(), input)
            .map_or_else(|_| Vec::new(), |parsed| T::access(&parsed, cwd))
    }
}

/// The definition the model is told about (name, the registry's
/// description then the tool's details, input schema, annotations, defer
/// flag) and the handler of `tool`.
pub(crate) fn entry<T: Builtin>(tool: T) -> (ToolDefinition, Arc<dyn ToolHandler>) {
    let spec = T::NAME.spec();
    let hints = T::HINTS;
    let name = T::NAME.tool_name();
    let description = format!("{} {}", spec.description, tool.details());
    let definition = ToolDefinition::new(name, description, ToolOrigin::Builtin)
        .with_schema(input::schema_for::<T::Input>())
        .with_annotations(Annotations {
            read_only: spec.read_only,
            destructive: hints.destructive,
            idempotent: hints.idempotent,
            open_world: hints.open_world,
        })
        .with_defer(spec.deferred.then_some(true));
    (definition, Arc::new(Handler(tool)))
}
