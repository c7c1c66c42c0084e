//! The history index: every distinct version line of the notes histories
//! reachable from a set of tips, with where it first appears, its key, its
//! version id and its timestamp, so that `log KEY`, `show KEY@{N}`, `diff`
//! and fetch's history checks read the versions of one key without
//! walking the whole history again.
//!
//! The index is derived data under `<common git dir>/handoff-history-index/`,
//! one file per set of tips (named by a hash of them), content-addressed
//! like the list cache: a file for exactly the current tips is read as is;
//! otherwise the newest file is extended by walking only the notes commits
//! it does not cover (when every tip it was built for is still reachable;
//! else the index is rebuilt). Missing, unreadable or damaged files cost
//! time only; deleting them is safe.
//!
//! Building walks each notes commit once and reads only the note blobs it
//! changed against its first parent; a note that grew by appending (every
//! write) is read past the part its parent held, so a note of N lines
//! written one line at a time costs O(N) lines, not O(N²). A line's place
//! is the smallest (generation, line number) of all its occurrences, which
//! does not depend on the order commits are visited: the incremental and
//! the full build agree.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, anyhow, bail};
use gix::ObjectId;
use gix::bstr::ByteSlice;

use crate::brief::Brief;
use crate::git::packs::Packs;

mod file;

/// How many index files (sets of tips) are kept.
const KEEP: usize = 4;

/// One distinct version line.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Generation of the first notes commit holding it (1 + longest chain).
    pub generation: u64,
    /// Its line number in that commit's note.
    pub index: usize,
    /// Its timestamp (seconds), `i64::MIN` when unreadable.
    pub ts: i64,
    /// The version id (blob id of its pretty JSON).
    pub id: ObjectId,
    /// The key.
    pub key: String,
    /// The line as stored in the note (trimmed).
    pub line: Vec<u8>,
}

/// The notes commits an index covers and the lines it holds.
#[derive(Debug, Default)]
pub struct Index {
    tips: Vec<ObjectId>,
    /// Commit → (generation, parents).
    commits: HashMap<ObjectId, (u64, Vec<ObjectId>)>,
    /// The brief lines and the lineage lines (under their key's
    /// [`crate::store::lineage::section`]), by text.
    pub entries: HashMap<Vec<u8>, Entry>,
    /// Lines seen that are not briefs (by text), so they are parsed once.
    others: HashSet<Vec<u8>>,
}

/// The note blobs of one build: how they are read, the notes not read yet
/// and the note read last.
struct Notes {
    packs: Packs,
    /// Notes not read yet, by their newest blob: each a run of blobs that
    /// appended to one another, whose lines are read once, from the newest.
    runs: HashMap<ObjectId, Run>,
    /// The note read last: in a chain of appends it is the next one's
    /// parent note, which then is not read again.
    last: Option<(ObjectId, Vec<u8>, usize)>,
    /// The buffer the note read before the last one was in, to read the
    /// next one into.
    spare: Vec<u8>,
}

/// Blobs of one note, each proven to begin with the one before
/// ([`Packs::extends`]); the first's lines are in the index already.
struct Run {
    /// The newest blob.
    blob: ObjectId,
    /// How many first bytes of the newest blob hold lines already added.
    known: u64,
    /// How many newlines those bytes hold, when known without counting.
    known_lines: Option<usize>,
    /// Each later blob's generation and size, oldest first.
    steps: Vec<(u64, u64)>,
}

fn dir(repo: &gix::Repository) -> PathBuf {
    repo.common_dir().join("handoff-history-index")
}

fn file_name(repo: &gix::Repository, tips: &[ObjectId]) -> Option<String> {
    let mut hasher = gix::hash::hasher(repo.object_hash());
    for tip in tips {
        hasher.update(tip.as_bytes());
    }
    hasher.try_finalize().ok().map(|id| id.to_string())
}

fn sorted(tips: &[ObjectId]) -> Vec<ObjectId> {
    let mut tips = tips.to_vec();
    tips.sort();
    tips.dedup();
    tips
}

