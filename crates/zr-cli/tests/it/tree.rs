//! The live tree in a real pseudo-terminal: `zr run` on a terminal shows
//! its agents while they run, then leaves a clean screen (the summary, the
//! answer, the cursor shown), also when interrupted with Ctrl-C.

use std::fs::File;
use std::io::Read as _;
use std::process::{Child, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nix::pty::{Winsize, openpty};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::support::{TempProject, zr_process};

const ROWS: u16 = 24;
const COLS: u16 = 100;

/// The root starts a background worker (a 2 s shell command) and two
/// explore agents (1.5 s before their first tool, 0.8 s more to answer),
/// then answers 0.6 s after they are done: about 3 s in all.
const SCRIPT: &str = r#"{"agents": {
  "root": [{"turns": [
    {"tool_calls": [
      {"name": "Task", "input": {"description": "crawl the docs", "prompt": "crawl", "subagent_type": "general-purpose", "run_in_background": true}},
      {"name": "MultiTask", "input": {"tasks": [
        {"description": "look at the files", "prompt": "look", "subagent_type": "explore"},
        {"description": "count the lines", "prompt": "count", "subagent_type": "explore"}]}}]},
    {"delay_ms": 600, "text": "All done."}]}],
  "explore": [{"turns": [
    {"delay_ms": 1500, "tool_calls": [{"name": "Glob", "input": {"pattern": "*.json"}}]},
    {"delay_ms": 800, "text": "found script.json"}]}],
  "general-purpose": [{"turns": [
    {"tool_calls": [{"name": "Bash", "input": {"command": "sleep 2"}}]},
    {"text": "crawled"}]}]}}"#;

/// `zr` running on a pseudo-terminal of [`ROWS`] x [`COLS`], its output
/// read into a terminal emulator of the same size.
pub(crate) struct Terminal {
    pub(crate) child: Child,
    screen: Arc<Mutex<vt100::Parser>>,
    reader: Option<JoinHandle<()>>,
    /// The master side, for typing.
    keys: File,
}

impl Terminal {
    /// Starts `zr ARGS` in `project` with the pseudo-terminal as its
    /// standard input, output and error.
    fn spawn(project: &TempProject, args: &[&str]) -> Self {
        Self::spawn_with(project, args, &[])
    }

