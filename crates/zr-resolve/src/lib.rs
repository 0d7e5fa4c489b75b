//! Resolver.
