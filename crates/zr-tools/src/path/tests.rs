//! Tests of the path policy.

use super::*;

#[test]
fn relative_paths_join_the_cwd_and_dots_go() {
    let cwd = Path::new("/work/p");
    assert_eq!(
        resolve(cwd, "src/./a.rs"),
        PathBuf::from("/work/p/src/a.rs")
    );
    assert_eq!(resolve(cwd, "../q/b"), PathBuf::from("/work/q/b"));
    assert_eq!(resolve(cwd, "/etc/hosts"), PathBuf::from("/etc/hosts"));
    assert_eq!(resolve(cwd, "/../x"), PathBuf::from("/x"));
    assert_eq!(normalize(Path::new("../../x")), PathBuf::from("../../x"));
}
