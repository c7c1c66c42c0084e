//! Whether one version of a key is an older version of another's line:
//! the notes commit that first recorded the newer version had the older
//! one in its history already. This tells a false divergence from a true
//! one: a push killed after the remote took its value (the base still
//! says the value before), then a new write here, leaves local, base and
//! remote all different, yet the remote's value is an older version of
//! the local line — ahead, not diverged. The mirror case (a fetch killed
//! between a brief and its base, then the remote moved on) is a
//! fast-forward. Asked only for keys whose three sides all differ.

use anyhow::Result;
use gix::ObjectId;

use super::Status;
use super::reconcile::Action;
use crate::brief::Brief;
use crate::store::history;

/// How many notes commits a walk reads at most before it gives up (and
/// the key stays diverged).
const WALK_LIMIT: usize = 200_000;

/// A diverged key settled by the histories: ahead when the remote's value
/// is an older version of the local line (in the local history `notes.0`),
/// fast-forwarded when the local value is an older version of the
/// remote's line (in the remote's history `notes.1`); otherwise as it was.
///
/// Without a base (a first fetch of a key both sides hold) the same test
/// decides: a version merely present in the other side's history (the
/// whole history travels with every push) is not evidence that the other
/// side's value was written on top of it.
pub(super) fn settle(
    repo: &gix::Repository,
    key: &str,
    (l, b, r): (Option<ObjectId>, Option<ObjectId>, Option<ObjectId>),
    (status, action): (Status, Action),
    (local_notes, remote_notes): (Option<ObjectId>, Option<ObjectId>),
) -> Result<(Status, Action)> {
    let first = b.is_none() && matches!(status, Status::Ahead | Status::FastForwarded);
    let (true, Some(l), Some(r)) = (status == Status::Diverged || first, l, r) else {
        return Ok((status, action));
    };
    if l == r {
        return Ok((status, action));
    }
    let local_notes = current_notes(repo, local_notes)?;
    if follows(repo, local_notes, key, l, r)? {
        return Ok((Status::Ahead, Action::SetBase(r)));
    }
    if follows(repo, remote_notes, key, r, l)? {
        return Ok((Status::FastForwarded, Action::TakeRemote));
    }
    Ok((Status::Diverged, Action::Nothing))
}

/// A rollback (the remote holds an older version of the key than the local
/// one, by the order of `log`) only when the local version was written on
/// top of the remote's (the notes commit that first recorded it had it):
/// otherwise the remote's value is another line — a teammate's
/// `resolve --keep-local`, say — and the fast-forward stands. `before` is
/// the status the three-way rules gave, `checked` what the rollback check
/// made of it.
pub(super) fn confirm_rollback(
    repo: &gix::Repository,
    key: &str,
    (l, r): (Option<ObjectId>, Option<ObjectId>),
    (before, checked): (Status, (Status, Action)),
    local_notes: Option<ObjectId>,
) -> Result<(Status, Action)> {
    let (Status::RolledBack, Some(l), Some(r)) = (checked.0, l, r) else {
        return Ok(checked);
    };
    if follows(repo, current_notes(repo, local_notes)?, key, l, r)? {
        return Ok(checked);
    }
    Ok(super::fetch::check_remote_value(
        repo,
        key,
        (Some(l), Some(r)),
        None,
        (before, Action::TakeRemote),
    ))
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
