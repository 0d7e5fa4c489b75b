//! `zr sessions show --html`: the page rendered in a real headless
//! Chromium, and its screenshot checked by its pixels: one bar per agent
//! in the status colour, the two explorers that ran side by side
//! overlapping, the third waiting (a grey bar) until a slot was free, and
//! the root's bar spanning them all. Also `show`'s text and its errors on
//! the same session.

#![allow(clippy::unwrap_used, reason = "test helpers")]

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{TempProject, stderr, stdout};

/// A root that sends three explorers, two at a time: each explorer thinks
/// for 400 ms, so the third waits for the first slot.
const SCRIPT: &str = r#"{"agents": {
  "root": [{"turns": [
    {"tool_calls": [{"name": "MultiTask", "input": {"tasks": [
      {"description": "a", "prompt": "look at a", "subagent_type": "explore"},
      {"description": "b", "prompt": "look at b", "subagent_type": "explore"},
      {"description": "c", "prompt": "look at c", "subagent_type": "explore"}]}}]},
    {"text": "All three looked."}]}],
  "explore": [{"turns": [{"delay_ms": 400, "text": "looked <here> & there"}]}]}}"#;

/// Bar colours of the page (`Colour::css` in the CLI).
pub(crate) const COMPLETED: [u8; 3] = [0x2e, 0x9e, 0x5b];
const QUEUED: [u8; 3] = [0xc4, 0xc9, 0xd2];

