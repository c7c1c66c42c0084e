//! For versions written before lineage was recorded (see
//! `store::lineage`, which decides every other case): whether one version
//! of a key is an older version of another's line, the notes commit that
//! first recorded the newer version having had the older one in its
//! history already. Used only to confirm a rollback (keep the local
//! value); never to take a remote value.

use anyhow::Result;
use gix::ObjectId;

use super::Status;
use super::reconcile::Action;
use crate::brief::Brief;
use crate::store::history;

/// How many notes commits a walk reads at most before it gives up (and
/// the key stays diverged).
const WALK_LIMIT: usize = 200_000;

/// For versions the version graph cannot place (written by a git-handoff
/// that recorded no lineage): a rollback (the remote holds an older
/// version of the key than the local one, by the order of `log`) only when
/// the local version was written on top of the remote's (the notes commit
/// that first recorded it had it); otherwise the remote's value may be
/// another line — a teammate's `resolve --keep-local`, say — and the key
/// is diverged, never fast-forwarded on that evidence. `checked` is what
/// the rollback check made of the three-way rules' answer.
pub(super) fn confirm_rollback(
    repo: &gix::Repository,
    key: &str,
    (l, r): (Option<ObjectId>, Option<ObjectId>),
    checked: (Status, Action),
    local_notes: Option<ObjectId>,
) -> Result<(Status, Action)> {
    let (Status::RolledBack, Some(l), Some(r)) = (checked.0, l, r) else {
        return Ok(checked);
    };
    if follows(repo, current_notes(repo, local_notes)?, key, l, r)? {
        return Ok(checked);
    }
    Ok((Status::Diverged, Action::Nothing))
}

/// The local history as it is now: a brief written while the fetch ran
/// (read after the history the fetch started from) has its version there,
/// since a write commits the history before the brief.
fn current_notes(repo: &gix::Repository, before: Option<ObjectId>) -> Result<Option<ObjectId>> {
    Ok(history::peel(repo, crate::store::NOTES_REF)?.or(before))
}

/// Whether, in the notes history at `tip`, the commit that first recorded
/// version `newer` of `key` had version `older` in its history.
pub(super) fn follows(
    repo: &gix::Repository,
    tip: Option<ObjectId>,
    key: &str,
    newer: ObjectId,
    older: ObjectId,
) -> Result<bool> {
    let (Some(tip), Some(new_head), Some(old_head)) =
        (tip, head_of(repo, newer, key), head_of(repo, older, key))
    else {
        return Ok(false);
    };
    let holds = |commit: ObjectId, head: ObjectId, id: ObjectId| -> Result<bool> {
        note_holds(repo, commit, head, key, id)
    };
    if !holds(tip, new_head, newer)? {
        return Ok(false);
    }
    let mut current = tip;
    for _ in 0..WALK_LIMIT {
        let parents: Vec<ObjectId> = repo
            .find_commit(current)?
            .parent_ids()
            .map(|p| p.detach())
            .collect();
        let mut next = None;
        for p in &parents {
            if holds(*p, new_head, newer)? {
                next = Some(*p);
                break;
            }
        }
        match next {
            Some(p) => current = p,
            None => {
                for p in parents {
                    if holds(p, old_head, older)? {
                        return Ok(true);
                    }
                }
                return Ok(false);
            }
        }
    }
    Ok(false)
}

/// The commit a version of `key` annotates (its `head_sha`), if the blob
/// is a brief of that key.
fn head_of(repo: &gix::Repository, id: ObjectId, key: &str) -> Option<ObjectId> {
    let blob = repo.find_blob(id).ok()?;
    let brief = Brief::from_slice(&blob.data).ok()?;
    if brief.key != key {
        return None;
    }
    ObjectId::from_hex(brief.state.head_sha.as_deref()?.as_bytes()).ok()
}

/// Whether the note on `head` in the notes commit `commit` holds version
/// `id` of `key`.
fn note_holds(
    repo: &gix::Repository,
    commit: ObjectId,
    head: ObjectId,
    key: &str,
    id: ObjectId,
) -> Result<bool> {
    let Some(note) = crate::store::note_of(repo, commit, head)? else {
        return Ok(false);
    };
    let needle = serde_json::to_string(key)?;
    for line in note.split(|b| *b == b'\n') {
        if !contains(line, needle.as_bytes()) {
            continue;
        }
        let Ok(brief) = Brief::from_slice(line) else {
            continue;
        };
        if brief.key == key && history::version_id(repo, &brief.to_pretty_json())? == id {
            return Ok(true);
        }
    }
    Ok(false)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}
