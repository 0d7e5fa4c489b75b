//! Isolated subagents (`isolation: worktree`): a fresh git worktree on its
//! own branch before the agent runs; on every exit path the agent's
//! cleanup, then the worktree removed if nothing changed in it, kept and
//! reported if something did.
//!
//! Worktrees live in `<top>/.zr/worktrees/<session>/<agent>`, where `<top>`
//! is the top folder of the delegating agent's checkout; their branches are
//! `zr/<session>/<agent>`. The folder `.zr/worktrees` holds a `.gitignore`
//! of `*`, so the user's `git status` and the parent's Glob and Grep do not
//! see the copies, and no file of the user's (`.gitignore`,
//! `.git/info/exclude`) is touched.

mod git;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use zr_caps::Isolation;
use zr_types::AgentId;

use crate::error::{EngineError, WorktreeError};
use crate::meta::AgentMeta;
use crate::outcome::WorktreeInfo;
use crate::session::{Cleanup, Session};
use crate::sync::lock;
use git::{Git, path_from};

/// Where worktrees go, under the top folder of the delegating agent's
/// checkout.
const WORKTREES_DIR: &str = ".zr/worktrees";

/// A worktree made, or being made, for an agent.
#[derive(Debug, Clone)]
struct Worktree {
    /// The top folder of the checkout it was made from; git commands that
    /// change the repository run there.
    repo: PathBuf,
    /// The repository's common git folder (the per-repository lock's key).
    common: PathBuf,
    path: PathBuf,
    branch: String,
    /// The commit it starts from.
    base: String,
    /// Whether `git worktree add` succeeded (the agent may have run in it).
    created: bool,
}

/// What a subagent leaves behind on every exit path: its [`Cleanup`]
/// (background commands, state, the observer) and, when it is isolated,
/// its worktree, settled after the cleanup (so that no background command
/// of the agent still writes into it).
///
/// [`Scope::finish`] does both on the normal paths; when the agent's
/// future is dropped (a cancelled or dropped query), `Drop` does them in a
/// spawned task that [`Session::wait_cleanups`] waits for.
#[derive(Debug)]
pub(crate) struct Scope {
    session: Arc<Session>,
    cleanup: Option<Cleanup>,
    isolated: bool,
    /// A remote agent's worktree: made when its folder is in a git work
    /// tree, else it works in the folder (the worker's project).
    optional: bool,
    /// Set before `git worktree add` runs; taken once settled.
    worktree: Mutex<Option<Worktree>>,
}

impl Scope {
    pub(crate) fn new(session: &Arc<Session>, agent: &AgentId, isolation: Isolation) -> Self {
        Self {
            session: Arc::clone(session),
            cleanup: Some(Cleanup::new(Arc::clone(session), agent.clone())),
            isolated: isolation != Isolation::None,
            optional: isolation == Isolation::Remote,
            worktree: Mutex::new(None),
        }
    }

    /// For an isolated agent: makes its worktree and moves the agent's
    /// folder into it (the same sub-folder of the checkout). Does nothing
    /// for the others.
    ///
    /// # Errors
    ///
    /// [`EngineError::Worktree`]: no git, not a git work tree, no commit,
    /// the branch exists, git failed. The agent must not run then.
    pub(crate) async fn enter(&self, run: &mut AgentMeta) -> Result<(), EngineError> {
        if !self.isolated {
            return Ok(());
        }
        if self.optional
            && locate(Git::new(&self.session.runtime.settings().env), &run.cwd)
                .await
                .is_err()
        {
            return Ok(());
        }
        // Boxed: git's futures are large, and every subagent's lifecycle
        // would otherwise hold (and copy) their state, isolated or not.
        Box::pin(self.make(run))
            .await
            .map_err(|source| EngineError::Worktree {
                agent: run.id.clone(),
                source,
            })
    }

