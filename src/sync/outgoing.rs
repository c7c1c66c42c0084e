//! The outgoing namespace of a push that creates many keys at once.
//!
//! `git push` matches every explicit refspec (`<id>:refs/handoffs/<key>`)
//! against every local ref, so a push naming 10,000 keys in a repository
//! holding 30,000 refs costs minutes. A push that creates keys in a
//! repository with many refs therefore pins each gated value under
//! `refs/handoff-push/<pid>/<key>` and sends them all with one glob
//! refspec, `refs/handoff-push/<pid>/*:refs/handoffs/*` (no `+`: git only
//! creates, as the explicit create does). The pinned values are the ones
//! the gate checked, whatever a concurrent `write` does to the brief
//! meanwhile; the namespace is emptied when `git push` answers, and what a
//! killed push left is deleted by the next push (its process is gone).

use anyhow::Result;
use gix::ObjectId;

use super::refs::transaction;
use crate::store::REF_PREFIX;
use crate::store::refs::{delete, update};
use crate::store::remotes::{OUTGOING_PREFIX, ids_under};

/// How many refs (of the handoff namespaces) a repository holds before a
/// push pins its creates rather than naming each one: below it, git's
/// matching of explicit refspecs costs less than writing and deleting a
/// ref per key.
pub(super) const PIN_AT_REFS: usize = 512;

/// The values a push pinned, deleted again when dropped.
pub(super) struct Pinned<'r> {
    repo: &'r gix::Repository,
    prefix: String,
    refs: Vec<(String, ObjectId)>,
}

impl<'r> Pinned<'r> {
    /// Pin `creates` (key, gated value) under this process's namespace,
    /// after deleting what killed pushes left there.
    pub(super) fn pin(
        repo: &'r gix::Repository,
        creates: &[(String, ObjectId)],
    ) -> Result<Pinned<'r>> {
        sweep(repo)?;
        let prefix = format!("{OUTGOING_PREFIX}{}/", std::process::id());
        let refs: Vec<(String, ObjectId)> = creates
            .iter()
            .map(|(key, id)| (format!("{prefix}{key}"), *id))
            .collect();
        let edits = refs
            .iter()
            .map(|(name, id)| update(name, *id, None, "handoff: push"))
            .collect();
        if !transaction(repo, edits)? {
            anyhow::bail!(
                "cannot pin the outgoing briefs under {prefix}: another process holds refs there"
            );
        }
        Ok(Pinned { repo, prefix, refs })
    }

    /// The refspec that sends every pinned value to its key, create only.
    pub(super) fn refspec(&self) -> String {
        format!("{}*:{REF_PREFIX}*", self.prefix)
    }
}

impl Drop for Pinned<'_> {
    fn drop(&mut self) {
        let edits = self
            .refs
            .iter()
            .map(|(name, id)| delete(name, *id))
            .collect();
        // Best effort: what stays is deleted by the next push.
        let _ = transaction(self.repo, edits);
    }
}

/// Delete the outgoing refs of pushes whose process is gone (killed, or
/// an earlier process that had this one's id). Every push runs it, not
/// only one that pins.
pub(super) fn sweep(repo: &gix::Repository) -> Result<()> {
    let mine = std::process::id().to_string();
    let stale: Vec<_> = ids_under(repo, OUTGOING_PREFIX)?
        .into_iter()
        .filter(|(rest, _)| {
            let owner = rest.split('/').next().unwrap_or_default();
            owner == mine || !alive(owner)
        })
        .map(|(rest, id)| delete(format!("{OUTGOING_PREFIX}{rest}"), id))
        .collect();
    transaction(repo, stale)?;
    Ok(())
}

/// Whether the process `pid` runs on this machine: where `/proc` cannot
/// tell, assumed alive (its refs stay, harmless, until it can).
fn alive(pid: &str) -> bool {
    let proc = std::path::Path::new("/proc");
    !proc.join("self").exists() || pid.parse::<u32>().is_err() || proc.join(pid).exists()
}
