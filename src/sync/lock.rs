//! One lock per remote's staging namespace: a fetch, a push (its fetch,
//! plan, `git push` and the bases it moves) and a resolve with the same
//! remote never interleave in one repository (worktrees share it), so each
//! decides from one consistent view of the three sides of every key. The
//! lock is git-handoff's own (`support::owned_lock`): it records its
//! owner, is waited for while that owner runs, and is taken over at once
//! when the owner was killed.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, anyhow};

use crate::support::owned_lock::{LockError, Owned};

/// How long a fetch or push waits for another one with the same remote
/// (which may be waiting on the network), by default; `handoff.syncLockTimeout`
/// (ms) sets it.
pub const SYNC_LOCK_WAIT: Duration = Duration::from_secs(60);

/// The lock file of `remote`'s staging namespace, in the common git dir.
pub fn lock_path(repo: &gix::Repository, remote: &str) -> PathBuf {
    let name: String = remote
        .chars()
        .map(|c| match c {
            '/' => "%2F".to_string(),
            '%' => "%25".to_string(),
            c => c.to_string(),
        })
        .collect();
    repo.common_dir().join(format!("handoff-sync-{name}.lock"))
}

fn wait(repo: &gix::Repository) -> Duration {
    repo.config_snapshot()
        .integer("handoff.syncLockTimeout")
        .filter(|ms| *ms >= 0)
        .map(|ms| Duration::from_millis(ms as u64))
        .unwrap_or(SYNC_LOCK_WAIT)
}

/// Hold `remote`'s sync lock until the value is dropped.
pub(super) fn hold(repo: &gix::Repository, remote: &str) -> Result<Owned> {
    let path = lock_path(repo, remote);
    Owned::acquire(&path, wait(repo)).map_err(|err| match err {
        LockError::Held { pid, .. } => anyhow!(
            "another fetch or push with '{remote}' (process {pid}) is still running in this repository: {err}"
        ),
        err => anyhow!("cannot lock the sync with '{remote}': {err}"),
    })
}

/// `remote`'s sync lock when no fetch, push or resolve with it is running
/// (a killed owner's lock is taken over); `None` when one is: it
/// reconciles what is staged itself, so a reader need not wait for it.
pub(super) fn try_hold(repo: &gix::Repository, remote: &str) -> Result<Option<Owned>> {
    match Owned::acquire(&lock_path(repo, remote), Duration::ZERO) {
        Ok(owned) => Ok(Some(owned)),
        Err(LockError::Held { .. }) => Ok(None),
        Err(err) => Err(anyhow!("cannot lock the sync with '{remote}': {err}")),
    }
}
