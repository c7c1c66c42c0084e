//! After `redact --history`, what a fetch holds back because it would
//! bring a secret back: each key whose remote brief, or whose lines in the
//! remote's history, hold one, alone. The rest is reconciled as usual, and
//! the remote's history is merged without the lines that hold secrets (a
//! notes commit whose only parent is the local history, so that no
//! commit holding them becomes reachable here). Nothing holding a secret
//! is published, merged or stored.

use std::collections::{BTreeMap, HashSet};

use anyhow::{Context, Result};
use gix::ObjectId;
use gix::bstr::ByteSlice;

use super::NotesMerge;
use super::gate::{self, Finding, NotesWalk};
use super::notes::{NOTES_RETRIES, cat_sort_uniq, notes_of};
use super::refs::{previous, set, transaction};
use crate::brief::redact;
use crate::store::again_after_gc;
use crate::store::{self, NOTES_REF, history, remotes};

/// What a fetch after `redact --history` holds back.
#[derive(Debug, Default)]
pub(super) struct Returning {
    /// The held keys (as stored) and why: the rules, and whether the
    /// remote's brief itself holds the secret (else only its history).
    pub(super) keys: BTreeMap<String, HeldKey>,
    /// The digests of the remote's history lines that hold secrets.
    pub(super) lines: HashSet<ObjectId>,
    /// What holds them in the history (lines and commit messages).
    pub(super) in_history: Vec<Finding>,
}

/// Why one key is held.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct HeldKey {
    /// The rules that matched, sorted, each once.
    pub rules: Vec<&'static str>,
    /// Whether the remote's brief itself holds the secret (else only
    /// lines of its history).
    pub in_brief: bool,
}

