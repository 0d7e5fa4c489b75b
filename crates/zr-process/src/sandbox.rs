//! The OS sandbox of a child: which folders it may write and whether it may
//! reach the network, what this kernel can enforce, and (on Linux) the
//! Landlock ruleset and seccomp filter built in the parent for the child to
//! apply before `exec`. The policy and what it allows are documented on [`Sandbox`].

use std::path::PathBuf;
use std::sync::OnceLock;

use crate::error::SandboxError;

#[cfg(target_os = "linux")]
mod linux;
#[cfg(test)]
mod tests;

#[cfg(target_os = "linux")]
pub(crate) use linux::Confinement;

/// Without Linux there is nothing to apply (no value is ever built).
#[cfg(not(target_os = "linux"))]
#[derive(Debug)]
pub(crate) enum Confinement {}

/// The device files every sandboxed child may write (not `ioctl`: that
/// would let it type into zr's terminal), whatever its policy: the sinks and sources a shell redirects to, the
/// controlling terminal, and new pseudo-terminals (`/dev/ptmx` with the
/// `/dev/pts` folder beneath which their ends appear). `/dev/shm` is not
/// one of them: it is a tmpfs whose files are files. A device this machine
/// lacks is skipped.
pub const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// What a sandboxed child may touch ([`crate::spawn_sandboxed`]).
///
/// # What a confined child may do
///
/// - **Read and execute** everything it could before.
/// - **Write** (create, write, truncate, remove, rename, link, make
///   directories, symlinks, fifos, sockets and device nodes, device ioctls)
///   only beneath [`Sandbox::writable`], plus the device files a shell
///   needs, whatever the policy: [`DEVICES`], without device ioctls (a
///   child of zr's session could push keystrokes into zr's terminal with
///   `TIOCSTI`). Nothing else: a read-only
///   sandbox cannot write `/tmp`, `/dev/shm` or the current folder.
///   Landlock checks the file reached, after `..` and symlinks, so a
///   symlink inside a root that points outside it grants nothing.
/// - **Network** ([`Sandbox::network`] false): `socket()` fails with
///   `EPERM` for every address family but `AF_UNIX`, and so does
///   `io_uring_setup` (io_uring can open sockets without `socket()`); on
///   Landlock ABI 4 and later TCP `bind` and `connect` are refused as well.
///   Sockets the child inherited stay usable (zr's own are close-on-exec).
/// - The confinement survives `exec`, `fork`, `setsid` and daemonizing:
///   whatever the child starts is confined the same way. The child gets
///   `PR_SET_NO_NEW_PRIVS`, so set-user-id programs (`sudo`, `su`) do not
///   gain privileges in it. Root is confined too.
///
/// Landlock ABI 3 (Linux 6.2) is the least accepted: before it `truncate`
/// was not controlled, and a read-only child could empty any file. Rights
/// a newer ABI adds (device ioctls, ABI 5) are used when the kernel has
/// them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    /// Folders (and their subtrees) the child may write; empty means a
    /// read-only filesystem (the child can still write [`DEVICES`]). Built
    /// with [`Sandbox::writable`], it holds the system temp folder too.
    pub writable: Vec<PathBuf>,
    /// Whether the child may open network sockets (`AF_INET`, `AF_INET6`,
    /// `AF_PACKET`, `AF_NETLINK`...). `AF_UNIX` is always allowed.
    pub network: bool,
}

impl Sandbox {
    /// Nothing writable but [`DEVICES`] (not even the temp folder), no
    /// network: for read-only agents.
    pub fn read_only() -> Self {
        Self {
            writable: Vec::new(),
            network: false,
        }
    }

    /// `roots` writable, and the system temp folder
    /// ([`std::env::temp_dir`], `/tmp` unless `TMPDIR` says otherwise),
    /// which compilers, package managers and shells' here-documents
    /// expect; no network.
    pub fn writable(roots: impl IntoIterator<Item = PathBuf>) -> Self {
        let mut writable: Vec<PathBuf> = roots.into_iter().collect();
        let temp = std::env::temp_dir();
        if !writable.contains(&temp) {
            writable.push(temp);
        }
        Self {
            writable,
            network: false,
        }
    }