/// The index of the notes histories at `tips`, read from its file, or
/// extended from the newest one, or built; saved for the next run.
pub fn load(repo: &gix::Repository, tips: &[ObjectId]) -> Result<Index> {
    let tips = sorted(tips);
    let (dir, kind) = (dir(repo), repo.object_hash());
    let name = file_name(repo, &tips);
    if let Some(name) = &name
        && let Some(index) = file::read(&dir.join(name), kind)
        && index.tips == tips
    {
        return Ok(index);
    }
    let mut index = start_from(repo, &dir, &tips);
    index.extend(repo, &tips)?;
    if let Some(name) = name {
        save(&dir, &name, kind, &index);
    }
    Ok(index)
}

/// The index an index of `tips` is extended from: the newest file in
/// `dir` when every tip it was built for is reachable from `tips`, else an
/// empty one.
fn start_from(repo: &gix::Repository, dir: &Path, tips: &[ObjectId]) -> Index {
    newest(dir)
        .and_then(|path| file::read(&path, repo.object_hash()))
        .filter(|old| old.covers_within(repo, tips))
        .unwrap_or_default()
}

/// `repo` without an object cache, for a walk that reads every object
/// once (a cache would only copy them).
fn uncached(repo: &gix::Repository) -> gix::Repository {
    let mut repo = repo.clone();
    repo.object_cache_size(None);
    repo
}

/// The lines of `key` in the notes histories at `tips`. When the index
/// file of exactly these tips exists, only its head, directory and the
/// key's section are read (O(versions of the key)); otherwise as
/// [`load`]. The caller checks each line against its id
/// ([`crate::store::history`]) and calls [`rebuild`] on a mismatch.
pub fn entries_of(repo: &gix::Repository, tips: &[ObjectId], key: &str) -> Result<Vec<Entry>> {
    let tips = sorted(tips);
    if let Some(name) = file_name(repo, &tips)
        && let Some(entries) = file::read_key(&dir(repo).join(name), repo.object_hash(), &tips, key)
    {
        return Ok(entries);
    }
    let index = load(repo, &tips)?;
    Ok(index
        .entries
        .into_values()
        .filter(|e| e.key == key)
        .collect())
}

/// Make sure the index file of exactly `tips` exists: when it does (its
/// head names these tips; only the head is read), nothing is done;
/// otherwise as [`load`] (the newest file extended, else the index
/// built), and saved. What a fetch runs once the remote's history has
/// arrived, so that the first `log KEY` after it reads only that key's
/// lines, however long the history.
pub fn prepare(repo: &gix::Repository, tips: &[ObjectId]) -> Result<()> {
    let tips = sorted(tips);
    if let Some(name) = file_name(repo, &tips)
        && file::is_for(&dir(repo).join(name), &tips)
    {
        return Ok(());
    }
    load(repo, &tips).map(drop)
}

/// Whether the notes history at `tip`, not trusted yet (a remote's, as
/// fetched), shows itself a notes history while the index of `trusted`
/// and `tip` is extended or built: every notes commit the index did not
/// cover is a commit, and every tree entry it changed against its first
/// parent is a note or a fan-out directory of notes (an entry it kept was
/// judged with the parent). The index is saved when its lines could be
/// read, so that one walk of the new commits both checks them and indexes
/// them. `false` when the walk did not show it (the caller then judges the
/// history another way): a commit or tree that is not one or cannot be
/// read, an entry that is not a note. The index this starts from covers
/// only histories that were judged before (the local one, the remotes'
/// published ones).
pub fn check(repo: &gix::Repository, trusted: &[ObjectId], tip: ObjectId) -> bool {
    let tips = sorted(&[trusted, &[tip]].concat());
    let (dir, kind) = (dir(repo), repo.object_hash());
    let Some(name) = file_name(repo, &tips) else {
        return false;
    };
    if file::is_for(&dir.join(&name), &tips) {
        return true;
    }
    let repo = &uncached(repo);
    let mut index = start_from(repo, &dir, &tips);
    let Ok((changes, packs)) = index.changes(repo, &tips, true) else {
        return false;
    };
    // The shape is shown; the lines may still fail to read (then the
    // index is built later, or by `log`).
    if index.add_changes(repo, changes, packs).is_ok() {
        index.tips = tips;
        save(&dir, &name, kind, &index);
    }
    true
}