/// The browser: `$ZR_BROWSER`, else the first Chromium on `PATH`
/// (`cargo xtask deps` installs Debian's `chromium-headless-shell`).
fn browser() -> PathBuf {
    if let Some(path) = std::env::var_os("ZR_BROWSER") {
        return PathBuf::from(path);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        for name in ["chromium-headless-shell", "chromium", "chromium-browser"] {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    panic!("no headless Chromium on PATH: `cargo xtask deps` installs chromium-headless-shell");
}

/// A screenshot of `page`, decoded to rows of RGB pixels.
pub(crate) fn screenshot(page: &Path, out: &Path) -> (u32, u32, Vec<u8>) {
    let status = Command::new(browser())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--force-color-profile=srgb",
            "--force-device-scale-factor=1",
            "--window-size=1280,700",
        ])
        .arg(format!("--screenshot={}", out.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(status.status.success(), "{}", stderr(&status));
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(out).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    assert!(channels >= 3, "{:?}", info.color_type);
    let rgb = buf
        .chunks(channels)
        .take((info.width * info.height) as usize)
        .flat_map(|p| [p[0], p[1], p[2]])
        .collect();
    (info.width, info.height, rgb)
}

/// A solid rectangle of one colour: left, top, right, bottom (inclusive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bar {
    pub(crate) left: u32,
    pub(crate) top: u32,
    pub(crate) right: u32,
    pub(crate) bottom: u32,
}

impl Bar {
    fn height(self) -> u32 {
        self.bottom - self.top + 1
    }

    fn overlap(self, other: Self) -> u32 {
        (self.right.min(other.right) + 1).saturating_sub(self.left.max(other.left))
    }
}

/// The connected areas of `colour` at least `min_height` tall (bars, not
/// the legend's swatches or text).
pub(crate) fn bars(image: &(u32, u32, Vec<u8>), colour: [u8; 3], min_height: u32) -> Vec<Bar> {
    let (width, height, rgb) = image;
    let (w, h) = (*width as usize, *height as usize);
    let is = |x: usize, y: usize| rgb[(y * w + x) * 3..(y * w + x) * 3 + 3] == colour;
    let mut seen = vec![false; w * h];
    let mut found = Vec::new();
    for y in 0..h {
        for x in 0..w {
            if seen[y * w + x] || !is(x, y) {
                continue;
            }
            let mut bar = Bar {
                left: x as u32,
                top: y as u32,
                right: x as u32,
                bottom: y as u32,
            };
            let mut stack = vec![(x, y)];
            seen[y * w + x] = true;
            while let Some((cx, cy)) = stack.pop() {
                bar.left = bar.left.min(cx as u32);
                bar.right = bar.right.max(cx as u32);
                bar.top = bar.top.min(cy as u32);
                bar.bottom = bar.bottom.max(cy as u32);
                let next = [
                    (cx.wrapping_sub(1), cy),
                    (cx + 1, cy),
                    (cx, cy.wrapping_sub(1)),
                    (cx, cy + 1),
                ];
                for (nx, ny) in next {
                    if nx < w && ny < h && !seen[ny * w + nx] && is(nx, ny) {
                        seen[ny * w + nx] = true;
                        stack.push((nx, ny));
                    }
                }
            }
            if bar.height() >= min_height {
                found.push(bar);
            }
        }
    }
    found.sort_by_key(|b| (b.top, b.left));
    found
}

/// The session id of the one session in `project`.
pub(crate) fn only_session(project: &TempProject) -> String {
    let mut ids: Vec<String> = std::fs::read_dir(project.path().join(".zr/sessions"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(ids.len(), 1, "{ids:?}");
    ids.remove(0)
}

#[test]
fn the_timeline_shows_parallel_agents_and_the_one_that_waited_in_a_real_browser() {
    let project = TempProject::new();
    project
        .write("zr.toml", "[subagents]\nmax_concurrent = 2\n")
        .write("script.json", SCRIPT);
    let out = project.zr_ok(&["run", "--script", "script.json", "look around"]);
    assert_eq!(stdout(&out), "All three looked.\n");
    let session = only_session(&project);
    let page = project.path().join("run.html");
    let out = project.zr_ok(&[
        "sessions",
        "show",
        &session,
        "--html",
        page.to_str().unwrap(),
    ]);
    let text = stdout(&out);
    assert!(
        text.ends_with(&format!("\nwrote {}\n", page.display())),
        "{text}"
    );

    let html = std::fs::read_to_string(&page).unwrap();
    for outside in ["<link", "src=", "url(", "@import", "<script"] {
        assert!(
            !html.contains(outside),
            "nothing loaded from outside: {outside}"
        );
    }
    assert!(
        html.contains("looked &lt;here&gt; &amp; there"),
        "conclusions escaped"
    );

    let image = screenshot(&page, &project.path().join("run.png"));
    let done = bars(&image, COMPLETED, 14);
    let waited = bars(&image, QUEUED, 14);
    assert_eq!(done.len(), 4, "a bar per agent: {done:?}");
    let (root, a, b, c) = (done[0], done[1], done[2], done[3]);
    // The root's bar spans its subagents'.
    for sub in [a, b, c] {
        assert!(
            root.left <= sub.left && sub.right <= root.right + 1,
            "{root:?} {sub:?}"
        );
    }
    // The first two ran side by side: their bars overlap for most of
    // their length.
    let shorter = (a.right - a.left).min(b.right - b.left);
    assert!(a.overlap(b) * 10 >= shorter * 8, "{a:?} {b:?}");
    // The third waited: a grey bar on its row ends where its run begins,
    // and its run begins when the first of the two ended.
    let c_wait = waited
        .iter()
        .copied()
        .find(|w| w.top == c.top)
        .unwrap_or_else(|| panic!("no waiting bar on the third row: {waited:?} {c:?}"));
    assert!(
        c_wait.right + 2 >= c.left && c_wait.right < c.left + 2,
        "{c_wait:?} {c:?}"
    );
    let first_end = a.right.min(b.right);
    assert!(
        c.left + 4 >= first_end,
        "{c:?} starts before a slot was free ({first_end})"
    );
    // It waited about as long as the others ran (400 ms each).
    let ran = a.right - a.left;
    assert!(
        (c_wait.right - c_wait.left) * 2 >= ran,
        "{c_wait:?} is short against {ran}"
    );
}

#[test]
fn show_prints_the_tree_and_refuses_an_unknown_agent_with_the_known_ones() {
    let project = TempProject::new();
    project
        .write("zr.toml", "[subagents]\nmax_concurrent = 2\n")
        .write("script.json", SCRIPT);
    project.zr_ok(&["run", "--script", "script.json", "look around"]);
    let session = only_session(&project);

    let text = stdout(&project.zr_ok(&["sessions", "show", &session]));
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("root"))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(rows[..4], ["root", "├─", "├─", "└─"], "{text}");
    assert!(text.contains("MultiTask 1"), "{text}");
    assert!(
        text.contains("root.0003-explore: looked <here> & there"),
        "{text}"
    );

    let conversation = stdout(&project.zr_ok(&["sessions", "show", &session, "--agent", "root"]));
    assert!(
        conversation.contains("-> MultiTask {\"tasks\":"),
        "{conversation}"
    );
    assert!(conversation.contains("<- MultiTask ok"), "{conversation}");
    assert!(
        conversation.contains("run ended: completed"),
        "{conversation}"
    );

    let out = project.zr(&["sessions", "show", &session, "--agent", "root.0009-explore"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("session {session} has no agent root.0009-explore")),
        "{err}"
    );
    assert!(
        err.contains("root.0001-explore, root.0002-explore, root.0003-explore"),
        "{err}"
    );

    let out = project.zr(&["sessions", "show", "s-0000000000001-00000000"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no session s-0000000000001-00000000"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_agent_types_colour_marks_its_agents_on_the_page() {
    let project = TempProject::new();
    project
        .write(
            ".claude/agents/painter.md",
            "---\nname: painter\ndescription: Paints.\ncolor: purple\n---\nYou paint.\n",
        )
        .write(
            "script.json",
            r#"{"agents": {
  "root": [{"turns": [
    {"tool_calls": [{"name": "Task", "input": {"description": "p", "prompt": "paint", "subagent_type": "painter"}}]},
    {"text": "Painted."}]}],
  "painter": [{"turns": [{"text": "done"}]}]}}"#,
        );
    project.zr_ok(&["run", "--script", "script.json", "paint"]);
    let (_, html) = written_page(&project);
    // Purple is #8250df: the painter's label on the timeline (the last
    // segment of its id, the whole id its tooltip) and its type in the
    // table; the root has no colour.
    assert!(
        html.contains("fill=\"#8250df\"><title>root.0001-painter</title>0001-painter</text>"),
        "{html}"
    );
    assert!(
        html.contains("<td style=\"color:#8250df\">painter</td>"),
        "{html}"
    );
    assert_eq!(html.matches("#8250df").count(), 2, "{html}");
}

/// The project's only session written as a page by `zr sessions show
/// --html`: the page's path and its text.
pub(crate) fn written_page(project: &TempProject) -> (PathBuf, String) {
    let session = only_session(project);
    let page = project.path().join("run.html");
    project.zr_ok(&[
        "sessions",
        "show",
        &session,
        "--html",
        page.to_str().unwrap(),
    ]);
    let html = std::fs::read_to_string(&page).unwrap();
    (page, html)
}
