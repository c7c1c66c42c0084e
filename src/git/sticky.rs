//! The sticky key: once a worktree has written, resumed or recovered a key,
//! later keyless `write`/`recover` in that worktree keep using it while the
//! branch stays the same; after a branch switch they follow the branch (and
//! say so), so that one branch's state never overwrites another's brief.
//!
//! It is remembered per worktree in the worktree's own git dir
//! (`.git/handoff-key` for the main worktree,
//! `.git/worktrees/<name>/handoff-key` for a linked one), never in the
//! working tree and never shared: two lines, the key and the branch it was
//! chosen on (`HEAD` when detached), replaced atomically.

use std::path::PathBuf;

use anyhow::{Context, Result, anyhow};

use crate::git::repo::{self, HeadState};
use crate::{brief::keys, support::atomic};

/// The file name in the worktree's git dir.
pub const FILE: &str = "handoff-key";

/// The environment variable that overrides the key of keyless commands.
pub const KEY_ENV: &str = "GIT_HANDOFF_KEY";

/// A remembered key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sticky {
    /// The key.
    pub key: String,
    /// The branch it was chosen on (`HEAD` when detached), if recorded.
    pub branch: Option<String>,
}

/// Where this worktree's sticky key lives.
pub fn path(repo: &gix::Repository) -> PathBuf {
    repo.git_dir().join(FILE)
}

/// Read this worktree's sticky key. `Ok(None)` when none is remembered; an
/// error when the file holds no valid key.
pub fn read(repo: &gix::Repository) -> Result<Option<Sticky>> {
    let path = path(repo);
    let text = match std::fs::read(&path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map_err(|_| anyhow!("'{}' is not UTF-8 text", path.display()))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let mut lines = text.lines();
    let key = lines.next().unwrap_or("").trim().to_string();
    keys::validate(&key).map_err(|e| anyhow!("'{}' holds {e}", path.display()))?;
    let branch = lines
        .next()
        .map(str::trim)
        .filter(|b| !b.is_empty())
        .map(str::to_string);
    Ok(Some(Sticky { key, branch }))
}

/// Remember `key`, chosen on HEAD's branch, for this worktree.
pub fn remember(repo: &gix::Repository, key: &str, head: &HeadState) -> Result<()> {
    remember_on(repo, key, head.branch_label())
}

/// Remember `key` for this worktree as the key of `branch` (a label as
/// [`HeadState::branch_label`] gives it): while another branch is checked
/// out here, a keyless write follows that branch instead.
pub fn remember_on(repo: &gix::Repository, key: &str, branch: &str) -> Result<()> {
    atomic::write(&path(repo), format!("{key}\n{branch}\n").as_bytes())
}

/// The key a `write`/`recover` targets, and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The key.
    pub key: String,
    /// Whether to remember it as the sticky key once the write succeeds.
    pub remember: bool,
    /// A note for stderr: the branch switched under a sticky key, or the
    /// sticky file was unreadable.
    pub warning: Option<String>,
}

/// Choose the key of a `write`/`recover` (`verb` names it in the warning):
/// an explicit key (the KEY argument or the brief's `key` field) >
/// `--key-from-branch` > `GIT_HANDOFF_KEY` > the sticky key > the branch's
/// key. The sticky key holds only while the branch it was chosen on is
/// checked out; after a switch the branch's key wins, with a warning.
/// Explicit, `--key-from-branch` and branch-derived keys become the sticky
/// key; `GIT_HANDOFF_KEY` is a per-process override and does not.
pub fn choose(
    repo: &gix::Repository,
    head: &HeadState,
    explicit: Option<&str>,
    from_branch: bool,
    verb: &str,
) -> Result<Choice> {
    let branch_key = repo::branch_key(head);
    if let Some(key) = explicit {
        keys::validate(key)
            .map_err(|e| crate::refusal!("{e}; keys are single ref components like 'feat-jwt'"))?;
        if from_branch && key != branch_key {
            return Err(anyhow!(
                "--key-from-branch targets '{branch_key}' but the key given is '{key}'; drop one of them"
            ));
        }
        return Ok(Choice {
            key: key.to_string(),
            remember: true,
            warning: None,
        });
    }
    if from_branch {
        return Ok(Choice {
            key: branch_key,
            remember: true,
            warning: None,
        });
    }
    if let Ok(key) = std::env::var(KEY_ENV)
        && !key.is_empty()
    {
        keys::validate(&key).map_err(|e| anyhow!("{KEY_ENV}: {e}"))?;
        return Ok(Choice {
            key,
            remember: false,
            warning: None,
        });
    }
    match read(repo) {
        Ok(Some(sticky)) => {
            let switched = match &sticky.branch {
                Some(b) => b != head.branch_label() && branch_key != sticky.key,
                None => branch_key != sticky.key,
            };
            if !switched {
                return Ok(Choice {
                    key: sticky.key,
                    remember: false,
                    warning: None,
                });
            }
            // The method: reuse the key unless the branch changed, and
            // surface the change; the branch's key becomes the sticky one.
            let was = sticky
                .branch
                .as_deref()
                .map(|b| format!(" on {b}"))
                .unwrap_or_default();
            Ok(Choice {
                warning: Some(format!(
                    "branch switched: this {verb} targets '{branch_key}' (was '{}'{was}); future handoffs will target '{branch_key}'",
                    sticky.key
                )),
                key: branch_key,
                remember: true,
            })
        }
        Ok(None) => Ok(Choice {
            key: branch_key,
            remember: true,
            warning: None,
        }),
        Err(e) => Ok(Choice {
            key: branch_key,
            remember: true,
            warning: Some(format!(
                "ignoring the sticky key: {e:#}; this {verb} targets the branch's key and replaces it"
            )),
        }),
    }
}
