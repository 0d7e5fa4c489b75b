//! The one hand-over of captured model request bodies: every loopback
//! server that stands in for a model API ([`crate::replay`] and
//! [`crate::loopback`]) gives each request
//! it receives to a [`Capture`], which, when `ZR_CAPTURED_BODIES=DIR` is
//! set, writes the body byte for byte to `DIR/WIRE/PACKAGE--TEST--N.json`.
//! `cargo xtask ci` sets the variable for its test step, then checks every
//! file against the official Python SDKs' request types
//! (`xtask/validate_bodies.py`).
//!
//! `WIRE` comes from the request path: `anthropic` (`.../v1/messages`),
//! `openai-chat` (`.../chat/completions`) or `openai-responses`
//! (`.../responses`); a body posted anywhere else is not a model request
//! and is not written. `TEST` is the name of the thread that made the
//! capture (libtest names each test's thread after the test), `::` written
//! as `.`; `N` counts the process's captures, so no two files collide.
//! `PACKAGE` is the package whose tests run (`CARGO_PKG_NAME`, which
//! cargo sets for the test process too), not this crate.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The variable naming the folder captured bodies go to.
pub const CAPTURE_VAR: &str = "ZR_CAPTURED_BODIES";

/// Captures made by this process so far: the `N` of the file names.
static CAPTURED: AtomicUsize = AtomicUsize::new(0);

/// The API a body was posted to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// The Anthropic Messages API.
    Anthropic,
    /// OpenAI Chat Completions.
    OpenAiChat,
    /// The OpenAI Responses API.
    OpenAiResponses,
}

impl Wire {
    /// The API `path` (the request target, query included) belongs to.
    pub fn of_path(path: &str) -> Option<Self> {
        let path = path.split(['?', '#']).next().unwrap_or_default();
        if path.ends_with("/v1/messages") {
            Some(Self::Anthropic)
        } else if path.ends_with("/chat/completions") {
            Some(Self::OpenAiChat)
        } else if path.ends_with("/responses") {
            Some(Self::OpenAiResponses)
        } else {
            None
        }
    }

    /// The folder of this wire's bodies, which the validator reads.
    pub fn folder(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::OpenAiChat => "openai-chat",
            Self::OpenAiResponses => "openai-responses",
        }
    }
}

/// Where one test's captured bodies go; cheap to clone into a server's
/// threads or tasks.
#[derive(Debug, Clone)]
pub struct Capture {
    /// `None`: capturing is off.
    dir: Option<PathBuf>,
    /// `PACKAGE--TEST`, the file names' stem.
    stem: String,
}

impl Capture {
    /// The capture of the test running on this thread, into
    /// `$ZR_CAPTURED_BODIES` (off when it is unset or empty). Call it on
    /// the test's own thread, e.g. where the server starts.
    pub fn for_this_test() -> Self {
        let dir = std::env::var_os(CAPTURE_VAR)
            .filter(|dir| !dir.is_empty())
            .map(PathBuf::from);
        Self::into_dir(dir, std::thread::current().name().unwrap_or("unnamed"))
    }

    /// The capture of `test` into `dir` (off when `None`).
    pub fn into_dir(dir: Option<PathBuf>, test: &str) -> Self {
        Self {
            dir,
            stem: format!("{}--{}", package(), test.replace("::", ".")),
        }
    }

    /// Writes `body`, posted to `path`, if capturing is on and `path` is a
    /// model API's; returns the file written.
    ///
    /// # Panics
    ///
    /// When the file cannot be written: a body the validator never sees
    /// would make its count a lie.
    pub fn record(&self, path: &str, body: &[u8]) -> Option<PathBuf> {
        let dir = self.dir.as_deref()?;
        let wire = Wire::of_path(path)?;
        let n = CAPTURED.fetch_add(1, Ordering::Relaxed) + 1;
        let file = dir
            .join(wire.folder())
            .join(format!("{}--{n}.json", self.stem));
        write(&file, body);
        Some(file)
    }
}

/// The package whose tests run: cargo names it in the test process's
/// `CARGO_PKG_NAME`; `unknown` when the binary runs on its own.
fn package() -> String {
    std::env::var("CARGO_PKG_NAME").unwrap_or_else(|_| "unknown".to_owned())
}

fn write(file: &Path, body: &[u8]) {
    let written = file
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(file, body));
    if let Err(error) = written {
        panic!("cannot write the captured body {}: {error}", file.display());
    }
}