/// Discard every index file (one was found lying: its lines do not match
/// their ids) and build the index of `tips` again from the notes history.
pub fn rebuild(repo: &gix::Repository, tips: &[ObjectId]) -> Result<Index> {
    forget(repo);
    load(repo, tips)
}

/// Delete every index file: after the notes history was rewritten (`redact
/// --history`), no copy of a line it removed may stay behind.
pub fn forget(repo: &gix::Repository) {
    if let Ok(files) = std::fs::read_dir(dir(repo)) {
        for file in files.flatten() {
            if !file.file_name().to_string_lossy().contains('.') {
                let _ = std::fs::remove_file(file.path());
            }
        }
    }
}

/// Build the index of `tips` from nothing, without reading or writing any
/// file.
pub fn build(repo: &gix::Repository, tips: &[ObjectId]) -> Result<Index> {
    let mut index = Index::default();
    index.extend(repo, &sorted(tips))?;
    Ok(index)
}

impl Index {
    /// Whether every tip this index was built for is reachable from
    /// `tips` (so that nothing it holds is gone from the history).
    fn covers_within(&self, repo: &gix::Repository, tips: &[ObjectId]) -> bool {
        // Walk from the new tips down to the commits this index covers,
        // then within the covered graph (no object reads).
        let mut reached: HashSet<ObjectId> = HashSet::new();
        let mut queue: Vec<ObjectId> = tips.to_vec();
        let mut outside: HashSet<ObjectId> = HashSet::new();
        while let Some(id) = queue.pop() {
            if let Some((_, parents)) = self.commits.get(&id) {
                if reached.insert(id) {
                    queue.extend(parents.iter().copied());
                }
                continue;
            }
            if !outside.insert(id) {
                continue;
            }
            let Ok(commit) = repo.find_commit(id) else {
                return false;
            };
            queue.extend(commit.parent_ids().map(|p| p.detach()));
        }
        self.tips.iter().all(|t| reached.contains(t))
    }

    /// Walk the commits of `tips` this index does not cover yet, and add
    /// their lines.
    fn extend(&mut self, repo: &gix::Repository, tips: &[ObjectId]) -> Result<()> {
        let repo = &uncached(repo);
        let (changes, packs) = self.changes(repo, tips, false)?;
        self.add_changes(repo, changes, packs)?;
        self.tips = tips.to_vec();
        Ok(())
    }

    /// The commits of `tips` this index does not cover yet, recorded in
    /// it, and the note blobs each changed against its first parent (with
    /// the blob each replaced), by generation; read trees first, so that
    /// the notes are located at once. With `check`, an error also when a
    /// new commit is not a notes commit: not a commit, or a tree entry
    /// that is not a note or a fan-out directory of notes (what
    /// [`check`] tells).
    fn changes(
        &mut self,
        repo: &gix::Repository,
        tips: &[ObjectId],
        check: bool,
    ) -> Result<(Changes, Packs)> {
        let new = self.new_commits(repo, tips)?;
        let generations = self.generations(&new);
        let mut order: Vec<(u64, ObjectId)> = new.keys().map(|id| (generations[id], *id)).collect();
        order.sort();
        let mut trees = Trees::default();
        let mut packs = Packs::new(repo, crate::git::repo::pack_cache_bytes(repo));
        packs.locate(new.values().map(|(tree, _)| *tree).collect());
        let mut changes = Vec::with_capacity(order.len());
        let depth = check.then_some(0);
        for (generation, id) in order {
            let (tree, parents) = &new[&id];
            let parent_tree = match parents.first() {
                Some(p) => Some(match new.get(p) {
                    Some((t, _)) => *t,
                    None => repo
                        .find_commit(*p)
                        .with_context(|| format!("cannot read notes commit {p}"))?
                        .tree_id()
                        .with_context(|| format!("cannot read the tree of notes commit {p}"))?
                        .detach(),
                }),
                None => None,
            };
            let mut changed = Vec::new();
            trees.next();
            let walk = (&mut packs, &mut trees);
            changed_notes(repo, walk, (*tree, parent_tree), depth, &mut changed)?;
            changes.push((generation, changed));
            self.commits.insert(id, (generation, parents.clone()));
        }
        Ok((changes, packs))
    }

