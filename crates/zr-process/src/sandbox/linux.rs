//! The Linux sandbox, built in the parent: a Landlock ruleset (a file
//! descriptor holding the rules) and a compiled seccomp program, for the
//! child to apply with three system calls before `exec` (`death.rs`).

use std::collections::BTreeMap;
use std::os::fd::{AsRawFd as _, OwnedFd, RawFd};

use landlock::{
    ABI, AccessFs, AccessNet, BitFlags, LandlockStatus, PathBeneath, PathFd, RestrictSelf, Ruleset,
    RulesetAttr as _, RulesetCreatedAttr as _,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use super::{DEVICES, Sandbox};
use crate::error::SandboxError;

/// What the child applies: a Landlock ruleset and, with the network off, a
/// seccomp program. Dropping it closes the ruleset in the parent (the
/// kernel made it close-on-exec, so the child's copy goes at `exec`).
pub(crate) struct Confinement {
    ruleset: OwnedFd,
    /// The program in the kernel's layout, never empty, its length a `u16`.
    filter: Option<Vec<libc::sock_filter>>,
}

impl std::fmt::Debug for Confinement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Confinement")
            .field("ruleset", &self.ruleset)
            .field("filter_len", &self.filter.as_ref().map(Vec::len))
            .finish()
    }
}

impl Confinement {
    /// Opens the roots, creates the ruleset and compiles the filter.
    pub(crate) fn build(sandbox: &Sandbox) -> Result<Self, SandboxError> {
        let ruleset = ruleset(sandbox)?;
        let filter = if sandbox.network {
            None
        } else {
            Some(no_network_filter()?)
        };
        Ok(Self { ruleset, filter })
    }

    /// The ruleset, for `landlock_restrict_self`.
    pub(crate) fn ruleset_fd(&self) -> RawFd {
        self.ruleset.as_raw_fd()
    }

    /// The seccomp program for `seccomp(SECCOMP_SET_MODE_FILTER)`, if the
    /// network is off. Allocates nothing (the child calls it); the
    /// pointer is valid while `self` is.
    pub(crate) fn filter(&self) -> Option<libc::sock_fprog> {
        let filter = self.filter.as_ref()?;
        Some(libc::sock_fprog {
            // `build` checked the length.
            len: u16::try_from(filter.len()).unwrap_or(0),
            // The kernel copies the program and never writes it.
            filter: filter.as_ptr().cast_mut(),
        })
    }
}

/// The write-like rights: restricted everywhere, granted beneath the
/// writable roots. `ResolveUnix` (ABI 9, connecting to a UNIX socket by
/// path) is deliberately absent: `AF_UNIX` stays open, as the policy says.
fn write_rights() -> BitFlags<AccessFs> {
    AccessFs::WriteFile
        | AccessFs::RemoveFile
        | AccessFs::RemoveDir
        | AccessFs::MakeChar
        | AccessFs::MakeDir
        | AccessFs::MakeReg
        | AccessFs::MakeSock
        | AccessFs::MakeFifo
        | AccessFs::MakeBlock
        | AccessFs::MakeSym
        | AccessFs::Refer
        | AccessFs::Truncate
        | AccessFs::IoctlDev
}

/// The rights that make sense on a device file. Not `IoctlDev`: a child
/// stays in zr's session, and an ioctl on `/dev/tty` (`TIOCSTI`) would
/// push keystrokes into zr's own terminal, outside the sandbox.
fn device_rights() -> BitFlags<AccessFs> {
    AccessFs::WriteFile | AccessFs::Truncate
}