    /// As [`Terminal::spawn`], with `env` set on top of `zr_process()`'s.
    pub(crate) fn spawn_with(project: &TempProject, args: &[&str], env: &[(&str, &str)]) -> Self {
        let size = Winsize {
            ws_row: ROWS,
            ws_col: COLS,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        let pty = openpty(Some(&size), None).expect("a pseudo-terminal");
        let mut cmd = zr_process();
        cmd.envs(env.iter().copied());
        cmd.args(args)
            .current_dir(project.path())
            .stdin(Stdio::from(pty.slave.try_clone().expect("slave fd")))
            .stdout(Stdio::from(pty.slave.try_clone().expect("slave fd")))
            .stderr(Stdio::from(pty.slave));
        let child = cmd.spawn().expect("zr starts");
        // The command holds the slave's fds: without them, the master reads
        // end once the child (and whatever it started) closed the terminal.
        drop(cmd);
        let screen = Arc::new(Mutex::new(vt100::Parser::new(
            ROWS.try_into().expect("ROWS is not 0"),
            COLS.try_into().expect("COLS is not 0"),
            0,
        )));
        let mut master = File::from(pty.master);
        let keys = master.try_clone().expect("the master fd");
        let parser = Arc::clone(&screen);
        let reader = std::thread::spawn(move || {
            let mut buf = [0_u8; 4096];
            // Linux answers EIO once no one has the slave side open.
            while let Ok(n @ 1..) = master.read(&mut buf) {
                parser.lock().expect("screen lock").process(&buf[..n]);
            }
        });
        Self {
            child,
            screen,
            reader: Some(reader),
            keys,
        }
    }

    /// Types `text` at the terminal (a line ends with `\r`, as Enter).
    pub(crate) fn type_text(&mut self, text: &str) {
        use std::io::Write as _;
        self.keys.write_all(text.as_bytes()).expect("typing");
        self.keys.flush().expect("typing");
    }

    /// The screen's rows, trailing spaces and empty rows at the end
    /// removed; and whether the cursor is hidden.
    pub(crate) fn rows(&self) -> (Vec<String>, bool) {
        let parser = self.screen.lock().expect("screen lock");
        let screen = parser.screen();
        let mut rows: Vec<String> = screen
            .rows(0, COLS)
            .map(|r| r.trim_end().to_owned())
            .collect();
        while rows.last().is_some_and(String::is_empty) {
            rows.pop();
        }
        (rows, screen.hide_cursor())
    }

    /// Polls the screen (30 s at most) until `ready` holds for its rows.
    pub(crate) fn wait_for(
        &self,
        what: &str,
        ready: impl Fn(&[String]) -> bool,
    ) -> (Vec<String>, bool) {
        self.wait_within(Duration::from_secs(30), what, ready)
    }

    /// As [`Terminal::wait_for`], for at most `within`.
    pub(crate) fn wait_within(
        &self,
        within: Duration,
        what: &str,
        ready: impl Fn(&[String]) -> bool,
    ) -> (Vec<String>, bool) {
        let deadline = Instant::now() + within;
        loop {
            let (rows, hidden) = self.rows();
            if ready(&rows) {
                return (rows, hidden);
            }
            assert!(
                Instant::now() < deadline,
                "the screen never showed {what}; it shows:\n{}",
                rows.join("\n")
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits for zr to exit with `code`; the final screen's rows and the
    /// rows as one text, after checking that the cursor is shown again.
    pub(crate) fn finish(&mut self, code: i32) -> (Vec<String>, String) {
        let status = self.wait();
        let (rows, hidden) = self.rows();
        let screen = rows.join("\n");
        assert_eq!(status.code(), Some(code), "{screen}");
        assert!(!hidden, "the cursor is shown again:\n{screen}");
        (rows, screen)
    }

    /// Waits (60 s at most) for the child to exit, then for its output to
    /// be read to the end.
    fn wait(&mut self) -> ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("waiting for zr") {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("zr did not exit within 60 s:\n{}", self.rows().0.join("\n"));
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let reader = self.reader.take().expect("waited once");
        let deadline = Instant::now() + Duration::from_secs(10);
        while !reader.is_finished() {
            assert!(
                Instant::now() < deadline,
                "the terminal stayed open 10 s after zr exited"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        reader.join().expect("the reader thread");
        status
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The screen with what varies from run to run replaced: times (`12.3s`,
/// `1m05s`) by `[time]`, token counts (estimated from requests that hold
/// the temporary folder's path) by `[n] tok`, session ids by `[session]`.
/// (insta's regex filters are not enabled in this workspace.)
pub(crate) fn normalised(rows: &[String]) -> String {
    rows.iter()
        .map(|row| {
            let words: Vec<&str> = row.split(' ').collect();
            words
                .iter()
                .enumerate()
                .map(|(i, word)| normalise_word(word, words.get(i + 1) == Some(&"tok")))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `word` normalised; `tokens`: the next word is `tok`.
fn normalise_word(word: &str, tokens: bool) -> String {
    let (core, close) = match word.strip_suffix(')') {
        Some(core) => (core, ")"),
        None => (word, ""),
    };
    let digits_and = |w: &str, extra: &[char]| {
        w.starts_with(|c: char| c.is_ascii_digit())
            && w.chars().all(|c| c.is_ascii_digit() || extra.contains(&c))
    };
    let replaced = match core.strip_suffix('s') {
        Some(t) if digits_and(t, &['.', 'm']) => "[time]",
        _ if tokens && digits_and(core, &['.', 'k', 'M']) => "[n]",
        _ if core.starts_with("s-") && core.len() == 24 => "[session]",
        _ => return word.to_owned(),
    };
    format!("{replaced}{close}")
}

fn project() -> TempProject {
    let project = TempProject::new();
    project.write("script.json", SCRIPT);
    // The background worker's Bash must run: zr never asks, so it is
    // allowed here.
    project.write("zr.toml", "[permissions]\nallow = [\"Bash\"]\n");
    project
}

/// While the worker's shell command runs, every agent is on the screen.
fn all_running(rows: &[String]) -> bool {
    let has = |text: &str| rows.iter().any(|r| r.contains(text));
    has("▸ root  running MultiTask")
        && has("running Bash")
        && has("look at the files")
        && has("count the lines")
}

#[test]
fn the_tree_shows_the_agents_then_collapses_into_a_summary() {
    let project = project();
    let mut term = Terminal::spawn(&project, &["run", "--script", "script.json", "go"]);
    let (running, hidden) = term.wait_for("every agent running", all_running);
    assert!(hidden, "the cursor is hidden while the tree is drawn");
    // One line per agent, children indented under the root, the background
    // worker marked, each with its tool, turns, tokens and time.
    assert_eq!(running.len(), 4, "{}", running.join("\n"));
    assert!(running[0].starts_with("▸ root  running MultiTask · 1 turn · "));
    assert!(running[1].starts_with("  ▸ general-purpose [bg]  running Bash · 1 turn · "));
    assert!(running[1].ends_with("  crawl the docs"));
    assert!(running[2].starts_with("  ▸ explore  running"));
    assert!(running[2].ends_with("  look at the files"));
    assert!(running[3].starts_with("  ▸ explore  running"));
    assert!(running[3].ends_with("  count the lines"));

    let (rows, _) = term.finish(0);
    insta::assert_snapshot!("tree_final_screen", normalised(&rows));
}

#[test]
fn ctrl_c_leaves_a_clean_screen() {
    let project = project();
    let mut term = Terminal::spawn(&project, &["run", "--script", "script.json", "go"]);
    let (_, hidden) = term.wait_for("every agent running", all_running);
    assert!(hidden);
    let pid = Pid::from_raw(i32::try_from(term.child.id()).unwrap());
    kill(pid, Signal::SIGINT).expect("SIGINT sent");
    let (rows, screen) = term.finish(130);
    assert!(
        !rows.iter().any(|r| r.starts_with("▸ root")),
        "no tree is left:\n{screen}"
    );
    for task in ["crawl the docs", "look at the files", "count the lines"] {
        let lines = rows.iter().filter(|r| r.contains(task)).count();
        assert_eq!(lines, 1, "{task} once, in the summary:\n{screen}");
    }
    assert!(screen.contains("interrupted"), "{screen}");
    assert_eq!(
        screen.matches("zr resume s-").count(),
        1,
        "the session is named once, after the agents stopped:\n{screen}"
    );
    assert!(screen.contains("To continue it: zr resume s-"), "{screen}");
}

/// A terminal that cannot move its cursor (`TERM=dumb`) gets the plain
/// progress lines, not the tree.
#[test]
fn a_dumb_terminal_gets_plain_lines() {
    let project = project();
    let mut term = Terminal::spawn_with(
        &project,
        &["run", "--script", "script.json", "go"],
        &[("TERM", "dumb")],
    );
    let (rows, screen) = term.finish(0);
    assert!(
        !screen.contains('▸') && !screen.contains('✓'),
        "no tree glyphs:\n{screen}"
    );
    assert!(
        rows.iter()
            .any(|r| r.starts_with("[root.0001-general-purpose] started in the background")),
        "plain lines:\n{screen}"
    );
    assert_eq!(
        rows.last().map(String::as_str),
        Some("All done."),
        "{screen}"
    );
}

/// A log line while the tree is up (here the engine's warning about a tool
/// that could not be carried out) is written above the tree: it stays on
/// the screen and the tree's redraws leave no stale line behind.
#[test]
fn a_warning_while_the_tree_is_up_stays_above_it() {
    let project = TempProject::new();
    project.write(
        "script.json",
        r#"{"agents": {"root": [{"turns": [
          {"delay_ms": 400, "tool_calls": [{"name": "FindTool", "input": {"query": "select:CronList"}}]},
          {"delay_ms": 400, "tool_calls": [{"name": "CronList", "input": {}}]},
          {"delay_ms": 600, "text": "All done."}]}]}}"#,
    );
    project.write("zr.toml", "[permissions]\nallow = [\"CronList\"]\n");
    // A folder where the cron store's file belongs: CronList cannot read it.
    std::fs::create_dir_all(project.path().join(".zr/cron.json")).unwrap();
    let mut term = Terminal::spawn(&project, &["run", "--script", "script.json", "go"]);
    assert_eq!(term.wait().code(), Some(0));
    let (rows, _) = term.rows();
    let screen = rows.join("\n");
    let warnings = rows
        .iter()
        .filter(|r| r.contains("WARN tool call could not be carried out tool=CronList"))
        .count();
    assert_eq!(warnings, 1, "the warning, once:\n{screen}");
    assert!(
        !rows.iter().any(|r| r.starts_with("▸ root")),
        "no stale tree line:\n{screen}"
    );
    assert!(
        rows.iter().any(|r| r.starts_with("total completed")),
        "{screen}"
    );
    assert_eq!(
        rows.last().map(String::as_str),
        Some("All done."),
        "{screen}"
    );
}