    /// The commits reachable from `tips` this index does not cover, each
    /// with its tree and parents.
    fn new_commits(
        &self,
        repo: &gix::Repository,
        tips: &[ObjectId],
    ) -> Result<HashMap<ObjectId, (ObjectId, Vec<ObjectId>)>> {
        let mut new: HashMap<ObjectId, (ObjectId, Vec<ObjectId>)> = HashMap::new();
        let mut queue: Vec<ObjectId> = tips.to_vec();
        while let Some(id) = queue.pop() {
            if self.commits.contains_key(&id) || new.contains_key(&id) {
                continue;
            }
            let commit = repo.find_commit(id).with_context(|| {
                format!("the notes history is damaged: cannot read commit {id}")
            })?;
            let tree = commit
                .tree_id()
                .with_context(|| format!("cannot read the tree of notes commit {id}"))?
                .detach();
            let parents: Vec<ObjectId> = commit.parent_ids().map(|p| p.detach()).collect();
            queue.extend(parents.iter().copied());
            new.insert(id, (tree, parents));
        }
        Ok(new)
    }

    /// Add the lines of the note blobs [`Index::changes`] found, every
    /// note located at once.
    fn add_changes(
        &mut self,
        repo: &gix::Repository,
        changes: Changes,
        packs: Packs,
    ) -> Result<()> {
        let mut notes = Notes {
            packs,
            runs: HashMap::new(),
            last: None,
            spare: Vec::new(),
        };
        notes.packs.locate(
            changes
                .iter()
                .flat_map(|(_, c)| c.iter().flat_map(|(b, o)| std::iter::once(*b).chain(*o)))
                .collect(),
        );
        for (generation, changed) in changes {
            for (blob, old) in changed {
                self.add_note(repo, &mut notes, blob, old, generation)?;
            }
        }
        let runs: Vec<Run> = notes.runs.drain().map(|(_, run)| run).collect();
        for run in runs {
            self.read_run(repo, &mut notes, run)?;
        }
        Ok(())
    }

    /// Generations of the new commits (the covered ones are known).
    fn generations(
        &self,
        new: &HashMap<ObjectId, (ObjectId, Vec<ObjectId>)>,
    ) -> HashMap<ObjectId, u64> {
        let mut generation: HashMap<ObjectId, u64> = HashMap::new();
        for start in new.keys() {
            let mut stack = vec![(*start, false)];
            while let Some((id, expanded)) = stack.pop() {
                if generation.contains_key(&id) {
                    continue;
                }
                let Some((_, parents)) = new.get(&id) else {
                    continue;
                };
                let known = |p: &ObjectId| {
                    generation
                        .get(p)
                        .copied()
                        .or_else(|| self.commits.get(p).map(|c| c.0))
                };
                if expanded {
                    let g = parents.iter().filter_map(known).max().map_or(1, |g| g + 1);
                    generation.insert(id, g);
                } else {
                    stack.push((id, true));
                    stack.extend(
                        parents
                            .iter()
                            .filter(|p| known(p).is_none() && new.contains_key(*p))
                            .map(|p| (*p, false)),
                    );
                }
            }
        }
        generation
    }