/// The ruleset fd. Best effort: rights this kernel lacks are dropped (the
/// caller checked the least ABI); no ruleset at all is an error.
fn ruleset(sandbox: &Sandbox) -> Result<OwnedFd, SandboxError> {
    let landlock = |e: landlock::RulesetError| SandboxError::Landlock {
        source: std::io::Error::other(e),
    };
    let mut ruleset = Ruleset::default()
        .handle_access(write_rights())
        .map_err(landlock)?;
    if !sandbox.network {
        ruleset = ruleset
            .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
            .map_err(landlock)?;
    }
    let mut created = ruleset.create().map_err(landlock)?;
    for root in &sandbox.writable {
        let fd = PathFd::new(root).map_err(|e| SandboxError::Root {
            path: root.clone(),
            source: std::io::Error::other(e),
        })?;
        created = created
            .add_rule(PathBeneath::new(fd, write_rights()))
            .map_err(landlock)?;
    }
    for device in DEVICES {
        // A device this machine lacks cannot be written anyway.
        let Ok(fd) = PathFd::new(device) else {
            continue;
        };
        created = created
            .add_rule(PathBeneath::new(fd, device_rights()))
            .map_err(landlock)?;
    }
    let fd: Option<OwnedFd> = created.into();
    fd.ok_or_else(|| SandboxError::Unsupported {
        missing: "this kernel has no Landlock: no ruleset could be created".to_owned(),
    })
}

/// `socket()` of any family but `AF_UNIX`, and `io_uring_setup`, fail with
/// `EPERM`; everything else is allowed. A system call of another
/// architecture (32-bit x86 on x86_64) kills the process: seccompiler
/// checks the architecture first. In the kernel's layout, with a length
/// that fits `sock_fprog` (the kernel refuses more than `BPF_MAXINSNS`).
fn no_network_filter() -> Result<Vec<libc::sock_filter>, SandboxError> {
    let seccomp = |e: seccompiler::BackendError| SandboxError::Seccomp {
        source: std::io::Error::other(e),
    };
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| SandboxError::Seccomp {
        source: std::io::Error::other(e),
    })?;
    let not_unix = SeccompRule::new(vec![
        SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Ne,
            libc::AF_UNIX as u64,
        )
        .map_err(seccomp)?,
    ])
    .map_err(seccomp)?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    // x32 system calls pass the x86_64 architecture check with this bit
    // set in their number (socket and io_uring_setup keep theirs).
    let x32 = [
        0,
        if arch == TargetArch::x86_64 {
            X32_BIT
        } else {
            0
        },
    ];
    for bit in x32 {
        rules.insert(libc::SYS_socket | bit, vec![not_unix.clone()]);
        // io_uring's IORING_OP_SOCKET opens sockets without socket().
        rules.insert(libc::SYS_io_uring_setup | bit, Vec::new());
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(seccomp)?;
    let program = BpfProgram::try_from(filter).map_err(seccomp)?;
    if program.is_empty() || program.len() > usize::from(u16::MAX) {
        return Err(SandboxError::Seccomp {
            source: std::io::Error::other(format!("a program of {} instructions", program.len())),
        });
    }
    Ok(program
        .into_iter()
        .map(|op| libc::sock_filter {
            code: op.code,
            jt: op.jt,
            jf: op.jf,
            k: op.k,
        })
        .collect())
}

/// `__X32_SYSCALL_BIT`: an x32 system call on an x86_64 kernel.
const X32_BIT: i64 = 0x4000_0000;

/// The Landlock ABI in use, `None` without Landlock. `RestrictSelf::apply`
/// with no flag and without `no_new_privs` only queries the version.
pub(super) fn landlock_abi() -> Option<u32> {
    const KNOWN: [ABI; 10] = [
        ABI::V1,
        ABI::V2,
        ABI::V3,
        ABI::V4,
        ABI::V5,
        ABI::V6,
        ABI::V7,
        ABI::V8,
        ABI::V9,
        ABI::V10,
    ];
    let status = RestrictSelf::default().no_new_privs(false).apply().ok()?;
    let LandlockStatus::Available { effective_abi, .. } = status.landlock else {
        return None;
    };
    // A kernel newer than the crate shows as the newest ABI the crate knows.
    let at = KNOWN.iter().rposition(|&abi| abi <= effective_abi)?;
    u32::try_from(at + 1).ok()
}

/// Whether seccomp filters with errno results work here: the kernel lists
/// the `errno` action, and seccompiler knows this architecture.
pub(super) fn seccomp_works() -> bool {
    TargetArch::try_from(std::env::consts::ARCH).is_ok()
        && std::fs::read_to_string("/proc/sys/kernel/seccomp/actions_avail")
            .is_ok_and(|actions| actions.split_whitespace().any(|a| a == "errno"))
}
