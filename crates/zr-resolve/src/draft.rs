//! A pool while the steps R1-R8 resolve it: the tools still in it, in pool
//! order, and the trace so far (removals in step order, replacements,
//! warnings). Each step of `steps/` takes a [`Draft`] and leaves it
//! smaller; [`Draft::finish`] makes the [`ResolvedPool`].

use std::sync::Arc;

use zr_types::{SkillDefinition, ToolDefinition};

use crate::list::{Slot, Sources};
use crate::pool::{Removal, RemovalReason, Replaced, ResolvedPool, Step, Warning};

/// A pool being resolved.
pub(crate) struct Draft {
    /// The lists the slots point into (builtins, custom, connection).
    sources: Sources,
    /// The pool R1 assembled, in pool order. Patterns that match nothing
    /// here are reported, so that a pattern aimed at a tool an earlier
    /// step removed is not taken for a typo.
    assembled: Vec<Slot>,
    /// The tools still advertised, in pool order.
    tools: Vec<Slot>,
    /// The FindTool directory (R8), in pool order.
    deferred: Vec<Slot>,
    /// Removals, in step order (each step removes in pool order).
    removed: Vec<Removal>,
    /// Definitions replaced at R1.
    replaced: Vec<Replaced>,
    warnings: Vec<Warning>,
}

impl Draft {
    /// The pool R1 assembled: `pool` positions into `sources`.
    pub(crate) fn assembled(sources: Sources, pool: Vec<Slot>, replaced: Vec<Replaced>) -> Self {
        Self {
            sources,
            tools: pool.clone(),
            assembled: pool,
            deferred: Vec::new(),
            removed: Vec::new(),
            replaced,
            warnings: Vec::new(),
        }
    }

    /// The tools R1 assembled, in pool order.
    pub(crate) fn assembled_tools(&self) -> impl Iterator<Item = &Arc<ToolDefinition>> {
        self.assembled.iter().map(|at| self.sources.get(*at))
    }

    /// The tools still in the pool, in pool order.
    pub(crate) fn tools(&self) -> impl Iterator<Item = &Arc<ToolDefinition>> {
        self.tools.iter().map(|at| self.sources.get(*at))
    }

    /// Removes, in pool order, every tool `why` gives a reason for, and
    /// records it at `step`.
    pub(crate) fn remove(
        &mut self,
        step: Step,
        mut why: impl FnMut(&ToolDefinition) -> Option<RemovalReason>,
    ) {
        let Self {
            sources,
            tools,
            removed,
            ..
        } = self;
        tools.retain(|&at| match why(sources.get(at)) {
            Some(reason) => {
                removed.push(Removal { at, step, reason });
                false
            }
            None => true,
        });
    }

    /// Moves, in pool order, every tool `deferred` says so into the FindTool
    /// directory.
    pub(crate) fn defer(&mut self, mut deferred: impl FnMut(&ToolDefinition) -> bool) {
        let Self {
            sources,
            tools,
            deferred: directory,
            ..
        } = self;
        tools.retain(|&at| {
            let defer = deferred(sources.get(at));
            if defer {
                directory.push(at);
            }
            !defer
        });
    }

    /// Whether the FindTool directory is empty.
    pub(crate) fn nothing_deferred(&self) -> bool {
        self.deferred.is_empty()
    }

    /// Records a warning about the input.
    pub(crate) fn warn(&mut self, warning: Warning) {
        self.warnings.push(warning);
    }

    /// The resolved pool: what is still in the draft is advertised and
    /// executable.
    pub(crate) fn finish(self, skills: Vec<Arc<SkillDefinition>>) -> ResolvedPool {
        let advertised: Arc<[Slot]> = self.tools.into();
        ResolvedPool {
            sources: self.sources,
            executable: Arc::clone(&advertised),
            advertised,
            deferred: self.deferred.into(),
            removed: self.removed,
            replaced: self.replaced,
            skills,
            warnings: self.warnings,
        }
    }
}
