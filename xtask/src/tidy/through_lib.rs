//! Imports from where a name is defined: no module of a crate names an
//! item through the crate's `lib.rs` re-exports (`use crate::Foo` where
//! `lib.rs` has `pub use module::Foo`); it names `crate::module::Foo`.
//! A re-export is the crate's face for its users, not a second address
//! inside the crate (STYLE.md), and an import through it hides which
//! module a file really leans on.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{Context, Result};
use syn::visit::Visit;

use crate::{display_rel, walk_files};

/// One message per import of a crate's own re-export, over every crate
/// under `crates/`: `file:line: crate::Name is lib.rs's re-export of ...`.
pub(super) fn check_imports_through_lib(root: &Path) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    let crates = root.join("crates");
    let mut dirs: Vec<_> = std::fs::read_dir(&crates)
        .with_context(|| format!("could not read {}", crates.display()))?
        .filter_map(|entry| Some(entry.ok()?.path().join("src")))
        .filter(|src| src.join("lib.rs").is_file())
        .collect();
    dirs.sort();
    for src in dirs {
        let lib = src.join("lib.rs");
        let reexports = reexports(&parse(&lib)?);
        if reexports.is_empty() {
            continue;
        }
        let mut files = walk_files(&src)?;
        files.retain(|path| path.extension().is_some_and(|ext| ext == "rs") && *path != lib);
        files.sort();
        for file in files {
            let shown = display_rel(root, &file);
            problems.extend(through_lib(&parse(&file)?, &reexports).into_iter().map(
                |(line, name)| {
                    format!(
                        "{shown}:{line}: `crate::{name}` imports lib.rs's re-export; name the module that defines `{name}`"
                    )
                },
            ));
        }
    }
    Ok(problems)
}

fn parse(path: &Path) -> Result<syn::File> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("could not read {}", path.display()))?;
    syn::parse_file(&text).with_context(|| format!("could not parse {}", path.display()))
}

/// The names a `lib.rs` brings in with `use` (re-exported or not) from
/// one of its own modules: `pub use module::{A, B as C}` gives `A` and `C`.
/// Uses of other crates (`pub use zr_types::X`) count too: `crate::X` in a
/// module is then a detour through `lib.rs` to another crate.
pub(super) fn reexports(lib: &syn::File) -> BTreeSet<String> {
    fn leaves(tree: &syn::UseTree, out: &mut BTreeSet<String>) {
        match tree {
            syn::UseTree::Path(path) => leaves(&path.tree, out),
            syn::UseTree::Name(name) if name.ident != "self" => {
                out.insert(name.ident.to_string());
            }
            syn::UseTree::Name(_) | syn::UseTree::Glob(_) => {}
            syn::UseTree::Rename(rename) => {
                out.insert(rename.rename.to_string());
            }
            syn::UseTree::Group(group) => group.items.iter().for_each(|item| leaves(item, out)),
        }
    }
    let mut names = BTreeSet::new();
    for item in &lib.items {
        if let syn::Item::Use(item) = item {
            leaves(&item.tree, &mut names);
        }
    }
    // A module of `lib.rs` may share its name with a re-exported function
    // (`mod journal;` beside `pub use admin::journal`): `crate::journal`
    // is then the module, which is where it is defined.
    for item in &lib.items {
        if let syn::Item::Mod(module) = item {
            names.remove(&module.ident.to_string());
        }
    }
    names
}

/// Every `crate::NAME` (in a `use` or an inline path) of `file` whose
/// `NAME` is one of `reexports`, as (line, name), in file order.
pub(super) fn through_lib(file: &syn::File, reexports: &BTreeSet<String>) -> Vec<(usize, String)> {
    struct Finder<'a> {
        reexports: &'a BTreeSet<String>,
        found: Vec<(usize, String)>,
    }
    impl Finder<'_> {
        fn check(&mut self, ident: &syn::Ident) {
            if self.reexports.contains(&ident.to_string()) {
                self.found
                    .push((ident.span().start().line, ident.to_string()));
            }
        }
        /// The first level of a `use crate::...` tree.
        fn first_level(&mut self, tree: &syn::UseTree) {
            match tree {
                syn::UseTree::Path(path) => self.check(&path.ident),
                syn::UseTree::Name(name) => self.check(&name.ident),
                syn::UseTree::Rename(rename) => self.check(&rename.ident),
                syn::UseTree::Group(group) => {
                    group.items.iter().for_each(|item| self.first_level(item))
                }
                syn::UseTree::Glob(_) => {}
            }
        }
    }
    impl<'ast> Visit<'ast> for Finder<'_> {
        fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
            if let syn::UseTree::Path(path) = &item.tree
                && path.ident == "crate"
            {
                self.first_level(&path.tree);
            }
        }
        fn visit_path(&mut self, path: &'ast syn::Path) {
            let mut segments = path.segments.iter();
            if let (Some(first), Some(second)) = (segments.next(), segments.next())
                && first.ident == "crate"
            {
                self.check(&second.ident);
            }
            syn::visit::visit_path(self, path);
        }
    }
    let mut finder = Finder {
        reexports,
        found: Vec::new(),
    };
    finder.visit_file(file);
    finder.found
}