impl HeldKey {
    fn add(&mut self, rules: &[&'static str]) {
        self.rules.extend_from_slice(rules);
        self.rules.sort_unstable();
        self.rules.dedup();
    }
}

/// What the remote's history (the part the local one lacks) and its brief
/// values that differ from the local ones bring back: secrets, by key.
pub(super) fn returning(
    repo: &gix::Repository,
    remote: &str,
    theirs: Option<ObjectId>,
    ours: Option<ObjectId>,
) -> Result<Returning> {
    let options = redact::Options::from_repo(repo);
    let mut out = Returning::default();
    if let Some(theirs) = theirs {
        let mut walk = NotesWalk::default();
        walk.mark_known_from(repo, &Vec::from_iter(ours), theirs);
        let _ = walk.add(repo, theirs)?;
        let (found, lines) = gate::findings_and_lines(repo, &mut walk, options)?;
        out.lines = lines;
        for finding in &found {
            if let Some(key) = &finding.key {
                out.keys.entry(key.clone()).or_default().add(&finding.rules);
            }
        }
        out.in_history = found;
    }
    for (key, id) in remotes::ids_under(repo, &remotes::tip_prefix(remote))? {
        if store::current_id(repo, &key).ok().flatten() == Some(id) {
            continue;
        }
        let Ok(blob) = repo.find_blob(id) else {
            continue;
        };
        let counts = redact::find_in_line(&blob.data, options);
        if !counts.is_empty() {
            let held = out.keys.entry(key).or_default();
            held.in_brief = true;
            held.add(&counts.into_keys().collect::<Vec<_>>());
        }
    }
    Ok(out)
}

/// Merge the remote's history at `theirs` into the local one without the
/// lines whose digests are in `dirty`: the union of the local notes and
/// the remote tip's clean lines, committed on top of the local history
/// alone. `NotesMerge::Held` with the commit, or with none when the local
/// history holds every clean line already.
pub(super) fn merge_clean(
    repo: &gix::Repository,
    remote: &str,
    theirs: ObjectId,
    dirty: &HashSet<ObjectId>,
) -> Result<NotesMerge> {
    let left_out = dirty.len();
    for _ in 0..NOTES_RETRIES * 4 {
        let ours = history::peel(repo, NOTES_REF)?;
        // Loose objects written again when a concurrent `git gc` removed
        // their directory under them, as the notes merge does.
        let Some(tree) = again_after_gc(|| clean_tree(repo, ours, theirs, dirty))? else {
            return Ok(NotesMerge::Held {
                commit: None,
                theirs,
                left_out,
            });
        };
        let (committer, author) = crate::store::refs::signature(repo)?;
        let commit = again_after_gc(|| {
            Ok(repo
                .new_commit_as(
                    committer,
                    author,
                    format!(
                        "Notes merged from '{remote}' by 'git handoff' (cat_sort_uniq), without the lines that hold secrets\n"
                    ),
                    tree,
                    ours,
                )
                .context("cannot write the notes merge commit")?
                .id)
        })?;
        let message = format!("handoff: merge notes from {remote}");
        if transaction(
            repo,
            vec![set(NOTES_REF, previous(ours), commit, &message)?],
        )? {
            return Ok(NotesMerge::Held {
                commit: Some(commit),
                theirs,
                left_out,
            });
        }
    }
    crate::refuse!(
        "{NOTES_REF} kept changing while merging the history from '{remote}'; fetch again"
    )
}

/// The local notes tree (at `ours`) with the clean lines of the remote's
/// tip `theirs` added; `None` when that adds nothing.
fn clean_tree(
    repo: &gix::Repository,
    ours: Option<ObjectId>,
    theirs: ObjectId,
    dirty: &HashSet<ObjectId>,
) -> Result<Option<ObjectId>> {
    let tree_of = |id: ObjectId| super::notes::tree_of(repo, id);
    let read = |id: &ObjectId| super::notes::note_bytes(repo, *id);
    let our_tree = match ours {
        Some(o) => tree_of(o)?,
        None => ObjectId::empty_tree(repo.object_hash()),
    };
    let our_notes = match ours {
        Some(_) => notes_of(repo, our_tree)?,
        None => BTreeMap::new(),
    };
    let mut state =
        gix::note::plumbing::State::new(our_tree, repo).context("cannot read the notes tree")?;
    let mut changed = false;
    for (annotated, their_blob) in notes_of(repo, tree_of(theirs)?)? {
        let ours = our_notes.get(&annotated);
        if ours == Some(&their_blob) {
            continue;
        }
        let mut clean = Vec::new();
        for line in read(&their_blob)?.lines() {
            if !dirty.contains(&gate::line_digest(repo, line)?) {
                clean.extend_from_slice(line);
                clean.push(b'\n');
            }
        }
        let our_data = ours.map(read).transpose()?.unwrap_or_default();
        let held: HashSet<&[u8]> = our_data.lines().collect();
        if clean
            .lines()
            .all(|l| l.trim().is_empty() || held.contains(l))
        {
            continue;
        }
        let merged = cat_sort_uniq(&our_data, &clean);
        let blob = repo
            .write_blob(&merged)
            .context("cannot write a merged note")?
            .detach();
        state
            .edit(annotated, Some(blob), repo)
            .context("cannot edit the notes tree")?;
        changed = true;
    }
    if !changed {
        return Ok(None);
    }
    Ok(Some(
        state.write(repo).context("cannot write the notes tree")?,
    ))
}

/// The report rows of the held keys (shown redacted), and the plan of a
/// push for them.
pub(super) fn key_reports(
    repo: &gix::Repository,
    sides: &super::refs::Sides,
    stamps: &mut super::refs::Stamps<'_>,
) -> Vec<super::fetch::KeyReport> {
    let options = redact::Options::from_repo(repo);
    sides
        .held
        .iter()
        .map(|(key, held)| {
            let (l, _, r) = sides.get(key);
            super::fetch::KeyReport {
                key: gate::redacted_key(key, options),
                status: super::Status::HeldSecret,
                local: stamps.info(l),
                remote: stamps.info(r),
                replaced: None,
                schema: None,
                secret: Some(held.clone()),
            }
        })
        .collect()
}

/// What a push does with a held key (`l` here, `r` there): nothing, unless
/// it is named, when the local brief replaces the remote's (with a lease
/// on it) or, with `--prune` and none here, the remote's is deleted.
pub(super) fn plan(
    key: &str,
    held: &HeldKey,
    (l, r): (Option<ObjectId>, ObjectId),
    options: &super::PushOptions,
) -> super::reconcile::Plan {
    use super::reconcile::Plan;
    let named = options.keys.iter().any(|k| k == key);
    match l {
        Some(l) if l == r => Plan::UpToDate,
        Some(l) if named => Plan::Send {
            lease: Some(r),
            new: l,
        },
        None if named && options.prune => Plan::Delete { lease: r },
        _ => Plan::Hold(
            super::Outcome::Skipped,
            super::Held::SecretThere {
                rules: held.rules.iter().map(|r| r.to_string()).collect(),
                here: l.is_some(),
            },
        ),
    }
}

/// Forget the staged values that hold a secret: each held key's brief and,
/// when the history was held (`theirs`), the staged notes, so that `log`
/// and `show KEY@REMOTE` never read them. The other staged values stay.
pub(super) fn forget(
    repo: &gix::Repository,
    remote: &str,
    sides: &super::refs::Sides,
    theirs: Option<ObjectId>,
) -> Result<()> {
    let mut edits = Vec::new();
    for key in sides.held.keys() {
        if let Some(r) = sides.remote.get(key) {
            edits.push(super::refs::delete(
                &remotes::tip_ref(remote, key),
                previous(Some(*r)),
            )?);
        }
    }
    if let Some(theirs) = theirs {
        edits.push(super::refs::delete(
            &remotes::staged_notes_ref(remote),
            previous(Some(theirs)),
        )?);
    }
    // Lost to a concurrent fetch, which forgets them in turn.
    transaction(repo, edits)?;
    Ok(())
}
