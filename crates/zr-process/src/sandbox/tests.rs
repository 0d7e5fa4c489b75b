//! The policy's constructors and the support check's words.

use std::path::PathBuf;

use super::{Sandbox, SandboxSupport};

#[test]
fn read_only_writes_nothing_not_even_temp() {
    let sandbox = Sandbox::read_only();
    assert!(sandbox.writable.is_empty());
    assert!(!sandbox.network);
}

#[test]
fn writable_adds_the_temp_folder_once() {
    let temp = std::env::temp_dir();
    let sandbox = Sandbox::writable([PathBuf::from("/work/p"), temp.clone()]);
    assert_eq!(sandbox.writable, [PathBuf::from("/work/p"), temp.clone()]);
    let sandbox = Sandbox::writable([PathBuf::from("/work/p")]).with_network(true);
    assert_eq!(sandbox.writable, [PathBuf::from("/work/p"), temp]);
    assert!(sandbox.network);
}

#[test]
fn a_kernel_without_landlock_is_refused_in_words() {
    let none = SandboxSupport {
        landlock_abi: None,
        seccomp: true,
    };
    let error = none.check(&Sandbox::read_only()).unwrap_err().to_string();
    assert!(error.contains("no Landlock"), "{error}");
    let old = SandboxSupport {
        landlock_abi: Some(2),
        seccomp: true,
    };
    let error = old.check(&Sandbox::read_only()).unwrap_err().to_string();
    assert!(error.contains("truncating"), "{error}");
}

#[test]
fn seccomp_is_needed_only_with_the_network_off() {
    let support = SandboxSupport {
        landlock_abi: Some(7),
        seccomp: false,
    };
    assert!(
        support
            .check(&Sandbox::read_only().with_network(true))
            .is_ok()
    );
    let error = support
        .check(&Sandbox::read_only())
        .unwrap_err()
        .to_string();
    assert!(error.contains("network cannot be turned off"), "{error}");
    assert!(support.missing().is_some());
    let full = SandboxSupport {
        landlock_abi: Some(7),
        seccomp: true,
    };
    assert_eq!(full.missing(), None);
}
