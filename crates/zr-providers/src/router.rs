//! Provider profiles: one [`ModelProvider`] that sends each request to
//! the provider its model names. A model `NAME:model-id` whose `NAME` is
//! a profile goes to that profile's provider as `model-id`; any other
//! model (`claude-sonnet-4-5`, `llama3:8b`) goes to the session's
//! provider unchanged. The engine keeps one request path: it never knows
//! there is more than one provider.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::provider::{ModelProvider, ModelRequest, ModelStream, StructuredOutput};

/// The session's provider and the named ones.
#[derive(Debug, Clone)]
pub struct Router {
    /// Requests whose model names no profile.
    default: Arc<dyn ModelProvider>,
    /// Profile name -> its provider and aliases.
    named: BTreeMap<String, Profile>,
}

/// One named provider.
#[derive(Debug, Clone)]
struct Profile {
    provider: Arc<dyn ModelProvider>,
    /// alias -> model id on this provider.
    aliases: BTreeMap<String, String>,
}

impl Router {
    /// A router sending everything to `default` until profiles are added.
    #[must_use]
    pub fn new(default: Arc<dyn ModelProvider>) -> Self {
        Self {
            default,
            named: BTreeMap::new(),
        }
    }

    /// Adds the profile `name` (no `:` in it) answered by `provider`.
    #[must_use]
    pub fn with(mut self, name: impl Into<String>, provider: Arc<dyn ModelProvider>) -> Self {
        self.named.insert(
            name.into(),
            Profile {
                provider,
                aliases: BTreeMap::new(),
            },
        );
        self
    }

    /// Adds the profile `name` with `aliases` (alias -> model id): a
    /// model `NAME:alias` is sent as the alias's id.
    #[must_use]
    pub fn with_aliases(
        mut self,
        name: impl Into<String>,
        provider: Arc<dyn ModelProvider>,
        aliases: BTreeMap<String, String>,
    ) -> Self {
        self.named
            .insert(name.into(), Profile { provider, aliases });
        self
    }

    /// The profile names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.named.keys().map(String::as_str)
    }

    /// The provider of `model` and the model id it is sent as: the
    /// profile's when `model` is `NAME:id` with a known `NAME`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use zr_providers::{Router, Script, ScriptedProvider};
    /// let session = Arc::new(ScriptedProvider::new(Script::default()));
    /// let local = Arc::new(ScriptedProvider::new(Script::default()));
    /// let router = Router::new(session).with("local", local);
    /// assert_eq!(router.route("local:qwen3").1, "qwen3");
    /// assert_eq!(router.route("llama3:8b").1, "llama3:8b");
    /// assert_eq!(router.route("claude-sonnet-4-5").1, "claude-sonnet-4-5");
    /// ```
    #[must_use]
    pub fn route<'m>(&'m self, model: &'m str) -> (&'m Arc<dyn ModelProvider>, &'m str) {
        model
            .split_once(':')
            .and_then(|(name, id)| {
                self.named.get(name).map(|p| {
                    let id = p.aliases.get(id).map_or(id, String::as_str);
                    (&p.provider, id)
                })
            })
            .unwrap_or((&self.default, model))
    }

    /// `request` for its provider: the profile's prefix taken off.
    fn routed(&self, mut request: ModelRequest) -> (Arc<dyn ModelProvider>, ModelRequest) {
        let (provider, id) = self.route(&request.model);
        let provider = Arc::clone(provider);
        if id != &*request.model {
            let id: Arc<str> = Arc::from(id);
            request.model = id;
        }
        (provider, request)
    }
}

impl ModelProvider for Router {
    fn stream(&self, request: ModelRequest) -> ModelStream {
        let (provider, request) = self.routed(request);
        tracing::debug!(provider = provider.name(), model = %request.model, "routed");
        provider.stream(request)
    }

    /// The session's provider's name (telemetry of the root's requests).
    fn name(&self) -> &'static str {
        self.default.name()
    }

    /// The session's provider's way (the trait's method sees no model).
    fn structured_output(&self) -> StructuredOutput {
        self.default.structured_output()
    }

    fn request_body(&self, request: &ModelRequest) -> Option<Vec<u8>> {
        let (provider, request) = self.routed(request.clone());
        provider.request_body(&request)
    }
}