    async fn make(&self, run: &mut AgentMeta) -> Result<(), WorktreeError> {
        let git = Git::new(&self.session.runtime.settings().env);
        let place = locate(git, &run.cwd).await?;
        let dir = place.top.join(WORKTREES_DIR);
        ignore_all(&dir).await?;
        // Session and agent ids are valid path components and ref
        // components as they are: `s-<hex>-<hex>` and
        // `root.NNNN-<[a-z0-9-]+>` (no `..`, no leading or trailing `.`,
        // never ending in `.lock`).
        let path = dir.join(self.session.id.as_str()).join(run.id.as_str());
        let branch = format!("zr/{}/{}", self.session.id, run.id);
        if tokio::fs::symlink_metadata(&path).await.is_ok() {
            return Err(WorktreeError::Io {
                path,
                source: std::io::ErrorKind::AlreadyExists.into(),
            });
        }
        let repo = repo_lock(&place.common);
        let serial = repo.lock().await;
        let exists = git
            .output(
                &place.top,
                &[
                    &"rev-parse",
                    &"--verify",
                    &"--quiet",
                    &format!("refs/heads/{branch}"),
                ],
            )
            .await?
            .success;
        if exists {
            return Err(WorktreeError::BranchExists {
                repo: place.top,
                branch,
            });
        }
        // Recorded before git runs: if `worktree add` fails, or this future
        // is dropped while it runs, the scope removes what it left.
        *lock(&self.worktree) = Some(Worktree {
            repo: place.top.clone(),
            common: place.common.clone(),
            path: path.clone(),
            branch: branch.clone(),
            base: place.base.clone(),
            created: false,
        });
        git.run(
            &place.top,
            &[
                &"worktree",
                &"add",
                &"--quiet",
                &"-b",
                &branch,
                &path,
                &place.base,
            ],
        )
        .await?;
        if let Some(w) = lock(&self.worktree).as_mut() {
            w.created = true;
        }
        drop(serial);
        // `join("")` would add a trailing separator to every path shown.
        let cwd = if place.rel.as_os_str().is_empty() {
            path.clone()
        } else {
            path.join(&place.rel)
        };
        if !tokio::fs::metadata(&cwd).await.is_ok_and(|m| m.is_dir()) {
            // The parent works in a folder that HEAD does not have
            // (untracked or ignored): the agent gets it empty.
            tracing::warn!(folder = %place.rel.display(), worktree = %path.display(), "the delegating agent's folder is not in the commit; creating it empty in the worktree");
            tokio::fs::create_dir_all(&cwd)
                .await
                .map_err(|source| WorktreeError::Io {
                    path: cwd.clone(),
                    source,
                })?;
        }
        tracing::info!(agent = %run.id, worktree = %path.display(), %branch, "isolated in a worktree");
        run.cwd = cwd.into();
        run.worktree = Some(Arc::from(path.as_path()));
        Ok(())
    }

    /// Runs the agent's cleanup, then settles its worktree (if it has one):
    /// removed when unchanged, kept when changed.
    pub(crate) async fn finish(mut self) -> Option<WorktreeInfo> {
        if let Some(cleanup) = self.cleanup.take() {
            cleanup.run().await;
        }
        let worktree = lock(&self.worktree).clone()?;
        let info = settle(&self.session, &worktree).await;
        // Taken only once settled: if this future is dropped on the way,
        // `Drop` settles it.
        lock(&self.worktree).take();
        info
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        let Some(worktree) = lock(&self.worktree).take() else {
            // No worktree: the cleanup, if still armed, runs from its own
            // `Drop`.
            return;
        };
        let cleanup = self.cleanup.take();
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                let session = Arc::clone(&self.session);
                let task = handle.spawn(async move {
                    if let Some(cleanup) = cleanup {
                        cleanup.run().await;
                    }
                    settle(&session, &worktree).await;
                });
                self.session.push_cleanup(task);
            }
            Err(_) => {
                tracing::warn!(worktree = %worktree.path.display(), branch = %worktree.branch, "no async runtime to settle the worktree; it is left as it is");
            }
        }
    }
}

/// Where a worktree of the checkout around `cwd` goes.
struct Place {
    /// The checkout's top folder.
    top: PathBuf,
    /// The repository's common git folder.
    common: PathBuf,
    /// The commit of HEAD.
    base: String,
    /// `cwd` relative to `top`.
    rel: PathBuf,
}