    /// Add the lines of note `blob`, which replaced `old` at the same place
    /// in the parent commit. When the pack proves it only appended to
    /// `old`, nothing is read now: the blob joins `old`'s run, read once
    /// from its newest blob. Otherwise it is read, and when it only
    /// appended to `old` only the lines after `old` are added (those
    /// before were added with the parent, at a smaller generation).
    fn add_note(
        &mut self,
        repo: &gix::Repository,
        notes: &mut Notes,
        blob: ObjectId,
        old: Option<ObjectId>,
        generation: u64,
    ) -> Result<()> {
        if let Some(old) = old {
            let run = notes.runs.remove(&old);
            if !notes.runs.contains_key(&blob)
                && let Some((old_len, len)) = notes.packs.extends(old, blob)
            {
                let known_lines = match &notes.last {
                    Some((id, _, n)) if *id == old => Some(*n),
                    _ => None,
                };
                let mut run = run.unwrap_or(Run {
                    blob: old,
                    known: old_len,
                    known_lines,
                    steps: Vec::new(),
                });
                run.blob = blob;
                run.steps.push((generation, len));
                notes.runs.insert(blob, run);
                return Ok(());
            }
            if let Some(run) = run {
                self.read_run(repo, notes, run)?;
            }
        }
        let last = notes.last.take();
        let known = match (old, &last) {
            (Some(old), Some((id, data, _))) if *id == old => Some((old, &data[..])),
            _ => None,
        };
        let mut data = std::mem::take(&mut notes.spare);
        notes
            .packs
            .blob_into(repo, blob, known, &mut data)
            .with_context(|| format!("cannot read note {blob}"))?;
        let newlines = |d: &[u8]| d.iter().filter(|b| **b == b'\n').count();
        let mut fetched = None;
        let old_data = match (old, &last) {
            (Some(old), Some((id, data, n))) if *id == old => Some((&data[..], *n)),
            (Some(old), _) => {
                fetched = notes.packs.blob(repo, old, None);
                fetched.as_ref().map(|b| (&b[..], newlines(b)))
            }
            (None, _) => None,
        };
        let (mut start, mut first) = (0, 0);
        if let Some((old, n)) = old_data
            && old.last().is_none_or(|b| *b == b'\n')
            && data.starts_with(old)
        {
            start = old.len();
            first = n;
        }
        drop(fetched);
        for (offset, line) in data[start..].lines().enumerate() {
            self.add_line(repo, line, generation, first + offset)?;
        }
        let n = first + newlines(&data[start..]);
        notes.spare = last.map(|(_, kept, _)| kept).unwrap_or_default();
        notes.last = Some((blob, data, n));
        Ok(())
    }

    /// Read a run's newest blob and add the lines its later blobs added,
    /// each at the first blob that holds it whole; a blob that ended inside
    /// a line held that line's start as a line of its own.
    fn read_run(&mut self, repo: &gix::Repository, notes: &mut Notes, run: Run) -> Result<()> {
        // The note read last is often where the run's chain of deltas
        // starts: decoding stops there instead of inflating it again.
        let hint = notes.last.as_ref().map(|(id, data, _)| (*id, &data[..]));
        let mut data = std::mem::take(&mut notes.spare);
        notes
            .packs
            .blob_into(repo, run.blob, hint, &mut data)
            .with_context(|| format!("cannot read note {}", run.blob))?;
        let damaged = || {
            anyhow!(
                "the notes history is damaged: note {} is not the size its pack says",
                run.blob
            )
        };
        if run.steps.last().map(|s| s.1) != Some(data.len() as u64) {
            return Err(damaged());
        }
        let known = usize::try_from(run.known)
            .map_err(|_| damaged())?
            .min(data.len());
        // From the start of the line the known part ends in.
        let start = data[..known].rfind_byte(b'\n').map_or(0, |at| at + 1);
        let mut number = run
            .known_lines
            .unwrap_or_else(|| data[..start].iter().filter(|b| **b == b'\n').count());
        let mut steps = run.steps.iter().peekable();
        let mut at = start;
        while at < data.len() {
            let end = data[at..].find_byte(b'\n').map_or(data.len(), |n| at + n);
            // Blobs that ended inside this line held a part of it.
            while let Some(&&(generation, len)) = steps.peek() {
                let len = len as usize;
                if len >= end {
                    break;
                }
                steps.next();
                if len > at && len > known {
                    self.add_line(repo, &data[at..len], generation, number)?;
                }
            }
            if end > known
                && let Some(&&(generation, _)) = steps.peek()
            {
                self.add_line(repo, &data[at..end], generation, number)?;
            }
            if end < data.len() {
                number += 1;
            }
            at = end + 1;
        }
        if let Some((_, old, _)) = notes.last.replace((run.blob, data, number)) {
            notes.spare = old;
        }
        Ok(())
    }

