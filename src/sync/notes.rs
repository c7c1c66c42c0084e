//! The notes history merge: fast-forward when one history contains the
//! other, else a merge commit whose notes are the union of both sides'
//! lines (`cat_sort_uniq`), so that no version is ever lost.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Context, Result};
use gix::ObjectId;
use gix::bstr::ByteSlice;

use super::NotesMerge;
use super::refs::{previous, set, transaction};
use crate::store::NOTES_REF;
use crate::store::history;

/// How often a notes merge or a notes push is retried after another
/// writer moved the history.
pub(super) const NOTES_RETRIES: usize = 5;

/// How two notes tips relate, from one merge base: `Some(true)` when
/// `theirs` is contained in `ours`, `Some(false)` when `ours` is contained
/// in `theirs` (a fast-forward), `None` when both have commits of their own.
/// A merge base is always a real common ancestor, so a skewed clock can
/// at worst cost a needless merge commit, never a lost version.
pub(super) fn contains(
    repo: &gix::Repository,
    ours: ObjectId,
    theirs: ObjectId,
) -> Result<Option<bool>> {
    let base = repo
        .merge_base(ours, theirs)
        .with_context(|| format!("cannot compare notes commits {ours} and {theirs}"))?
        .map(|b| b.detach());
    Ok(match base {
        Some(b) if b == theirs => Some(true),
        Some(b) if b == ours => Some(false),
        _ => None,
    })
}

/// Every note of a notes tree: annotated object → note blob, whatever the
/// fanout.
pub(super) fn notes_of(
    repo: &gix::Repository,
    tree: ObjectId,
) -> Result<BTreeMap<ObjectId, ObjectId>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![(tree, String::new())];
    while let Some((id, prefix)) = stack.pop() {
        let tree = repo
            .find_tree(id)
            .with_context(|| format!("cannot read notes tree {id}"))?;
        let decoded = tree
            .decode()
            .with_context(|| format!("cannot read notes tree {id}"))?;
        for entry in &decoded.entries {
            let path = format!("{prefix}{}", entry.filename.to_str_lossy());
            if entry.mode.is_tree() {
                stack.push((entry.oid.to_owned(), path));
            } else if entry.mode.is_blob()
                && let Ok(annotated) = ObjectId::from_hex(path.as_bytes())
            {
                out.insert(annotated, entry.oid.to_owned());
            }
        }
    }
    Ok(out)
}

