//! Builtin tools: Bash, Read, Write, Edit, Glob, Grep, WebFetch, WebSearch,
//! AskUserQuestion, TodoWrite, Config and CronCreate / CronDelete / CronList.
//!
//! [`BuiltinTools::tools`] returns, in the order of
//! [`zr_types::DEFAULT_BUILTINS`], one [`ToolDefinition`](zr_types::ToolDefinition)
//! (name; description: the registry's one-line description, then the tool's
//! details; JSON Schema of the input derived from a Rust type; annotations
//! with the registry's read-only flag; the registry's deferred flag) and one
//! [`ToolHandler`](zr_types::ToolHandler) per tool. `Task`, `MultiTask` and
//! `FindTool` belong to the engine, `Skill` to zr-skills.
//!
//! Every handler first checks the model's input against its type; a wrong
//! field comes back as an error result naming the field, what was expected
//! and the fields the tool takes. Problems the model can fix (a missing
//! file, a non-unique `old_string`) are error results; `Err(ToolError)` is
//! kept for calls that cannot be carried out (a process that cannot be
//! spawned, a failing host service).
//!
//! # Path policy and the effects boundary
//!
//! Relative paths are resolved against the calling agent's working
//! directory ([`ToolContext::cwd`](zr_types::ToolContext)), and `.`/`..` are
//! removed lexically. Absolute paths are taken as given, also outside the
//! working directory: models use absolute paths all the time, and deciding
//! which paths an agent may touch is not a tool's job. Each tool declares
//! what a call would touch ([`ToolHandler::access`](zr_types::ToolHandler::access):
//! Read, Glob and Grep a read, Write and Edit a write, Bash its command,
//! WebFetch its host), and the engine's effects boundary judges that
//! before the handler runs. Bash and its background commands run in the
//! OS sandbox the engine gives the call
//! ([`ToolContext::confinement`](zr_types::ToolContext), applied by
//! `zr_process::spawn_sandboxed`: Landlock and seccomp on Linux);
//! [`sandbox_missing`] says what this system lacks to confine them.
//!
//! # The tools
//!
//! - **Bash** runs `bash -c` (or `/bin/sh`) in the working directory, in a
//!   new process group, with `env_clear()` and only the context's variables.
//!   Timeout `timeout` ms (default 120 000, at most 600 000): SIGTERM to the
//!   group, two seconds of grace, SIGKILL to the group. Stdout and stderr are
//!   read concurrently and each keeps its first and last 15 000 bytes, with a
//!   line saying how many bytes were cut (a UTF-8 character split by a cut
//!   is dropped whole and counted as cut); the exit code (or signal) ends the
//!   output. When the shell exits, its output is read for up to 300 ms more
//!   and whatever it left in its group is killed. Dropping the call's future
//!   kills the group. Each call is a fresh shell: `cd` and `export` do not
//!   carry over to the next call; without `PATH` in the context, bash uses
//!   its built-in default. Every command is started through zr-process
//!   (`spawn`, or `spawn_sandboxed` in the call's sandbox): it and its
//!   group die with zr, even when zr is killed with SIGKILL, and
//!   it sees one variable of zr's own, `ZR_OWNER`. A command that leaves its
//!   process group (`setsid`, daemons) escapes the group kill; `zr resume`
//!   finds it by `ZR_OWNER` after a kill. `run_in_background` starts the
//!   command with output to a log file (returned, readable with Read; a last
//!   line `[background command ended: exit code N]` is appended when it
//!   ends) and registers it with the agent; it runs until it exits or the
//!   agent ends, and its log is deleted with it. An agent runs at most 16
//!   background commands at a time and keeps the logs of its 32 most
//!   recently ended ones (an older one is forgotten: its log deleted,
//!   anything it left running in its group killed). On Linux the leader of a background command is
//!   not reaped until the agent ends (its exit is seen with
//!   `waitid(WNOWAIT)`), so its process group id cannot be reused by
//!   another process group that a late kill would hit.
//! - **Read**: `cat -n`-style numbered lines, `offset` (1-based) and `limit`
//!   (default 2000), lines cut at 2000 characters, at most 256 KiB per call
//!   with a note on how to continue; PNG/JPEG/GIF/WebP up to 5 MiB as image
//!   content; other binary files (NUL bytes or many control bytes in the first
//!   8 KiB) refused, and so are devices, sockets and pipes; directories
//!   listed (1000 entries); a missing path answered with near names from its
//!   folder. A very long line is skipped past, never loaded whole.
//! - **Write** creates parent folders. It refuses a path that is a dangling
//!   symbolic link (its target does not exist or cannot be resolved) rather
//!   than create the target somewhere else; a link to an existing file
//!   writes that file, under the same read-first rule. An existing file is overwritten only
//!   if this agent read it in this session and it has not changed since (size
//!   and modification time); **Edit** has the same rule.
//! - **Edit** replaces `old_string` exactly; not found -> line-by-line
//!   matching ignoring trailing whitespace and line endings, then indentation
//!   (new text re-indented), then all whitespace, and finally all of these
//!   again with Read's `NNNNNN<TAB>` line-number prefixes removed from
//!   `old_string` (and from each line of `new_string` that has one); the
//!   result names what matched. More than one match, exact or tolerant, is
//!   refused unless `replace_all`. In a file whose lines end in `\r\n`,
//!   the replacement's line breaks are written as `\r\n`. Files are read
//!   and written whole (UTF-8 only).
//! - **Glob**: ripgrep's `ignore` walker (`.gitignore`, `.ignore` and
//!   `.git/info/exclude` honoured even outside a git repository; hidden
//!   files included, `.git` skipped) and `globset`; newest first, 100 paths.
//! - **Grep**: `grep-regex` and `grep-searcher` over the same walker; modes
//!   `files_with_matches` (default, newest first), `content` and `count`;
//!   `-i`, `-n`, `-A/-B/-C`, `glob`, `type`, `multiline`; `head_limit`
//!   entries (default 500; in content mode every output line counts,
//!   `--` separators included) and 64 KiB at most. The "output stopped"
//!   note appears only when a further match or context line was really
//!   left out: once full, the search goes on only until the next match.
//! - **WebFetch**: GET with [`WebFetchLimits`] (5 MiB body read as a stream
//!   and stopped beyond the limit, 30 s, 5 redirects, 100 000 bytes of
//!   output), HTML to Markdown with `htmd` (scripts, styles and `<head>`
//!   dropped), text/JSON/XML as is, binary content refused. Bodies are
//!   decoded with `encoding_rs` from the Content-Type `charset` (a byte
//!   order mark wins; no or an unknown charset means UTF-8, lossy; `<meta>`
//!   charsets are not sniffed) after the whole bounded body was read, and
//!   `http://` is not upgraded to `https://`. The optional `prompt` is echoed above the
//!   page: no model summarises it here.
//!   Only public internet addresses are reached unless a
//!   [`WebFetchPolicy`] (set with [`BuiltinTools::with_web_fetch_policy`])
//!   allows some hosts (`private_hosts`) or every private address
//!   (`allow_private`): loopback, private, link-local (cloud metadata),
//!   unique-local, carrier-grade NAT, multicast and reserved addresses
//!   are refused, in every spelling of the URL (`http://2130706433/`,
//!   `http://[::ffff:127.0.0.1]/`) and when a name resolves to any of them
//!   (all of a name's addresses must be public), at every redirect hop.
//!   Addresses with a user name or password are always refused. No system
//!   proxy is used. [`fetch_host`] names the host of a call for
//!   per-domain permission rules.
//! - **WebSearch**, **AskUserQuestion** and **Config** call host services
//!   ([`WebSearchService`], [`AskUserService`], [`ConfigService`]); with none
//!   configured they answer with an error result, never a made-up answer,
//!   and [`BuiltinTools::no_service`] names them so that the resolver
//!   leaves them out of every pool. [`HttpSearch`] is a real
//!   [`WebSearchService`]: a SearXNG instance's JSON API or the Brave
//!   Search API.
//!   Config type-checks values against [`ConfigService::settings`]; a
//!   present `"value": null` is an error (keys cannot be unset), never a read.
//!   WebSearch shows at most 20 results, whole ones only up to 32 KiB, each
//!   title, address and excerpt cut to one line, and says how many it left out.
//! - **TodoWrite** replaces the agent's own list and returns it in full.
//! - **CronCreate / CronDelete / CronList** keep 5-field cron schedules
//!   (UTC, parsed by `croner`) in a JSON file written atomically (temp file
//!   in the same folder, fsync, rename, fsync of the folder). The engine's
//!   scheduler asks [`CronStore::due`] and calls [`CronStore::mark_fired`].
//!   Each change holds an OS file lock (`STORE.lock`) between processes;
//!   [`CronStore::lock_scheduler`] is the one-scheduler-per-store lock.
//!   An expression no date matches (`0 0 30 2 *`) is refused.
//!   Jitter is a fixed per-job offset derived from the job id.
//!
//! # Per-agent state
//!
//! The read ledger, the todo list and background commands are keyed by
//! (session, agent). An agent never sees another's. When an agent ends the
//! engine calls [`BuiltinTools::agent_finished`], which stops the agent's
//! background commands (SIGTERM, up to two seconds, SIGKILL to each whole
//! process group) and drops its state. When the last `BuiltinTools` clone
//! and every handler it gave out are dropped, any background command still
//! registered is killed.
//!
//! Read, Glob and Grep do their file work on tokio's blocking pool: dropping
//! the call stops waiting for it, and the work itself is bounded (lines,
//! entries, bytes) so it ends soon after.
//!
//! Background commands and process groups are Unix features; on other
//! platforms only the direct child is killed.
//!
//! # Structure
//!
//! - `toolkit.rs` (bottom floor): the `Builtin` trait (its `access`
//!   declares what a call touches), `Hints`, `blocking`, `tool_failed` and
//!   the adapter that checks input (`input.rs`: schemars schemas, errors
//!   naming the field) before a tool runs. `registry.rs` (top floor):
//!   [`BuiltinTools`], the list of tools, flags from zr-types'
//!   `builtin_spec`.
//! - `state.rs`: a generic per-agent map keyed by `(SessionId, AgentId)`
//!   that knows no tool type; each tool owns its state (`ledger.rs`: the
//!   read ledger of Read, Write and Edit; `todo.rs`; `bash/background.rs`).
//! - One file per tool: `bash.rs` (+ `bash/background.rs`), `read.rs`,
//!   `write.rs`, `edit.rs` (+ `edit/matching.rs`), `glob.rs`, `grep.rs` (+
//!   `grep/sink.rs`, over `walk.rs`), `web_fetch.rs` (+
//!   `web_fetch/policy.rs`: [`WebFetchPolicy`], the URL check and the
//!   guarded DNS resolver; `web_fetch/address.rs`: which addresses are not
//!   public), `web_search.rs` (+ `web_search/backend.rs`: [`HttpSearch`]),
//!   `ask_user.rs`, `config.rs`, `todo.rs`, `cron.rs` (+ `cron/tools.rs`,
//!   `cron/store.rs`, `cron/schedule.rs`, `cron/lock.rs`: the file locks
//!   between processes).
//! - `sandbox.rs`: a call's `Confinement` as zr-process' `Sandbox`;
//!   `path.rs`: paths against the context's folder; `bound.rs`: bounded
//!   output; `file.rs`: `read_regular`, how zr reads a file it keeps or
//!   is pointed at (a regular file only, opened without blocking, up to a
//!   size).

mod ask_user;
mod bash;
mod bound;
mod config;
mod cron;
mod edit;
mod error;
mod file;
mod glob;
mod grep;
mod input;
mod ledger;
mod path;
mod read;
mod registry;
mod sandbox;
mod state;
mod todo;
mod toolkit;
mod walk;
mod web_fetch;
mod web_search;
mod write;

pub use ask_user::{AskUserService, Question, QuestionOption, UserAnswer};
pub use config::{ConfigKind, ConfigService, ConfigSetting};
pub use cron::{CronJob, CronStore, NewCronJob, Schedule, SchedulerLock};
pub use error::{CronStoreError, SearchBackendError, ServiceError};
pub use file::{open_regular, read_regular, read_regular_to_string};
pub use registry::BuiltinTools;
pub use sandbox::sandbox_missing;
pub use todo::{TodoItem, TodoStatus};
pub use web_fetch::{WebFetchLimits, WebFetchPolicy, fetch_host};
pub use web_search::{
    BRAVE_DEFAULT_URL, HttpSearch, SearchBackend, SearchQuery, SearchResult, WebSearchService,
};
