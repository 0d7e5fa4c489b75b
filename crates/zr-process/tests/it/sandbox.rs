//! The OS sandbox against real processes on this kernel: writes beneath
//! the roots only, a read-only filesystem, children confined too, the
//! network off, `..` and symlinks, and `spawn` left as it was.
//!
//! They need Landlock ABI 3 and seccomp, as zr's users on Linux 6.2 and
//! later have them: on a kernel without, they fail rather than skip, and
//! `this_kernel_supports_the_sandbox` says what is missing.

use std::io::ErrorKind;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use zr_process::{Sandbox, SandboxError, sandbox_support, spawn, spawn_sandboxed};

/// A run's exit status and what it printed.
#[derive(Debug)]
struct Run {
    ok: bool,
    stdout: String,
    stderr: String,
}

/// Runs `sh -c script` with `vars`, sandboxed when `sandbox` is given.
async fn sh(sandbox: Option<&Sandbox>, script: &str, vars: &[(&str, &Path)]) -> Run {
    let mut command = tokio::process::Command::new("sh");
    command
        .args(["-c", script])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for (name, value) in vars {
        command.env(name, value);
    }
    let (child, group) = match sandbox {
        Some(sandbox) => spawn_sandboxed(command, "sh", sandbox).unwrap(),
        None => spawn(command, "sh").unwrap(),
    };
    let output = child.wait_with_output().await.unwrap();
    group.end();
    Run {
        ok: output.status.success(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// `run` failed, and for want of permission (not a typo in `script`).
fn assert_refused(run: &Run, script: &str) {
    assert!(!run.ok, "{script} succeeded: {run:?}");
    assert!(
        run.stderr.contains("Permission denied") || run.stderr.contains("not permitted"),
        "{script} failed for another reason: {run:?}"
    );
}

/// A folder outside the system temp folder (which a writable sandbox may
/// write) holding `root/` (writable), `out/` (not) and `out/victim`.
struct Place {
    _dir: tempfile::TempDir,
    root: PathBuf,
    out: PathBuf,
}

impl Place {
    fn new() -> Self {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let root = dir.path().join("root");
        let out = dir.path().join("out");
        std::fs::create_dir(&root).unwrap();
        std::fs::create_dir(&out).unwrap();
        std::fs::write(out.join("victim"), "still here").unwrap();
        std::fs::write(root.join("mine"), "mine").unwrap();
        assert!(
            !root.starts_with(std::env::temp_dir()),
            "{root:?} is in temp"
        );
        Self {
            _dir: dir,
            root,
            out,
        }
    }

    fn vars(&self) -> [(&'static str, &Path); 2] {
        [("ROOT", &self.root), ("OUT", &self.out)]
    }

    fn sandbox(&self) -> Sandbox {
        Sandbox::writable([self.root.clone()])
    }

    /// The files of `out`, sorted.
    fn out_files(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_child_writes_beneath_its_roots_and_nowhere_else() {
    let place = Place::new();
    let sandbox = place.sandbox();
    let vars = place.vars();
    let inside = sh(
        Some(&sandbox),
        r#"echo x > "$ROOT/in.txt" && mkdir "$ROOT/d" && ln -s in.txt "$ROOT/l" && mv "$ROOT/mine" "$ROOT/d/" && rm "$ROOT/d/mine""#,
        &vars,
    )
    .await;
    assert!(inside.ok, "{inside:?}");
    assert_eq!(
        std::fs::read_to_string(place.root.join("in.txt")).unwrap(),
        "x\n"
    );

    for script in [
        r#"echo x > "$OUT/out.txt""#,
        r#"echo x >> "$OUT/victim""#,
        r#": > "$OUT/victim""#,
        r#"truncate -s 0 "$OUT/victim""#,
        r#"rm "$OUT/victim""#,
        r#"mkdir "$OUT/d""#,
        r#"ln -s /etc "$OUT/l""#,
        r#"ln "$ROOT/in.txt" "$OUT/hard""#,
        r#"mv "$ROOT/in.txt" "$OUT/moved""#,
        r#"mv "$OUT/victim" "$ROOT/taken""#,
        r#"mkfifo "$OUT/fifo""#,
    ] {
        let run = sh(Some(&sandbox), script, &vars).await;
        assert_refused(&run, script);
    }
    assert_eq!(place.out_files(), ["victim"]);
    assert_eq!(
        std::fs::read_to_string(place.out.join("victim")).unwrap(),
        "still here"
    );
    assert!(place.root.join("in.txt").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_writable_sandbox_may_write_the_temp_folder() {
    let place = Place::new();
    let run = sh(
        Some(&place.sandbox()),
        r#"f=$(mktemp) && echo x > "$f" && rm "$f""#,
        &[],
    )
    .await;
    assert!(run.ok, "{run:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_read_only_child_reads_everything_and_writes_only_devices() {
    let place = Place::new();
    let vars = place.vars();
    let sandbox = Sandbox::read_only();
    let reads = sh(
        Some(&sandbox),
        r#"cat "$OUT/victim" && ls / > /dev/null && echo gone > /dev/null && head -c 4 /dev/zero | wc -c && cat /etc/passwd | head -1 > /dev/null && echo done"#,
        &vars,
    )
    .await;
    assert!(reads.ok, "{reads:?}");
    assert_eq!(reads.stdout, "still here4\ndone\n");

    let temp = std::env::temp_dir().join(format!("zr-sandbox-ro-{}", std::process::id()));
    for script in [
        r#"echo x > "$TEMP""#,
        r#"mkdir "$TEMP""#,
        r#"mktemp"#,
        r#"echo x > "$ROOT/in.txt""#,
        r#"rm "$ROOT/mine""#,
        r#"echo x > "$OUT/victim""#,
        r#"echo x > /dev/shm/zr-sandbox-ro"#,
        r#"cd "$ROOT" && echo x > here"#,
    ] {
        let vars = [vars[0], vars[1], ("TEMP", temp.as_path())];
        let run = sh(Some(&sandbox), script, &vars).await;
        assert_refused(&run, script);
    }
    assert!(!temp.exists());
    assert!(!Path::new("/dev/shm/zr-sandbox-ro").exists());
    assert!(place.root.join("mine").exists());
    assert!(!place.root.join("in.txt").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn what_the_child_starts_is_confined_too() {
    let place = Place::new();
    let vars = place.vars();
    let run = sh(
        Some(&place.sandbox()),
        r#"
        (sh -c 'echo x > "$OUT/background"'; echo "background $?") &
        wait
        setsid sh -c 'echo x > "$OUT/setsid"; echo "setsid $?"'
        nohup sh -c 'echo x > "$OUT/nohup"; echo "nohup $?"' 2>/dev/null
        bash -c 'exec python3 -c "open(\"$OUT/python\", \"w\")"' 2>/dev/null; echo "python $?"
        "#,
        &vars,
    )
    .await;
    assert!(run.ok, "{run:?}");
    for line in ["background", "setsid", "nohup", "python"] {
        assert!(
            run.stdout
                .lines()
                .any(|l| l.starts_with(line) && !l.ends_with(" 0")),
            "{line} wrote: {run:?}"
        );
    }
    assert_eq!(place.out_files(), ["victim"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn dotdot_and_symlinks_out_of_a_root_grant_nothing() {
    let place = Place::new();
    std::os::unix::fs::symlink(&place.out, place.root.join("link")).unwrap();
    std::os::unix::fs::symlink(place.out.join("victim"), place.root.join("victim")).unwrap();
    let vars = place.vars();
    for script in [
        r#"echo x > "$ROOT/../out/dotdot""#,
        r#"echo x > "$ROOT/link/through""#,
        r#"echo x > "$ROOT/victim""#,
        r#"rm "$ROOT/link/victim""#,
        r#"cd "$ROOT/link" && echo x > cd"#,
    ] {
        let run = sh(Some(&place.sandbox()), script, &vars).await;
        assert_refused(&run, script);
    }
    assert_eq!(place.out_files(), ["victim"]);
    assert_eq!(
        std::fs::read_to_string(place.out.join("victim")).unwrap(),
        "still here"
    );
    // The link itself is in the root: removing it is a write there.
    let run = sh(Some(&place.sandbox()), r#"rm "$ROOT/link""#, &vars).await;
    assert!(run.ok, "{run:?}");
}

/// Python connecting to `port` on loopback: prints `connected` or the error.
const CONNECT: &str = r#"python3 -c '
import socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2)
    print("connected")
except OSError as e:
    print("refused", e.errno)
' "$PORT""#;

/// Whether a connection reached `listener` within a moment.
fn accepted(listener: &TcpListener) -> bool {
    let deadline = Instant::now() + Duration::from_millis(300);
    loop {
        match listener.accept() {
            Ok(_) => return true,
            Err(e) if e.kind() == ErrorKind::WouldBlock && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(_) => return false,
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_network_is_off_unless_allowed() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = PathBuf::from(listener.local_addr().unwrap().port().to_string());
    let vars = [("PORT", port.as_path())];

    let off = sh(Some(&Sandbox::read_only()), CONNECT, &vars).await;
    assert_eq!(off.stdout.trim(), "refused 1", "EPERM: {off:?}");
    assert!(!accepted(&listener), "the listener saw a connection");
    let bash = sh(
        Some(&Sandbox::read_only()),
        r#"bash -c 'echo hi > /dev/tcp/127.0.0.1/$PORT' 2>/dev/null; echo $?"#,
        &vars,
    )
    .await;
    assert_eq!(bash.stdout.trim(), "1", "{bash:?}");
    assert!(!accepted(&listener), "the listener saw bash's connection");

    let unix = sh(
        Some(&Sandbox::read_only()),
        r#"python3 -c 'import socket; a, b = socket.socketpair(); a.send(b"u"); print(b.recv(1).decode(), socket.socket(socket.AF_UNIX).family.name)'"#,
        &[],
    )
    .await;
    assert_eq!(unix.stdout.trim(), "u AF_UNIX", "{unix:?}");

    let on = sh(
        Some(&Sandbox::read_only().with_network(true)),
        CONNECT,
        &vars,
    )
    .await;
    assert_eq!(on.stdout.trim(), "connected", "{on:?}");
    assert!(accepted(&listener), "the listener saw no connection");
}

/// No device ioctls: a child stays in zr's session, and `TIOCSTI` on the
/// terminal would type into zr's own input. A terminal ioctl (`TCGETS`)
/// on `/dev/null` answers "not a terminal" plainly and "permission
/// denied" in the sandbox.
#[tokio::test(flavor = "multi_thread")]
async fn a_child_makes_no_device_ioctls() {
    let script = "python3 -c \"import fcntl, os\nfd = os.open('/dev/null', os.O_WRONLY)\ntry:\n    fcntl.ioctl(fd, 0x5401, bytes(64))\nexcept OSError as e:\n    print(e.errno)\"";
    let plain = sh(None, script, &[]).await;
    assert_eq!(plain.stdout.trim(), "25", "ENOTTY: {plain:?}");
    for sandbox in [
        Sandbox::read_only(),
        Sandbox::writable([std::env::temp_dir()]),
    ] {
        let run = sh(Some(&sandbox), script, &[]).await;
        assert_eq!(run.stdout.trim(), "13", "EACCES: {run:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn spawn_without_a_sandbox_is_unchanged() {
    let place = Place::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = PathBuf::from(listener.local_addr().unwrap().port().to_string());
    let [root, out] = place.vars();
    let run = sh(
        None,
        &format!(r#"echo x > "$OUT/plain" && rm "$OUT/victim" && {CONNECT}"#),
        &[root, out, ("PORT", port.as_path())],
    )
    .await;
    assert!(run.ok, "{run:?}");
    assert_eq!(run.stdout.trim(), "connected");
    assert!(accepted(&listener));
    assert_eq!(place.out_files(), ["plain"]);
    let status = sh(
        None,
        "grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status",
        &[],
    )
    .await;
    assert_eq!(status.stdout, "NoNewPrivs:\t0\nSeccomp:\t0\n", "{status:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_ruleset_reaches_neither_the_program_nor_the_parent() {
    let place = Place::new();
    let landlock_fds = || {
        std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
            .filter(|target| target.to_string_lossy().contains("landlock"))
            .count()
    };
    let run = sh(
        Some(&place.sandbox()),
        "ls -l /proc/$$/fd; grep -E '^(NoNewPrivs|Seccomp):' /proc/$$/status",
        &[],
    )
    .await;
    assert!(run.ok, "{run:?}");
    assert!(!run.stdout.contains("landlock"), "{run:?}");
    assert!(
        run.stdout.contains("NoNewPrivs:\t1\nSeccomp:\t2\n"),
        "{run:?}"
    );
    // Other tests may hold one for the moment of their spawn.
    let deadline = Instant::now() + Duration::from_secs(2);
    while landlock_fds() > 0 {
        assert!(
            Instant::now() < deadline,
            "a ruleset stays open in the parent"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_root_is_refused_before_anything_starts() {
    let missing = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("zr-sandbox-no-such-root");
    let command = tokio::process::Command::new("true");
    let error = spawn_sandboxed(command, "true", &Sandbox::writable([missing.clone()]))
        .err()
        .unwrap();
    let inner = error.get_ref().unwrap().downcast_ref::<SandboxError>();
    assert!(
        matches!(inner, Some(SandboxError::Root { path, .. }) if *path == missing),
        "{error:?}"
    );
}

#[test]
fn this_kernel_supports_the_sandbox() {
    let support = sandbox_support();
    assert!(
        support.landlock_abi.is_some_and(|abi| abi >= 3),
        "{support:?}"
    );
    assert!(support.seccomp, "{support:?}");
    assert_eq!(support.missing(), None, "{support:?}");
}

/// Not a test: the cost of a sandboxed spawn. `cargo test -p zr-process
/// --release --test it -- --ignored --nocapture sandbox::cost`.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "a measurement"]
async fn cost_of_a_sandboxed_spawn() {
    const RUNS: u32 = 200;
    let place = Place::new();
    let sandbox = place.sandbox();
    let mut plain = Duration::ZERO;
    let mut sandboxed = Duration::ZERO;
    for _ in 0..RUNS {
        for which in [None, Some(&sandbox)] {
            let started = Instant::now();
            let run = sh(which, "true", &[]).await;
            assert!(run.ok);
            match which {
                None => plain += started.elapsed(),
                Some(_) => sandboxed += started.elapsed(),
            }
        }
    }
    #[allow(clippy::print_stdout, reason = "the measurement's report")]
    {
        println!("{:?}", sandbox_support());
        println!(
            "sh -c true, mean of {RUNS} (spawn to exit): plain {:?}, sandboxed {:?}",
            plain / RUNS,
            sandboxed / RUNS
        );
    }
}