/// `cat_sort_uniq`: the lines of both notes, sorted, without duplicates or
/// empty lines.
pub fn cat_sort_uniq(ours: &[u8], theirs: &[u8]) -> Vec<u8> {
    let lines: BTreeSet<&[u8]> = ours
        .lines()
        .chain(theirs.lines())
        .filter(|l| !l.trim().is_empty())
        .collect();
    let mut out = Vec::new();
    for line in lines {
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    out
}

/// Merge `theirs` (a remote's notes history) into `refs/notes/handoffs`:
/// fast-forward when one contains the other, else a merge commit whose
/// parents are both tips and whose notes are the union of both sides'
/// lines (`cat_sort_uniq`), so no version is ever lost and `git log`
/// reaches all of them.
pub fn merge_notes(
    repo: &gix::Repository,
    remote: &str,
    theirs: Option<ObjectId>,
) -> Result<NotesMerge> {
    let Some(theirs) = theirs else {
        return Ok(NotesMerge::NoRemoteHistory);
    };
    let message = format!("handoff: merge notes from {remote}");
    for _ in 0..NOTES_RETRIES * 4 {
        let ours = history::peel(repo, NOTES_REF)?;
        let (result, new) = match ours {
            None => (NotesMerge::Created(theirs), theirs),
            Some(o) if o == theirs => return Ok(NotesMerge::UpToDate),
            Some(o) => match contains(repo, o, theirs)? {
                Some(true) => return Ok(NotesMerge::UpToDate),
                Some(false) => (NotesMerge::FastForwarded(theirs), theirs),
                None => {
                    // Loose objects written again when a concurrent `git
                    // gc` removed their directory under them.
                    let commit =
                        crate::store::again_after_gc(|| merge_commit(repo, remote, o, theirs))?;
                    (NotesMerge::Merged(commit), commit)
                }
            },
        };
        if transaction(repo, vec![set(NOTES_REF, previous(ours), new, &message)?])? {
            return Ok(result);
        }
    }
    crate::refuse!(
        "{NOTES_REF} kept changing while merging the history from '{remote}'; fetch again"
    )
}

/// A merge that found nothing to take (`UpToDate`) told apart: the local
/// history equals the remote's, or holds more (`Behind`: versions written
/// here and not pushed yet), or the remote went back from `before` (its
/// tip at the last fetch or push) to an older commit (`RolledBack`).
pub(super) fn behind(
    repo: &gix::Repository,
    merge: NotesMerge,
    theirs: Option<ObjectId>,
    before: Option<ObjectId>,
) -> Result<NotesMerge> {
    let (NotesMerge::UpToDate, Some(theirs)) = (merge, theirs) else {
        return Ok(merge);
    };
    if history::peel(repo, NOTES_REF)? == Some(theirs) {
        return Ok(merge);
    }
    Ok(match before {
        Some(was) if was != theirs && contains(repo, was, theirs)? == Some(true) => {
            NotesMerge::RolledBack { now: theirs, was }
        }
        _ => NotesMerge::Behind(theirs),
    })
}

/// The tree of the notes commit `id`.
pub(super) fn tree_of(repo: &gix::Repository, id: ObjectId) -> Result<ObjectId> {
    Ok(repo
        .find_commit(id)
        .with_context(|| format!("cannot read notes commit {id}"))?
        .tree_id()
        .context("cannot read a notes tree")?
        .detach())
}

/// The bytes of the note blob `id`.
pub(super) fn note_bytes(repo: &gix::Repository, id: ObjectId) -> Result<Vec<u8>> {
    Ok(repo
        .find_blob(id)
        .with_context(|| format!("cannot read note {id}"))?
        .detach()
        .data)
}

pub(super) fn merge_commit(
    repo: &gix::Repository,
    remote: &str,
    ours: ObjectId,
    theirs: ObjectId,
) -> Result<ObjectId> {
    let tree_of = |id: ObjectId| super::notes::tree_of(repo, id);
    let (our_tree, their_tree) = (tree_of(ours)?, tree_of(theirs)?);
    let our_notes = notes_of(repo, our_tree)?;
    let their_notes = notes_of(repo, their_tree)?;
    let mut state =
        gix::note::plumbing::State::new(our_tree, repo).context("cannot read the notes tree")?;
    for (annotated, their_blob) in their_notes {
        let merged = match our_notes.get(&annotated) {
            Some(our_blob) if *our_blob == their_blob => continue,
            None => their_blob,
            Some(our_blob) => {
                let data = cat_sort_uniq(
                    &note_bytes(repo, *our_blob)?,
                    &note_bytes(repo, their_blob)?,
                );
                repo.write_blob(&data)
                    .context("cannot write a merged note")?
                    .detach()
            }
        };
        state
            .edit(annotated, Some(merged), repo)
            .context("cannot edit the notes tree")?;
    }
    let tree = state.write(repo).context("cannot write the notes tree")?;
    let (committer, author) = crate::store::refs::signature(repo)?;
    Ok(repo
        .new_commit_as(
            committer,
            author,
            format!("Notes merged from '{remote}' by 'git handoff' (cat_sort_uniq)\n"),
            tree,
            [ours, theirs],
        )
        .context("cannot write the notes merge commit")?
        .id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cat_sort_uniq_unions_lines() {
        assert_eq!(cat_sort_uniq(b"b\na\n", b"c\na\n\n"), b"a\nb\nc\n".to_vec());
        assert_eq!(cat_sort_uniq(b"", b"x"), b"x\n".to_vec());
    }
}
