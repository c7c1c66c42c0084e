//! The sticky key: once a worktree has written, resumed or recovered a key,
//! later keyless `write`/`recover` in that worktree keep using it while the
//! branch stays the same; after a branch switch they follow the branch (and
//! say so), so that one branch's state never overwrites another's brief.
//!
//! It is remembered per worktree in the worktree's own git dir
//! (`.git/handoff-key` for the main worktree,
//! `.git/worktrees/<name>/handoff-key` for a linked one), never in the
//! working tree and never shared: the key, the branch it was chosen on
//! (`HEAD` when detached) and, when known, the session that chose it, one
//! per line, replaced atomically.
//!
//! The method's selected key holds for the rest of *the same session*.
//! The session is `GIT_HANDOFF_SESSION` when set, else the one the
//! session-start hook last saw begin in this worktree (its `session_id`,
//! kept in `handoff-session` beside the key). A sticky key chosen by
//! another session no longer applies: keyless commands follow the branch
//! again, and a keyless write says so, naming both keys.

use std::path::PathBuf;

use anyhow::{Context, Result, anyhow};

use crate::git::repo::{self, HeadState};
use crate::{brief::keys, support::atomic};

/// The file name in the worktree's git dir.
pub const FILE: &str = "handoff-key";

/// The environment variable that overrides the key of keyless commands.
pub const KEY_ENV: &str = "GIT_HANDOFF_KEY";

/// The environment variable that names the agent session a command runs in.
pub const SESSION_ENV: &str = "GIT_HANDOFF_SESSION";

/// The file, in the worktree's git dir, naming the session the
/// session-start hook last saw begin here.
pub const SESSION_FILE: &str = "handoff-session";

/// A remembered key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sticky {
    /// The key.
    pub key: String,
    /// The branch it was chosen on (`HEAD` when detached), if recorded.
    pub branch: Option<String>,
    /// The session that chose it, when one was known.
    pub session: Option<String>,
}

impl Sticky {
    /// Whether another session than `current` chose it: a key chosen
    /// before the current session was known counts as another's; with no
    /// current session nothing can be told, and it counts as this one's.
    pub fn chosen_by_another_session(&self, current: Option<&str>) -> bool {
        match (self.session.as_deref(), current) {
            (_, None) => false,
            (None, Some(_)) => true,
            (Some(chosen), Some(current)) => chosen != current,
        }
    }
}

/// A session id fit to be remembered: 1–128 characters of letters, digits
/// and `-_.:`; anything else is ignored.
pub fn valid_session(id: &str) -> Option<&str> {
    let id = id.trim();
    (!id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b)))
    .then_some(id)
}

/// The environment variable in which Claude Code names its session (in
/// the environment of its hooks, its MCP servers and its shell commands).
pub const HARNESS_SESSION_ENV: &str = "CLAUDE_CODE_SESSION_ID";

/// The session a command runs in: `GIT_HANDOFF_SESSION`, else the
/// harness's own (`CLAUDE_CODE_SESSION_ID`), else the one the
/// session-start hook last saw begin in this worktree; `None` when none
/// names one.
pub fn current_session(repo: &gix::Repository) -> Option<String> {
    for var in [SESSION_ENV, HARNESS_SESSION_ENV] {
        if let Ok(id) = std::env::var(var)
            && let Some(id) = valid_session(&id)
        {
            return Some(id.to_string());
        }
    }
    let text = std::fs::read_to_string(repo.git_dir().join(SESSION_FILE)).ok()?;
    valid_session(text.lines().next()?).map(str::to_string)
}

/// Forget this worktree's sticky key.
pub fn clear(repo: &gix::Repository) -> Result<()> {
    match std::fs::remove_file(path(repo)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("cannot remove {}", path(repo).display()))
        }
        _ => Ok(()),
    }
}