    /// The same sandbox, with the network allowed or not.
    #[must_use]
    pub fn with_network(self, network: bool) -> Self {
        Self { network, ..self }
    }
}

/// What this kernel can enforce, probed once ([`sandbox_support`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SandboxSupport {
    /// The Landlock ABI version in use: the kernel's, capped at the newest
    /// the `landlock` crate knows; `None` without Landlock (not built, or
    /// not in the kernel's `lsm=` list) or off Linux.
    pub landlock_abi: Option<u32>,
    /// Whether seccomp filters can make a system call fail with an errno
    /// on this kernel and architecture (x86_64, aarch64, riscv64).
    pub seccomp: bool,
}

/// The least Landlock ABI accepted (Linux 6.2: `truncate` is controlled).
pub(crate) const LEAST_LANDLOCK_ABI: u32 = 3;

impl SandboxSupport {
    /// What is missing for a full sandbox (a read-only filesystem and no
    /// network), in words; `None` when nothing is.
    pub fn missing(&self) -> Option<String> {
        let mut missing = Vec::new();
        if let Some(fs) = self.missing_landlock() {
            missing.push(fs);
        }
        if !self.seccomp {
            missing.push(self.missing_seccomp());
        }
        (!missing.is_empty()).then(|| missing.join("; "))
    }

    /// What is missing to enforce `sandbox`, as the error to return.
    pub(crate) fn check(&self, sandbox: &Sandbox) -> Result<(), SandboxError> {
        let mut missing = Vec::new();
        if let Some(fs) = self.missing_landlock() {
            missing.push(fs);
        }
        if !sandbox.network && !self.seccomp {
            missing.push(self.missing_seccomp());
        }
        if missing.is_empty() {
            Ok(())
        } else {
            Err(SandboxError::Unsupported {
                missing: missing.join("; "),
            })
        }
    }

    fn missing_landlock(&self) -> Option<String> {
        if !cfg!(target_os = "linux") {
            return Some("sandboxing is Linux-only (Landlock and seccomp)".to_owned());
        }
        match self.landlock_abi {
            None => Some(
                "this kernel has no Landlock (Linux 6.2 or later with `landlock` in its \
                 lsm= list), so the filesystem cannot be made read-only"
                    .to_owned(),
            ),
            Some(abi) if abi < LEAST_LANDLOCK_ABI => Some(format!(
                "this kernel's Landlock ABI {abi} cannot forbid truncating files \
                 (ABI {LEAST_LANDLOCK_ABI}, Linux 6.2, can)"
            )),
            Some(_) => None,
        }
    }

    fn missing_seccomp(&self) -> String {
        if cfg!(target_os = "linux") {
            format!(
                "no seccomp filter on this kernel or architecture ({}), so the network \
                 cannot be turned off",
                std::env::consts::ARCH
            )
        } else {
            "sandboxing is Linux-only (Landlock and seccomp)".to_owned()
        }
    }
}

/// What this kernel supports, probed on first call (no side effect: the
/// Landlock version query and a read of `/proc`).
pub fn sandbox_support() -> &'static SandboxSupport {
    static SUPPORT: OnceLock<SandboxSupport> = OnceLock::new();
    SUPPORT.get_or_init(probe)
}

#[cfg(target_os = "linux")]
fn probe() -> SandboxSupport {
    SandboxSupport {
        landlock_abi: linux::landlock_abi(),
        seccomp: linux::seccomp_works(),
    }
}

#[cfg(not(target_os = "linux"))]
fn probe() -> SandboxSupport {
    SandboxSupport {
        landlock_abi: None,
        seccomp: false,
    }
}

/// Checks that this kernel can enforce `sandbox` and builds what the child
/// applies (opens the roots, creates the ruleset, compiles the filter).
/// Runs in the parent, where allocating is fine.
pub(crate) fn confinement(sandbox: &Sandbox) -> Result<Confinement, SandboxError> {
    sandbox_support().check(sandbox)?;
    #[cfg(target_os = "linux")]
    return Confinement::build(sandbox);
    #[cfg(not(target_os = "linux"))]
    return Err(SandboxError::Unsupported {
        missing: "sandboxing is Linux-only (Landlock and seccomp)".to_owned(),
    });
}