    /// Add a line of a note, trimmed (nothing when that leaves nothing).
    fn add_line(
        &mut self,
        repo: &gix::Repository,
        line: &[u8],
        generation: u64,
        index: usize,
    ) -> Result<()> {
        let line = line.trim();
        if line.is_empty() {
            return Ok(());
        }
        if let Some(entry) = self.entries.get_mut(line) {
            if (generation, index) < (entry.generation, entry.index) {
                (entry.generation, entry.index) = (generation, index);
            }
            return Ok(());
        }
        if self.others.contains(line) {
            return Ok(());
        }
        let Ok(brief) = serde_json::from_slice::<Brief>(line) else {
            if let Some((key, id, _)) = crate::store::lineage::parse(line) {
                // A lineage line, kept under its key's lineage section
                // (`lineage::section`), read back by the version graph.
                let entry = Entry {
                    generation,
                    index,
                    ts: 0,
                    id,
                    line: line.to_vec(),
                    key: crate::store::lineage::section(&key),
                };
                self.entries.insert(line.to_vec(), entry);
                return Ok(());
            }
            self.others.insert(line.to_vec());
            return Ok(());
        };
        let id = crate::store::history::version_id(repo, &brief.to_pretty_json())?;
        self.entries.insert(
            line.to_vec(),
            Entry {
                generation,
                index,
                ts: crate::support::clock::parse(&brief.timestamp).unwrap_or(i64::MIN),
                id,
                line: line.to_vec(),
                key: brief.key,
            },
        );
        Ok(())
    }
}

/// The notes trees read for the commit walked last and for the current
/// one, by id: in a chain, a commit's parent tree is the tree read just
/// before, so each tree is read (inflated) once.
#[derive(Default)]
struct Trees {
    before: HashMap<ObjectId, Arc<Vec<u8>>>,
    now: HashMap<ObjectId, Arc<Vec<u8>>>,
}

impl Trees {
    fn get(
        &mut self,
        repo: &gix::Repository,
        packs: &mut Packs,
        id: ObjectId,
    ) -> Result<Arc<Vec<u8>>> {
        let data = match self.now.get(&id).or_else(|| self.before.get(&id)) {
            Some(data) => data.clone(),
            None => match packs.tree(repo, id) {
                Some(data) => data,
                None => return Err(anyhow!("cannot read notes tree {id}")),
            },
        };
        self.now.insert(id, data.clone());
        Ok(data)
    }

    /// The next commit: what was read for this one is its child's parent.
    fn next(&mut self) {
        self.before = std::mem::take(&mut self.now);
    }
}

/// A note blob a notes commit changed, and the blob it replaced at the
/// same place in the commit's first parent (if any).
type Change = (ObjectId, Option<ObjectId>);

/// The note blobs each new notes commit changed, by its generation.
type Changes = Vec<(u64, Vec<Change>)>;

