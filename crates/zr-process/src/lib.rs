//! Child processes that die with zr.
//!
//! Every process zr starts (Bash commands, background commands, MCP stdio
//! servers, hook commands) goes through [`spawn`] (tokio) or
//! [`spawn_std`], which give the child three things:
//!
//! - its own **process group**, whose guard ([`ProcessGroup`]) kills the
//!   whole group when dropped, so a kill reaches what the child started;
//! - on Linux, **`PR_SET_PDEATHSIG(SIGKILL)`**, set in the child before
//!   `exec` (the workspace's one `unsafe` function, `death.rs`): the kernel
//!   kills the child when zr dies, SIGKILL included, with no destructor
//!   involved. The signal follows the spawning *thread*, so every child is
//!   forked from one thread that lives as long as the process (`spawner.rs`)
//!   and never from a tokio worker or blocking thread that may retire;
//! - a **watcher**: one small `sh` process per zr process that learns each
//!   live group over a pipe and kills every group still listed when the
//!   pipe closes, that is when zr ends however it ends. The death signal
//!   reaches only the direct child; the watcher reaches its grandchildren.
//!
//! With [`spawn_sandboxed`] (Linux), the child and everything it starts
//! also run in an **OS sandbox** ([`Sandbox`]): Landlock lets them write
//! only beneath the writable roots, seccomp keeps them off the network;
//! see [`Sandbox`] for what each policy allows.
//!
//! And a **record**: with [`record_in`], the table of live groups is kept in
//! a file (the CLI puts it in the session folder). A process that escaped
//! both (it left its group with `setsid`; the watcher itself was killed)
//! still carries `ZR_OWNER=PID.START` of the zr that started it, so a later
//! zr finds it with [`leftovers`] and kills it with [`kill_leftovers`];
//! the zr that started it, when it ends, finds it with [`strays`] and
//! kills it with [`kill_strays`].
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! let mut command = tokio::process::Command::new("sleep");
//! command.arg("5").kill_on_drop(true);
//! let (mut child, group) = zr_process::spawn(command, "sleep")?;
//! child.wait().await?;
//! group.end(); // kill what it left in its group; forget the group
//! # Ok(()) }
//! ```
//!
//! # Structure
//!
//! `spawn.rs` (the four entry points) over `spawner.rs` (the one forking
//! thread), `group.rs` ([`ProcessGroup`]), `death.rs` (`before_exec`, the
//! workspace's one `unsafe` function: the `pre_exec` hook that sets the
//! death signal and applies the sandbox, system calls only), `live.rs` (the
//! process-wide table of live groups, told to the watcher and written to
//! the record), `watcher.rs` (a small `sh` that kills every listed group
//! when zr's end of its pipe closes), `record.rs` (records and
//! [`leftovers`]), `procfs.rs` (reads `/proc`), and `sandbox.rs` +
//! `sandbox/linux.rs` (the policy, what the kernel supports, and the
//! Landlock ruleset and seccomp program built in the parent: whatever
//! allocates happens there, never in the child).

mod death;
mod error;
mod group;
mod live;
mod procfs;
mod record;
mod sandbox;
mod spawn;
mod spawner;
mod watcher;

pub use error::SandboxError;
pub use group::{ProcessGroup, Sig, signal_group};
pub use live::OWNER_VAR;
pub use record::{Leftover, Recording, kill_leftovers, kill_strays, leftovers, record_in, strays};
pub use sandbox::{DEVICES, Sandbox, SandboxSupport, sandbox_support};
pub use spawn::{spawn, spawn_sandboxed, spawn_std, spawn_std_sandboxed};

/// The pid of this process's watcher, once a child was started (for tests
/// and diagnostics).
pub fn watcher_pid() -> Option<u32> {
    live::watcher_pid()
}
