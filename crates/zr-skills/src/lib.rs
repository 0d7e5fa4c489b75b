//! Skill registry (`SKILL.md` folders), agent-type registry (`agents/*.md`)
//! and the project's instruction files (`CLAUDE.md`, `AGENTS.md`,
//! `CLAUDE.local.md` with their `@path` imports: [`InstructionRegistry`]).
//!
//! Both registries read Markdown files with YAML front matter from a list
//! of roots, keep a cache per file, and hand out immutable views
//! ([`SkillsView`], [`AgentTypesView`], shared as `Arc`) that the engine
//! asks for at every message. This crate depends on `zr-types` and
//! `zr-caps` only; the engine sees it through [`SkillTool`] (a
//! [`zr_types::ToolHandler`]) and plain definitions.
//!
//! # Wiring
//!
//! ```
//! use std::sync::Arc;
//! use zr_skills::{AgentRegistry, Roots, SkillRegistry, SkillTool};
//! use zr_types::AgentId;
//!
//! let project = tempfile::tempdir().unwrap();
//! let skills = SkillRegistry::new(Roots::skills(project.path(), None));
//! let agents = AgentRegistry::for_project(project.path(), None);
//! // Registered as the `Skill` handler; it re-checks the root rule on reading.
//! let skill_tool = Arc::new(SkillTool::with_roots(skills.roots().clone()));
//!
//! // At every message: the current views (cheap when nothing changed).
//! let skill_view = skills.view();
//! let agent_view = agents.view();
//! let _registry_for_the_resolver = skill_view.definitions(); // ResolveInput::skills
//! assert!(agent_view.get("explore").is_some());
//!
//! // When an agent starts: exactly the skills of its resolved pool
//! // (`ResolvedPool::skills()`); when it ends, revoke them.
//! let agent = AgentId::root();
//! skill_tool.grant(agent.clone(), skill_view.definitions().iter().cloned());
//! skill_tool.revoke(&agent);
//! ```
//!
//! # Roots and precedence
//!
//! Roots are passed in, never discovered: [`Roots::skills`] and
//! [`Roots::agents`] build the standard lists from a project folder and an
//! optional home folder ([`home_dir`] reads `$HOME` for hosts that want
//! it; the registries never do). The order is fixed; the first root that
//! defines a name wins, and every later definition of it is reported as a
//! warning ([`Problem::Shadowed`]):
//!
//! | skills | agent types |
//! | --- | --- |
//! | `<project>/.zr/skills` | `<project>/.zr/agents` |
//! | `<project>/.agents/skills` | `<project>/.claude/agents` |
//! | `<project>/.claude/skills` | `<home>/.zr/agents` |
//! | `<home>/.zr/skills` | `<home>/.claude/agents` |
//! | `<home>/.agents/skills` | the built-in types |
//! | `<home>/.claude/skills` | |
//!
//! Project before user; in each, zr's own folder, then the Agent Skills
//! folder several tools share (`.agents`), then Claude Code's. So
//! existing `.agents/skills` and `.claude/skills` folders and
//! `.claude/agents` files, the project's and the user's, work unchanged. A root that is the same folder
//! as an earlier one (`.claude/skills` linked to `.agents/skills`, a
//! common setup) is read once, under the earlier root, without warnings.
//! A file whose `name` is a built-in type's (`general-purpose`,
//! `explore`, `plan`, `verification`, `guide`, see
//! [`builtin_agent_types`]) replaces the built-in.
//!
//! # Skills
//!
//! A skill is a folder holding `SKILL.md`: front matter `name`,
//! `description`, optional `allowed-tools` (a list, or one string of names
//! separated by commas or spaces), `license` and `metadata` (a mapping);
//! the body is the instructions; other files in the folder support them.
//! Skill folders may be nested (`<root>/docs/pdf-tools/SKILL.md`, up to
//! six levels); the folder of a `SKILL.md` is not searched further (its
//! sub-folders are supporting files), nor are hidden folders.
//!
//! Name rules: `name` is lowercase ASCII letters, digits and single
//! hyphens (no leading or trailing hyphen), at most 64 characters, and
//! should equal the skill's folder name (a skill whose `name` differs
//! loads under its `name` with a [`Problem::NameMismatch`] warning, as in
//! Claude Code); `description` is non-empty and at most 1024 characters. Other keys that the Agent Skills spec or Claude
//! Code define are kept quietly in [`Skill::extras`]; unknown keys are kept
//! with a warning.
//!
//! Escapes: a link (a linked skill folder, sub-folder or `SKILL.md`) whose
//! target lies outside its root's canonical path is refused with
//! [`Problem::EscapesRoot`]; names are validated before they are ever used
//! as paths, so `../x` cannot name a skill (not in a file, not in a call).
//! A link inside the root that stays inside it (a linked skill folder, a
//! linked `SKILL.md`) is followed; the folder its name is compared with
//! is the link's name, the folder it was found under. The rule is applied again
//! when the `Skill` tool reads a body ([`SkillTool::with_roots`]): a skill
//! folder or `SKILL.md` replaced by a link out of the root after the view
//! is refused at that moment too.
//!
//! Progressive disclosure: a view reads each `SKILL.md` only up to the end
//! of its front matter; the body is read by [`SkillTool`] when the `Skill`
//! tool is called.
//!
//! # Agent types
//!
//! Every `*.md` file in an agents root or its sub-folders
//! (`agents/**/*.md`, up to six levels down, as Claude Code reads
//! `.claude/agents/<category>/*.md`), except `README.md` files and hidden
//! files and folders (`.#x.md`, an editor's lock; `.git`), is parsed with
//! [`zr_caps::parse_agent_file`] (rule C6), which reads Claude Code's
//! files leniently (a bad `tools` entry drops that entry, Claude Code's
//! tool names map to zr's) with a warning per leniency. Files are taken in
//! path order, so inside one root the first path wins a duplicate name. A
//! linked file is read where it points (an agent file is one file; nothing
//! is read relative to it); a linked sub-folder is walked only when its
//! target stays inside the root ([`Problem::EscapesRoot`] otherwise), and
//! at most once (a link back up is not a loop). With
//! [`AgentRegistry::for_project`], the first view creates
//! `<project>/.zr/agents` if it does not exist, with a `README.md`
//! explaining the format and an `example.md.template`; copying the
//! template to a `.md` file enables it. An existing folder is never
//! written to.
//!
//! # Hot reload
//!
//! Each registry caches, per folder, its listing and, per file, its parsed
//! result, each with the stamp (modification time, inode change time,
//! size, inode) it was read at; the change time, which the kernel sets and
//! nobody can set back, keeps a forged modification time from hiding a
//! change. A view `stat`s the roots and the folders it searches, and each
//! file: a folder is listed again only when its stamp changed (an entry
//! was added, removed or renamed), a file is parsed again only when its own
//! stamp changed; everything else comes from the cache, and entries no
//! longer found are dropped. A folder that was a skill folder costs one
//! `lstat` of its `SKILL.md` while that is still a plain file (its
//! sub-folders are never searched, so its own listing does not matter). A
//! new, edited or deleted file is therefore seen by the next view, and a
//! view with nothing changed costs about one `stat` per skill or agent
//! file and returns the previous view itself (`Arc::ptr_eq`).
//! File systems stamp modification times with a coarse clock, so an entry
//! modified within two seconds of a scan is read again by the next scan
//! too: a second edit in the same clock tick, at the same size, is not
//! missed (git's "racily clean" rule). [`SkillRegistry::last_scan`] and
//! [`AgentRegistry::last_scan`] report what a view cost.
//!
//! # Diagnostics
//!
//! Nothing here panics or fails on the contents of a folder. Each broken
//! file yields a [`Diagnostic`] (file, line when there is one, severity and
//! a [`Problem`] saying what to fix) in the view, and the other files still
//! load. [`Severity::Error`] means the file was not loaded (bad YAML, a
//! missing or mistyped key, a broken name, a link out of its root, an
//! unreadable file); [`Severity::Warning`] means it loaded with something
//! to fix (an unknown key) or was set aside by rule (shadowed by a root of
//! higher precedence, nested too deep). A broken file does not shadow a
//! valid one of lower precedence. Diagnostics are sorted by path and line,
//! skills and types by name: views are deterministic.
//!
//! # Structure
//!
//! `SkillRegistry` (`skills.rs`, `skills/scan.rs`, `skill.rs`) over
//! `Roots::skills` and `AgentRegistry` (`agents.rs`, `agents/scan.rs`) over
//! `Roots::agents` (`roots.rs`), on top of the built-in types (`builtin.rs`,
//! prompts in `src/builtin/*.md`). Hot reload is one cache shared by both
//! (`cache.rs` between views, `stamp.rs` per file, `assemble.rs` for what
//! both do with a scan, `stats.rs` for what it cost; `agents/scan.rs`
//! compiles an agent file's `outputSchema` as the engine does and leaves
//! a file whose schema does not compile out, with an error at its line). `tool.rs` is the
//! `Skill` tool (`grant`/`revoke` per agent; `tool/confine.rs` re-checks
//! the root when a body is read); `diagnostic.rs`: one per broken file;
//! `scaffold.rs`: the first-use files of `.zr/agents`; `render.rs`: text
//! forms for `zr skills`, `zr agents` and snapshots; `instructions.rs`
//! (+ `instructions/imports.rs`, the `@path` parser): the instruction
//! files, their order, imports and hot reload.
//!
//! The registries never read `$HOME` or the current directory themselves
//! (roots are passed in; [`home_dir`] is for hosts), and nothing outside a
//! root is read.

mod agents;
mod assemble;
mod builtin;
mod cache;
mod diagnostic;
mod error;
mod instructions;
mod render;
mod roots;
mod scaffold;
mod shown;
mod skill;
mod skills;
mod stamp;
mod stats;
mod tool;

pub use agents::{AgentRegistry, AgentSource, AgentTypeEntry, AgentTypesView};
pub use builtin::builtin_agent_types;
pub use diagnostic::{Diagnostic, Severity};
pub use error::{BodyError, Problem};
pub use instructions::{
    InstructionFile, InstructionKind, InstructionRegistry, InstructionsView, MAX_IMPORT_DEPTH,
    SkipReason, Skipped,
};
pub use render::Relative;
pub use roots::{Root, Roots, Scope, home_dir};
pub use scaffold::{AGENTS_README, AGENTS_TEMPLATE};
pub use skill::{MAX_DESCRIPTION, Skill};
pub use skills::{SkillRegistry, SkillsView};
pub use stats::ScanStats;
pub use tool::SkillTool;
