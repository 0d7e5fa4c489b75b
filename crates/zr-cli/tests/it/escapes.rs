//! Terminal control sequences in the model's text (an OSC 52 clipboard
//! write, a title change): the answer keeps them when standard output is
//! a file or a pipe (the raw text is what was asked for), loses them on a
//! terminal, and `zr sessions show` never prints them.

use std::fs::File;
use std::io::Read as _;
use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::pty::openpty;

use crate::support::{TempProject, stdout, zr_process};

/// The clipboard write and the title change.
const CLIPBOARD: &str = "\u{1b}]52;c;cm0gLXJmIH4=\u{7}";
const TITLE: &str = "\u{1b}]0;pwned\u{7}";

fn project() -> TempProject {
    let project = TempProject::new();
    let text = format!("before{CLIPBOARD}middle{TITLE}after\nline two");
    let script = serde_json::json!({"agents": {"root": [{"turns": [{"text": text}]}]}});
    project.write("s.json", &script.to_string());
    project
}

#[test]
fn the_answer_keeps_its_escapes_when_piped() {
    let project = project();
    let out = project.zr_ok(&["run", "--script", "s.json", "go"]);
    assert_eq!(
        stdout(&out),
        format!("before{CLIPBOARD}middle{TITLE}after\nline two\n")
    );
}

#[test]
fn the_answer_loses_its_escapes_on_a_terminal() {
    let project = project();
    let pty = openpty(None, None).expect("a pseudo-terminal");
    let mut cmd = zr_process();
    cmd.args(["run", "--script", "s.json", "go"])
        .current_dir(project.path())
        .stdin(Stdio::null())
        .stdout(Stdio::from(pty.slave.try_clone().expect("slave fd")))
        .stderr(Stdio::from(pty.slave));
    let mut child = cmd.spawn().expect("zr starts");
    drop(cmd);
    let mut master = File::from(pty.master);
    let reader = std::thread::spawn(move || {
        let mut all = Vec::new();
        let mut buf = [0_u8; 4096];
        // Linux answers EIO once no one has the slave side open.
        while let Ok(n @ 1..) = master.read(&mut buf) {
            all.extend_from_slice(&buf[..n]);
        }
        all
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().expect("wait").is_none() {
        assert!(Instant::now() < deadline, "zr did not finish");
        std::thread::sleep(Duration::from_millis(20));
    }
    let all = String::from_utf8_lossy(&reader.join().expect("reader")).into_owned();
    assert!(all.contains("before"), "{all:?}");
    assert!(all.contains("after"), "{all:?}");
    assert!(
        !all.contains("\u{1b}]"),
        "an OSC sequence reached the terminal: {all:?}"
    );
}

#[test]
fn sessions_show_never_prints_control_sequences() {
    let project = project();
    project.zr_ok(&["run", "--script", "s.json", "go"]);
    let id = std::fs::read_dir(project.path().join(".zr/sessions"))
        .expect("sessions")
        .map(|e| e.expect("entry").file_name().into_string().expect("utf-8"))
        .next()
        .expect("a session");
    for args in [
        vec!["sessions", "show", id.as_str()],
        vec!["sessions", "show", id.as_str(), "--agent", "root"],
    ] {
        let text = stdout(&project.zr_ok(&args));
        assert!(text.contains("before"), "{args:?}: {text}");
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{args:?}: {text:?}"
        );
    }
}
