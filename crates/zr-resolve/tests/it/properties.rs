//! Properties of the resolver.