/// The note blobs of `tree` that differ from the same place in `parent`,
/// each with the blob it replaced there (if any). Subtrees equal in both
/// are skipped. With `depth` (the length of the path `tree` is at), an
/// error for an entry that differs from the parent's and is not a note
/// nor a fan-out directory of notes: hexadecimal names, a note's path as
/// long as an object id in hex, a directory's shorter.
fn changed_notes(
    repo: &gix::Repository,
    (packs, trees): (&mut Packs, &mut Trees),
    (tree, parent): (ObjectId, Option<ObjectId>),
    depth: Option<usize>,
    out: &mut Vec<Change>,
) -> Result<()> {
    if Some(tree) == parent {
        return Ok(());
    }
    let kind = repo.object_hash();
    let new_data = trees.get(repo, packs, tree)?;
    let old_data = parent.map(|p| trees.get(repo, packs, p)).transpose()?;
    let old_bytes: &[u8] = old_data.as_deref().map_or(&[], |d| &d[..]);
    let damaged = |id: Option<ObjectId>| anyhow!("cannot read notes tree {}", id.unwrap_or(tree));
    // Both trees are in git's tree order: a merge join over the raw
    // entries, nothing decoded into lists; an entry whose bytes are the
    // parent's next entry's (most of a notes tree, from one commit to the
    // next) is skipped without decoding either. An entry matched by
    // nothing counts as new (read whole).
    let (mut at, mut old_at) = (0, 0);
    let mut subtrees = Vec::new();
    while at < new_data.len() {
        if let Some(len) = entry_len(&new_data[at..], kind)
            && old_bytes.get(old_at..old_at + len) == Some(&new_data[at..at + len])
        {
            (at, old_at) = (at + len, old_at + len);
            continue;
        }
        let (entry, len) = entry_at(&new_data[at..], kind).ok_or_else(|| damaged(None))?;
        at += len;
        if let Some(depth) = depth
            && !is_note_or_fan_out(&entry, depth, kind.len_in_hex())
        {
            bail!("notes tree {tree}: an entry is not a note");
        }
        if !(entry.mode.is_tree() || entry.mode.is_blob()) {
            continue;
        }
        let mut before = None;
        while old_at < old_bytes.len() {
            let (o, len) = entry_at(&old_bytes[old_at..], kind).ok_or_else(|| damaged(parent))?;
            if o.filename < entry.filename {
                old_at += len;
                continue;
            }
            if o.filename == entry.filename && o.mode.is_tree() == entry.mode.is_tree() {
                // Matched: the entries after it line up again.
                before = Some(o.oid.to_owned());
                old_at += len;
            }
            break;
        }
        let id = entry.oid.to_owned();
        if before == Some(id) {
            continue;
        }
        if entry.mode.is_tree() {
            subtrees.push((id, before, depth.map(|d| d + entry.filename.len())));
        } else {
            out.push((id, before));
        }
    }
    for (id, before, depth) in subtrees {
        changed_notes(repo, (&mut *packs, &mut *trees), (id, before), depth, out)?;
    }
    Ok(())
}

/// Whether the tree entry at path length `depth` is a note or a fan-out
/// directory of notes (`full`: an object id's length in hex), as the
/// secret gate's walk of a remote's history judges one.
fn is_note_or_fan_out(entry: &gix::objs::tree::EntryRef<'_>, depth: usize, full: usize) -> bool {
    let len = depth + entry.filename.len();
    entry.filename.iter().all(u8::is_ascii_hexdigit)
        && ((entry.mode.is_tree() && len < full) || (entry.mode.is_blob() && len == full))
}

/// The length of the well-formed tree entry at the start of `data` (an
/// octal mode, a space, the name, a NUL, the object id), read as
/// `TreeRefIter` reads one; `None` when there is none.
fn entry_len(data: &[u8], kind: gix::hash::Kind) -> Option<usize> {
    let nul = data.find_byte(0)?;
    let head = &data[..nul];
    head.find_byte(b' ')?;
    gix::objs::tree::EntryMode::from_bytes(head)?;
    let len = nul + 1 + kind.len_in_bytes();
    (len <= data.len()).then_some(len)
}

/// The tree entry at the start of `data`, decoded, and its length.
fn entry_at(data: &[u8], kind: gix::hash::Kind) -> Option<(gix::objs::tree::EntryRef<'_>, usize)> {
    let entry = gix::objs::TreeRefIter::from_bytes(data, kind)
        .next()?
        .ok()?;
    Some((entry, entry_len(data, kind)?))
}

fn newest(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| !e.file_name().to_string_lossy().contains('.'))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max()
        .map(|(_, path)| path)
}