async fn locate(git: Git<'_>, cwd: &Path) -> Result<Place, WorktreeError> {
    let out = git
        .output(
            cwd,
            &[&"rev-parse", &"--show-toplevel", &"--git-common-dir"],
        )
        .await?;
    let mut lines = out.stdout.split(|b| *b == b'\n');
    let (top, common) = match (out.success, lines.next(), lines.next()) {
        (true, Some(top), Some(common)) if !top.is_empty() && !common.is_empty() => {
            (path_from(top), path_from(common))
        }
        _ => {
            return Err(WorktreeError::NotARepository {
                dir: cwd.to_path_buf(),
                stderr: out.stderr,
            });
        }
    };
    // `--git-common-dir` may be relative to `cwd`.
    let common = cwd.join(common);
    let common = tokio::fs::canonicalize(&common).await.unwrap_or(common);
    let head = git
        .output(
            cwd,
            &[&"rev-parse", &"--verify", &"--quiet", &"HEAD^{commit}"],
        )
        .await?;
    if !head.success {
        return Err(WorktreeError::NoCommit { repo: top });
    }
    let base = head.line();
    // git prints the top folder with links resolved.
    let real = tokio::fs::canonicalize(cwd)
        .await
        .unwrap_or_else(|_| cwd.to_path_buf());
    let rel = real.strip_prefix(&top).map_or_else(
        |_| {
            tracing::warn!(cwd = %cwd.display(), top = %top.display(), "the folder is not under its checkout's top folder; the agent starts at the worktree's top");
            PathBuf::new()
        },
        Path::to_path_buf,
    );
    Ok(Place {
        top,
        common,
        base,
        rel,
    })
}

/// Creates `dir` with a `.gitignore` of `*` (unless it has one), so that
/// nothing in it shows in the enclosing checkout.
async fn ignore_all(dir: &Path) -> Result<(), WorktreeError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| WorktreeError::Io { path, source }
    };
    tokio::fs::create_dir_all(dir).await.map_err(io(dir))?;
    let file = dir.join(".gitignore");
    match tokio::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&file)
        .await
    {
        Ok(mut f) => {
            tokio::io::AsyncWriteExt::write_all(&mut f, b"*\n")
                .await
                .map_err(io(&file))?;
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(io(&file)(e)),
    }
}

/// One lock per repository (its common git folder) for the git commands
/// that change it (`worktree add`, `worktree remove`, `branch -D`), so
/// that simultaneous isolated subagents never race for its files. Entries
/// live while someone holds the lock's `Arc`.
static REPO_LOCKS: Mutex<BTreeMap<PathBuf, Weak<tokio::sync::Mutex<()>>>> =
    Mutex::new(BTreeMap::new());

fn repo_lock(common: &Path) -> Arc<tokio::sync::Mutex<()>> {
    let mut locks = lock(&REPO_LOCKS);
    locks.retain(|_, lock| lock.strong_count() > 0);
    if let Some(lock) = locks.get(common).and_then(Weak::upgrade) {
        return lock;
    }
    let lock = Arc::new(tokio::sync::Mutex::new(()));
    locks.insert(common.to_path_buf(), Arc::downgrade(&lock));
    lock
}

/// After the agent's cleanup: an unchanged worktree is removed with its
/// branch, a changed one kept. `None` when the worktree was never made
/// (the agent did not run in it); whatever `git worktree add` left is
/// removed.
async fn settle(session: &Session, w: &Worktree) -> Option<WorktreeInfo> {
    let git = Git::new(&session.runtime.settings().env);
    if !w.created {
        discard(git, w).await;
        return None;
    }
    let found = changes(git, w).await.unwrap_or_else(|error| {
        tracing::warn!(worktree = %w.path.display(), error = %zr_types::error_chain(&error), "cannot check the worktree for changes; keeping it");
        Changes {
            changed: true,
            ..Changes::default()
        }
    });
    let changed = found.changed;
    let mut kept = true;
    if !changed {
        match remove(git, w).await {
            Ok(()) => kept = false,
            Err(error) => {
                tracing::warn!(worktree = %w.path.display(), branch = %w.branch, error = %zr_types::error_chain(&error), "cannot remove an unchanged worktree; it is kept");
            }
        }
    }
    Some(WorktreeInfo {
        path: w.path.clone(),
        branch: w.branch.clone(),
        changed,
        kept,
        files: found.files,
        ignored: found.ignored,
    })
}