/// A session begins in this worktree (the session-start hook): remember
/// `session` as the current one, and re-check the sticky key. A new
/// conversation (`new`: source `startup` or `clear`) under the very
/// session that chose the key, or with no session id at all, clears it;
/// a key chosen before this session's id was known, when the session
/// goes on (`compact`, `resume`), becomes this session's. Returns the
/// sticky key left from another session, if any: keyless commands no
/// longer follow it.
pub fn session_started(
    repo: &gix::Repository,
    session: Option<&str>,
    new: bool,
) -> Result<Option<Sticky>> {
    let session = session.and_then(valid_session);
    let sticky = read(repo).ok().flatten();
    if let Some(id) = session {
        let file = repo.git_dir().join(SESSION_FILE);
        let line = format!("{id}\n");
        // The same session going on (`compact`, `resume`) finds its own
        // id there: no lock, no rename (each a journaled metadata write).
        if std::fs::read(&file).ok().as_deref() != Some(line.as_bytes()) {
            atomic::write(&file, line.as_bytes())?;
        }
    }
    let Some(sticky) = sticky else {
        return Ok(None);
    };
    if new && (session.is_none() || sticky.session.as_deref() == session) {
        clear(repo)?;
        return Ok(Some(sticky));
    }
    if !new && sticky.session.is_none() && session.is_some() {
        write_file(
            repo,
            &sticky.key,
            sticky.branch.as_deref().unwrap_or(""),
            session,
        )?;
        return Ok(None);
    }
    Ok(sticky.chosen_by_another_session(session).then_some(sticky))
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
    let mut field = || {
        lines
            .next()
            .map(str::trim)
            .filter(|b| !b.is_empty())
            .map(str::to_string)
    };
    let branch = field();
    let session = field().filter(|s| valid_session(s).is_some());
    Ok(Some(Sticky {
        key,
        branch,
        session,
    }))
}

/// Remember `key`, chosen on HEAD's branch, for this worktree.
pub fn remember(repo: &gix::Repository, key: &str, head: &HeadState) -> Result<()> {
    remember_on(repo, key, head.branch_label())
}

/// Remember `key` for this worktree as the key of `branch` (a label as
/// [`HeadState::branch_label`] gives it): while another branch is checked
/// out here, a keyless write follows that branch instead.
pub fn remember_on(repo: &gix::Repository, key: &str, branch: &str) -> Result<()> {
    write_file(repo, key, branch, current_session(repo).as_deref())
}

/// Write the sticky file: key, branch and, when known, session.
fn write_file(
    repo: &gix::Repository,
    key: &str,
    branch: &str,
    session: Option<&str>,
) -> Result<()> {
    let session = session.map(|s| format!("{s}\n")).unwrap_or_default();
    atomic::write(
        &path(repo),
        format!("{key}\n{branch}\n{session}").as_bytes(),
    )
}

/// The key a keyless command uses here: the one a keyless `write` targets
/// ([`choose`] without an explicit key), without its warning. Every
/// keyless command and hook selects by this one rule.
pub fn keyless_key(repo: &gix::Repository, head: &HeadState) -> Result<String> {
    Ok(choose(repo, head, None, false, "command")?.key)
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
/// checked out and for the session that chose it; after a switch, or in
/// another session, the branch's key wins, with a warning.
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
        Ok(Some(sticky)) => Ok(from_sticky(repo, head, sticky, branch_key, verb)),
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

/// The key a keyless command takes when a sticky key is remembered: it,
/// unless another session chose it or the branch changed since.
fn from_sticky(
    repo: &gix::Repository,
    head: &HeadState,
    sticky: Sticky,
    branch_key: String,
    verb: &str,
) -> Choice {
    let switched = match &sticky.branch {
        Some(b) => b != head.branch_label() && branch_key != sticky.key,
        None => branch_key != sticky.key,
    };
    if !switched && sticky.key != branch_key {
        let current = current_session(repo);
        if sticky.chosen_by_another_session(current.as_deref()) {
            // The method: the selected key holds for the same
            // session only.
            return Choice {
                warning: Some(format!(
                    "'{}' is the key another session chose; this {verb} targets '{branch_key}', this branch's key (give '{}' as the key to continue that thread)",
                    sticky.key, sticky.key
                )),
                key: branch_key,
                remember: true,
            };
        }
    }
    if !switched {
        return Choice {
            key: sticky.key,
            remember: false,
            warning: None,
        };
    }
    // The method: reuse the key unless the branch changed, and
    // surface the change; the branch's key becomes the sticky one.
    let was = sticky
        .branch
        .as_deref()
        .map(|b| format!(" on {b}"))
        .unwrap_or_default();
    Choice {
        warning: Some(format!(
            "branch switched: this {verb} targets '{branch_key}' (was '{}'{was}); future handoffs will target '{branch_key}'",
            sticky.key
        )),
        key: branch_key,
        remember: true,
    }
}