fn save(dir: &Path, name: &str, kind: gix::hash::Kind, index: &Index) {
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    crate::support::shared::adjust(dir);
    let Some(data) = file::render(kind, index) else {
        return;
    };
    let _ = crate::support::atomic::write_unless_locked(&dir.join(name), &data);
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter(|e| !e.file_name().to_string_lossy().contains('.'))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    files.sort();
    files.reverse();
    for (_, path) in files.into_iter().skip(KEEP) {
        let _ = std::fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests {
    use super::{check, dir, file_name, sorted};
    use crate::support::test_git::git;
    use gix::ObjectId;
    use std::path::Path;

    fn id(text: &str) -> ObjectId {
        ObjectId::from_hex(text.trim().as_bytes()).unwrap()
    }

    fn blob(repo: &Path, text: &str) -> String {
        git(repo, &["hash-object", "-w", "--stdin"], Some(text))
            .trim()
            .to_string()
    }

    /// A tree of `entries` (`mode kind id\tname` lines), written by git.
    fn tree(repo: &Path, entries: &[String]) -> String {
        let mut input = entries.join("\n");
        input.push('\n');
        git(repo, &["mktree"], Some(&input)).trim().to_string()
    }

    fn commit(repo: &Path, tree: &str, parent: Option<&str>) -> ObjectId {
        let mut args = vec!["commit-tree", tree, "-m", "n"];
        if let Some(p) = parent {
            args.extend(["-p", p]);
        }
        id(&git(repo, &args, None))
    }

    /// A repository with a notes history of two commits, made by `git
    /// notes` (two notes on two commits); its tip.
    fn notes_repo(repo: &Path) -> ObjectId {
        git(repo, &["init", "-q"], None);
        for (i, line) in ["{\"key\":\"a\"}", "{\"key\":\"b\"}"].iter().enumerate() {
            let msg = format!("c{i}");
            git(repo, &["commit", "-q", "--allow-empty", "-m", &msg], None);
            git(repo, &["notes", "--ref=handoffs", "add", "-m", line], None);
        }
        id(&git(repo, &["rev-parse", "refs/notes/handoffs"], None))
    }

    fn saved(repo: &gix::Repository, tips: &[ObjectId]) -> bool {
        dir(repo)
            .join(file_name(repo, &sorted(tips)).unwrap())
            .is_file()
    }

    #[test]
    fn a_notes_history_is_shown_and_indexed_in_one_walk() {
        let tmp = tempfile::tempdir().unwrap();
        let tip = notes_repo(tmp.path());
        let repo = gix::open(tmp.path()).unwrap();
        assert!(check(&repo, &[], tip));
        assert!(saved(&repo, &[tip]), "the index of the tip was saved");
        // A blob is not a notes history.
        let b = id(&blob(tmp.path(), "x\n"));
        assert!(!check(&repo, &[], b));
    }

    #[test]
    fn an_entry_that_is_not_a_note_is_not_shown_nor_indexed() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path();
        let tip = notes_repo(path);
        let repo = gix::open(path).unwrap();
        let note = blob(path, "{\"key\":\"c\"}\n");
        let base: Vec<String> = git(path, &["ls-tree", &tip.to_string()], None)
            .lines()
            .map(str::to_string)
            .collect();
        let full = "0123456789abcdef0123456789abcdef01234567";
        let dir_of = |entries: &[String]| format!("040000 tree {}\tab", tree(path, entries));
        let cases: Vec<(&str, String)> = vec![
            ("a file", format!("100644 blob {note}\tREADME")),
            (
                "a short name",
                format!("100644 blob {note}\t{}", &full[..39]),
            ),
            (
                "a non-hex name",
                format!("100644 blob {note}\t{}z", &full[..39]),
            ),
            ("a gitlink", format!("160000 commit {tip}\t{full}")),
            (
                "a note too deep",
                dir_of(&[format!("100644 blob {note}\t{full}")]),
            ),
            (
                "a file in a fan-out directory",
                dir_of(&[format!("100644 blob {note}\tREADME")]),
            ),
        ];
        for (what, entry) in cases {
            let mut entries = base.clone();
            entries.push(entry);
            let bad = commit(path, &tree(path, &entries), Some(&tip.to_string()));
            assert!(!check(&repo, &[tip], bad), "{what}");
            assert!(!saved(&repo, &[tip, bad]), "{what}: nothing indexed");
        }
        // A fan-out directory of notes is one.
        let entries = [
            base.clone(),
            vec![dir_of(&[format!("100644 blob {note}\t{}", &full[2..])])],
        ]
        .concat();
        let good = commit(path, &tree(path, &entries), Some(&tip.to_string()));
        assert!(check(&repo, &[tip], good));
        assert!(saved(&repo, &[tip, good]));
    }
}