/// The commit the worktree's branch points to, if the branch exists.
async fn branch_tip(git: Git<'_>, w: &Worktree) -> Result<Option<String>, WorktreeError> {
    let out = git
        .output(
            &w.repo,
            &[
                &"rev-parse",
                &"--verify",
                &"--quiet",
                &format!("refs/heads/{}", w.branch),
            ],
        )
        .await?;
    Ok(out.success.then(|| out.line()))
}

/// What the agent left in a worktree.
#[derive(Debug, Default)]
struct Changes {
    /// Uncommitted changes, untracked files, another HEAD, or its branch
    /// moved.
    changed: bool,
    /// `git status` lines of the changed files (at most
    /// [`WorktreeInfo::MAX_LISTED`]).
    files: Vec<String>,
    /// Ignored files present (at most [`WorktreeInfo::MAX_LISTED`]).
    ignored: Vec<String>,
}

/// What the agent left in the worktree: uncommitted changes, untracked
/// files, another HEAD, or its branch moved; and the ignored files it
/// made (a fresh worktree has none).
async fn changes(git: Git<'_>, w: &Worktree) -> Result<Changes, WorktreeError> {
    let mut found = Changes::default();
    if tokio::fs::metadata(&w.path).await.is_ok() {
        let status = git
            .run(
                &w.path,
                &[
                    &"--no-optional-locks",
                    &"status",
                    &"--porcelain",
                    &"--untracked-files=all",
                    &"--ignored=matching",
                ],
            )
            .await?;
        for line in String::from_utf8_lossy(&status.stdout).lines() {
            let list = if let Some(path) = line.strip_prefix("!! ") {
                if found.ignored.len() < WorktreeInfo::MAX_LISTED {
                    found.ignored.push(path.to_owned());
                }
                continue;
            } else {
                found.changed = true;
                &mut found.files
            };
            if list.len() < WorktreeInfo::MAX_LISTED {
                list.push(line.trim_start().to_owned());
            }
        }
        if found.changed {
            return Ok(found);
        }
        let head = git
            .run(&w.path, &[&"rev-parse", &"--verify", &"HEAD"])
            .await?;
        if head.line() != w.base {
            found.changed = true;
            return Ok(found);
        }
    }
    found.changed = branch_tip(git, w).await?.is_some_and(|tip| tip != w.base);
    Ok(found)
}

/// Removes an unchanged worktree (git refuses if it became dirty since it
/// was checked) and its branch.
async fn remove(git: Git<'_>, w: &Worktree) -> Result<(), WorktreeError> {
    let lock = repo_lock(&w.common);
    let _serial = lock.lock().await;
    if tokio::fs::metadata(&w.path).await.is_ok() {
        git.run(&w.repo, &[&"worktree", &"remove", &w.path]).await?;
    } else {
        git.run(&w.repo, &[&"worktree", &"prune"]).await?;
    }
    if branch_tip(git, w).await?.is_some() {
        git.run(&w.repo, &[&"branch", &"-D", &w.branch]).await?;
    }
    remove_if_empty(&w.path).await;
    Ok(())
}

/// Removes what a `git worktree add` that failed or was stopped left: the
/// agent never ran there, so nothing of its can be lost.
async fn discard(git: Git<'_>, w: &Worktree) {
    let lock = repo_lock(&w.common);
    let _serial = lock.lock().await;
    if tokio::fs::metadata(&w.path).await.is_ok() {
        let forced = git
            .output(
                &w.repo,
                &[&"worktree", &"remove", &"--force", &"--force", &w.path],
            )
            .await;
        if !forced.as_ref().is_ok_and(|o| o.success) {
            // Not registered (git stopped before): our own folder, made
            // for this agent alone.
            let _ = tokio::fs::remove_dir_all(&w.path).await;
        }
    }
    let _ = git.output(&w.repo, &[&"worktree", &"prune"]).await;
    // The branch did not exist before `worktree add` (checked under the
    // lock), so if it exists now, git made it for this agent.
    if let Ok(Some(_)) = branch_tip(git, w).await {
        let _ = git.output(&w.repo, &[&"branch", &"-D", &w.branch]).await;
    }
    remove_if_empty(&w.path).await;
}

/// Removes the session's folder of worktrees once it is empty.
async fn remove_if_empty(path: &Path) {
    if let Some(session_dir) = path.parent() {
        // Fails (and is meant to) while other worktrees are in it.
        let _ = tokio::fs::remove_dir(session_dir).await;
    }
}
