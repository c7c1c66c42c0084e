//! The one secret gate for what leaves and what enters through a remote,
//! and the shape check of a remote's notes history.
//!
//! A notes history is walked commit by commit, every tree and note blob
//! once ([`NotesWalk`]); what a known history already holds (the remote's,
//! before a push; the local one, before a fetch) is marked first, so only
//! the bytes that would travel are read. Every line of every new note is
//! checked, whether it parses as a brief or not, and so is every commit
//! message. Findings name the key, the version and the rule, never the
//! secret.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use anyhow::{Context, Result};
use gix::ObjectId;
use gix::bstr::ByteSlice;

use crate::brief::Brief;
use crate::brief::redact::{self, Options};
use crate::git::packs::Packs;
use crate::{store, store::history};

mod prepush;
pub use prepush::{handoff_updates, outgoing_refs};

/// The notes commits, trees and note blobs of one or more notes
/// histories.
#[derive(Default)]
pub struct NotesWalk {
    commits: HashSet<ObjectId>,
    trees: HashSet<ObjectId>,
    seen_blobs: HashSet<ObjectId>,
    /// The note blobs found by [`NotesWalk::add`], first seen first.
    pub blobs: Vec<ObjectId>,
    /// Where each new note blob was found (the annotated object's id).
    paths: HashMap<ObjectId, Vec<u8>>,
    /// The notes of the known histories' tips, by annotated object: a
    /// new note there repeats their lines, which the other side holds.
    known_notes: HashMap<Vec<u8>, Vec<ObjectId>>,
    /// The commits found by [`NotesWalk::add`] and their messages.
    pub messages: Vec<(ObjectId, Vec<u8>)>,
    /// Where trees are read from, opened on the first tree.
    packs: Option<Packs>,
    /// The tip trees of the known histories, read only along the paths
    /// the walk of a new history visits ([`NotesWalk::mark_known_along`]).
    known_roots: Vec<ObjectId>,
    /// The known trees whose entries are marked, with their subtrees.
    marked: HashMap<ObjectId, Vec<(ObjectId, Vec<u8>)>>,
}

impl NotesWalk {
    /// Mark the history at `tip` as known: its commits (all of them) and
    /// the notes of its tip tree, which [`NotesWalk::add`] then neither
    /// reports nor walks again. Only the tip's tree is read, so that this
    /// costs a commit walk, not a walk of every tree of a long history. A
    /// damaged known history is marked as far as it can be read.
    pub fn mark_known(&mut self, repo: &gix::Repository, tip: ObjectId) {
        let mut queue = vec![tip];
        while let Some(id) = queue.pop() {
            if !self.commits.insert(id) {
                continue;
            }
            if let Ok(commit) = repo.find_commit(id) {
                if id == tip {
                    self.mark_tip_notes(&commit);
                }
                queue.extend(commit.parent_ids().map(|p| p.detach()));
            }
        }
    }

    /// Mark as known what the histories at `known` hold, as far as the
    /// walk from `tip` needs it: the commits where the history at `tip`
    /// joins them (a rev-walk from `tip` that hides `known`, painted in
    /// commit-graph generation order when a commit-graph exists) and the
    /// notes of each known tip's tree. [`NotesWalk::add`] from `tip` then
    /// reads only the commits the known histories lack, however long
    /// these are. A commit is marked only when the paint reached it from a
    /// known tip, so nothing unknown is ever skipped; when the walk fails
    /// (`tip` or a known tip is not a history of commits) every known
    /// commit is marked, as [`NotesWalk::mark_known`] does.
    pub fn mark_known_from(&mut self, repo: &gix::Repository, known: &[ObjectId], tip: ObjectId) {
        if known.is_empty() {
            return;
        }
        let Some(new) = new_commits(repo, known, tip) else {
            for k in known {
                self.mark_known(repo, *k);
            }
            return;
        };
        for k in known {
            if self.commits.insert(*k)
                && let Ok(commit) = repo.find_commit(*k)
            {
                self.mark_tip_notes(&commit);
            }
        }
        let ids: HashSet<ObjectId> = new.iter().map(|(id, _)| *id).collect();
        for (_, parents) in new {
            self.commits
                .extend(parents.into_iter().filter(|p| !ids.contains(p)));
        }
    }

    /// The notes of a known tip's tree: the tree and its subtrees count as
    /// walked (what is below them is known), and its notes as seen and
    /// remembered by path, level by level only where the walk of a new
    /// history goes: a push that adds one note reads the known tip's root
    /// tree and one subtree, not every note of a long history.
    fn mark_tip_notes(&mut self, commit: &gix::Commit<'_>) {
        if let Ok(tree) = commit.tree_id() {
            let tree = tree.detach();
            self.trees.insert(tree);
            self.known_roots.push(tree);
            self.mark_entries(commit.repo, tree, &[]);
        }
    }

    /// Mark the entries of the known trees on the way from each known tip
    /// down to `path` (a tree's prefix, or a note's whole path): their
    /// notes seen and remembered by path, their subtrees walked. Each known
    /// tree is read once; a damaged one is marked as far as it can be read.
    fn mark_known_along(&mut self, repo: &gix::Repository, path: &[u8]) {
        for root in 0..self.known_roots.len() {
            let (mut id, mut prefix) = (self.known_roots[root], Vec::new());
            loop {
                self.mark_entries(repo, id, &prefix);
                if prefix.len() >= path.len() {
                    break;
                }
                let Some((sub, sub_path)) = self.marked[&id]
                    .iter()
                    .find(|(_, sub)| path.starts_with(sub))
                    .cloned()
                else {
                    break;
                };
                (id, prefix) = (sub, sub_path);
            }
        }
    }

    /// Mark the entries of the known tree `id` at `prefix`, once, keeping
    /// its subtrees and their paths in [`NotesWalk::marked`].
    fn mark_entries(&mut self, repo: &gix::Repository, id: ObjectId, prefix: &[u8]) {
        if self.marked.contains_key(&id) {
            return;
        }
        let full = repo.object_hash().len_in_hex();
        let data = self.packs(repo).tree(repo, id).unwrap_or_default();
        let mut subtrees = Vec::new();
        for entry in gix::objs::TreeRefIter::from_bytes(&data, repo.object_hash()) {
            let Ok(entry) = entry else { break };
            let path = [prefix, entry.filename.as_ref()].concat();
            if entry.mode.is_tree() && path.len() < full {
                self.trees.insert(entry.oid.to_owned());
                subtrees.push((entry.oid.to_owned(), path));
            } else if entry.mode.is_blob() && path.len() == full {
                self.seen_blobs.insert(entry.oid.to_owned());
                self.known_notes
                    .entry(path)
                    .or_default()
                    .push(entry.oid.to_owned());
            }
        }
        self.marked.insert(id, subtrees);
    }

    /// The pack reader of this walk (trees, then the note blobs
    /// [`findings`] reads), opened on first use.
    fn packs(&mut self, repo: &gix::Repository) -> &mut Packs {
        self.packs
            .get_or_insert_with(|| Packs::new(repo, crate::git::repo::pack_cache_bytes(repo)))
    }

    /// Walk the history at `tip`, recording its new note blobs and commit
    /// messages; `Ok(Err(why))` when it is not a notes history (a tip or a
    /// parent that is not a commit, a tree that holds more than notes).
    pub fn add(
        &mut self,
        repo: &gix::Repository,
        tip: ObjectId,
    ) -> Result<std::result::Result<(), String>> {
        let mut queue = vec![tip];
        while let Some(id) = queue.pop() {
            if !self.commits.insert(id) {
                continue;
            }
            let Ok(object) = repo.find_object(id) else {
                return Ok(Err(format!("{} is missing", store::short(&id))));
            };
            if object.kind != gix::object::Kind::Commit {
                return Ok(Err(format!(
                    "{} is a {}, not a notes commit",
                    store::short(&id),
                    object.kind
                )));
            }
            let commit = object.into_commit();
            let Ok(tree) = commit.tree_id() else {
                return Ok(Err(format!("commit {} has no tree", store::short(&id))));
            };
            let message = commit.message_raw().map(|m| m.to_vec()).unwrap_or_default();
            self.messages.push((id, message));
            queue.extend(commit.parent_ids().map(|p| p.detach()));
            if let Err(why) = self.tree(repo, tree.detach(), &[])? {
                return Ok(Err(format!("commit {}: {why}", store::short(&id))));
            }
        }
        Ok(Ok(()))
    }

    /// Walk the new tree `id` at `prefix`: record the note blobs not seen
    /// before (after marking what the known trees hold there), descend
    /// into the subtrees not walked before; `Ok(Err(why))` when the tree
    /// holds more than notes.
    fn tree(
        &mut self,
        repo: &gix::Repository,
        id: ObjectId,
        prefix: &[u8],
    ) -> Result<std::result::Result<(), String>> {
        let depth = prefix.len();
        if !self.trees.insert(id) {
            return Ok(Ok(()));
        }
        self.mark_known_along(repo, prefix);
        let full = repo.object_hash().len_in_hex();
        let Some(data) = self.packs(repo).tree(repo, id) else {
            return Ok(Err(format!("tree {} is missing", store::short(&id))));
        };
        let mut subtrees = Vec::new();
        for entry in gix::objs::TreeRefIter::from_bytes(&data, repo.object_hash()) {
            let Ok(entry) = entry else {
                return Ok(Err(format!("tree {} cannot be read", store::short(&id))));
            };
            let name = entry.filename;
            let hex = name.iter().all(u8::is_ascii_hexdigit);
            let len = depth + name.len();
            let path = || [prefix, name.as_ref()].concat();
            if hex && entry.mode.is_tree() && len < full {
                // A subtree walked before (most of them, from one notes
                // commit to the next) costs a lookup, nothing more.
                if !self.trees.contains(entry.oid) {
                    subtrees.push((entry.oid.to_owned(), path()));
                }
            } else if hex && entry.mode.is_blob() && len == full {
                let blob = entry.oid.to_owned();
                if !self.seen_blobs.contains(&blob) {
                    // Where the known trees are laid out differently.
                    self.mark_known_along(repo, &path());
                }
                if self.seen_blobs.insert(blob) {
                    self.blobs.push(blob);
                    self.paths.insert(blob, path());
                }
            } else {
                return Ok(Err(format!(
                    "it holds '{}', which is not a note",
                    crate::support::escape::clean(&name.to_str_lossy())
                )));
            }
        }
        for (sub, path) in subtrees {
            if let Err(why) = self.tree(repo, sub, &path)? {
                return Ok(Err(why));
            }
        }
        Ok(Ok(()))
    }
}

/// The commits reachable from `tip` and from none of `known`, each with
/// its parents; `None` when a commit on the way cannot be read.
fn new_commits(
    repo: &gix::Repository,
    known: &[ObjectId],
    tip: ObjectId,
) -> Option<Vec<(ObjectId, Vec<ObjectId>)>> {
    let walk = repo
        .rev_walk([tip])
        .with_hidden(known.iter().copied())
        .all()
        .ok()?;
    let mut out = Vec::new();
    for info in walk {
        let info = info.ok()?;
        out.push((info.id, info.parent_ids.to_vec()));
    }
    Some(out)
}

/// One line (or message, or brief) that carries a secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The key it belongs to (redacted itself when the key holds the
    /// secret), or what it is when it is not a brief.
    pub what: String,
    /// The version's short id (for a line that is not a brief: the note's
    /// or the commit's).
    pub version: String,
    /// The rules that matched.
    pub rules: Vec<&'static str>,
    /// The key, as stored, when it is a brief's (line); never shown as is.
    pub key: Option<String>,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} version {} ({})",
            self.what,
            self.version,
            self.rules.join(", ")
        )
    }
}

/// The key as it may be shown: redacted when it holds a secret.
pub fn redacted_key(key: &str, options: Options) -> String {
    // Most keys hold nothing: the verdict the process remembers says so
    // without running the rules over each again.
    if redact::key_rule(key, options).is_none() {
        return key.to_string();
    }
    redact::redact(key, options).0
}

/// [`redacted_key`], quoted and with control characters escaped.
pub fn shown_key(key: &str, options: Options) -> String {
    format!(
        "'{}'",
        crate::support::escape::clean(&redacted_key(key, options))
    )
}

fn finding_in_line(
    repo: &gix::Repository,
    line: &[u8],
    holder: ObjectId,
    options: Options,
) -> Option<Finding> {
    let counts = redact::find_in_line(line, options);
    if counts.is_empty() {
        return None;
    }
    let rules = counts.into_keys().collect();
    Some(match Brief::from_slice(line) {
        Ok(brief) => Finding {
            what: format!("key {}", shown_key(&brief.key, options)),
            version: history::version_id(repo, &brief.to_pretty_json())
                .map(|id| store::short(&id))
                .unwrap_or_else(|_| store::short(&holder)),
            rules,
            key: Some(brief.key),
        },
        Err(_) => Finding {
            what: "a history line that is not a brief".into(),
            version: store::short(&holder),
            rules,
            key: None,
        },
    })
}

fn read_blob(repo: &gix::Repository, packs: &mut Packs, id: ObjectId) -> Result<Vec<u8>> {
    packs
        .blob(repo, id, None)
        .with_context(|| format!("cannot read note {id}"))
}

/// What the other side holds of `blob` (whose bytes are `data`) already:
/// the known notes on the same annotated object. When `data` begins with
/// one of them, whole lines (a note grows by appending), the length of
/// that prefix, whose bytes need no reading; else the known notes' lines.
/// That `data` begins with a known note is read off the pack's deltas
/// when they show it ([`Packs::extends`]: the very bytes, not a guess),
/// else by reading the known note.
fn known_part(
    repo: &gix::Repository,
    packs: &mut Packs,
    walk: &NotesWalk,
    blob: ObjectId,
    data: &[u8],
) -> Result<(usize, HashSet<Vec<u8>>)> {
    let mut known = HashSet::new();
    let Some(holders) = walk.paths.get(&blob).and_then(|p| walk.known_notes.get(p)) else {
        return Ok((0, known));
    };
    let whole_lines = |len: usize| len > 0 && len <= data.len() && data[len - 1] == b'\n';
    for holder in holders {
        if let Some((held, len)) = packs.extends(*holder, blob)
            && len == data.len() as u64
            && whole_lines(held as usize)
        {
            return Ok((held as usize, HashSet::new()));
        }
    }
    for holder in holders {
        let held = read_blob(repo, packs, *holder)?;
        if whole_lines(held.len()) && data.starts_with(&held) {
            return Ok((held.len(), HashSet::new()));
        }
        known.extend(held.lines().map(<[u8]>::to_vec));
    }
    Ok((0, known))
}

/// Every secret in the new part of `walk`: each line of each new note
/// blob that the known histories' note on the same object lacks (each
/// line once, and none of a blob the gate cache saw clean), and each new
/// commit message.
pub fn findings(
    repo: &gix::Repository,
    walk: &mut NotesWalk,
    options: Options,
) -> Result<Vec<Finding>> {
    Ok(findings_and_lines(repo, walk, options)?.0)
}

/// [`findings`], and the digests ([`line_digest`]) of the lines that hold
/// them, so that a merge can leave exactly those lines out.
pub fn findings_and_lines(
    repo: &gix::Repository,
    walk: &mut NotesWalk,
    options: Options,
) -> Result<(Vec<Finding>, HashSet<ObjectId>)> {
    let mut out = Vec::new();
    let mut cache = crate::sync::gate_cache::GateCache::load(repo, options);
    // A note grows line by line: each new blob repeats the older lines.
    // Lines are remembered by digest, so memory stays small.
    let digest = |line: &[u8]| line_digest(repo, line);
    let mut seen: HashSet<ObjectId> = HashSet::new();
    let mut dirty: HashSet<ObjectId> = HashSet::new();
    let mut packs = std::mem::take(&mut walk.packs)
        .unwrap_or_else(|| Packs::new(repo, crate::git::repo::pack_cache_bytes(repo)));
    let walk = &*walk;
    for blob in &walk.blobs {
        let data = read_blob(repo, &mut packs, *blob)?;
        if cache.is_clean(blob, &data) {
            continue;
        }
        let (skip, known) = known_part(repo, &mut packs, walk, *blob, &data)?;
        let mut whole = skip == 0 && known.is_empty();
        for line in data[skip..].lines().filter(|l| !l.trim().is_empty()) {
            if known.contains(line) {
                whole = false;
                continue;
            }
            let d = digest(line)?;
            if !seen.insert(d) {
                whole &= !dirty.contains(&d);
                continue;
            }
            // A line is checked as the one-line blob it would be: `write`
            // vouches for the lines it adds, so a push after a write runs
            // no rule over them again.
            if cache.is_clean(&d, line) {
                continue;
            }
            match finding_in_line(repo, line, *blob, options) {
                Some(found) => {
                    dirty.insert(d);
                    whole = false;
                    out.push(found);
                }
                None => cache.record_clean(line),
            }
        }
        if whole {
            cache.record_clean(&data);
        }
    }
    cache.save();
    for (commit, message) in &walk.messages {
        let counts = redact::find_in_text(&message.to_str_lossy(), options);
        if !counts.is_empty() {
            out.push(Finding {
                what: "a notes commit message".into(),
                version: store::short(commit),
                rules: counts.into_keys().collect(),
                key: None,
            });
        }
    }
    Ok((out, dirty))
}

/// Vouch for what a write just stored, so that the push after it runs no
/// rule again: each text (a stored brief, a history line) the gate finds
/// clean is recorded as [`findings_and_lines`] and the push's brief check
/// record it; a text holding a secret is recorded nowhere and is checked,
/// and refused, when it would leave.
pub fn vouch(repo: &gix::Repository, texts: &[&[u8]]) {
    let options = Options::from_repo(repo);
    let mut cache = crate::sync::gate_cache::GateCache::load(repo, options);
    for text in texts {
        if redact::find_in_line(text, options).is_empty() {
            cache.record_clean(text);
        }
    }
    cache.save();
}

/// The digest by which [`findings_and_lines`] names a history line.
pub fn line_digest(repo: &gix::Repository, line: &[u8]) -> Result<ObjectId> {
    gix::objs::compute_hash(repo.object_hash(), gix::object::Kind::Blob, line)
        .context("cannot hash a history line")
}

/// The secrets in the versions of `ours` (the local history) that a push
/// would send to a remote whose history is `theirs`.
pub fn outgoing_history(
    repo: &gix::Repository,
    ours: ObjectId,
    theirs: Option<ObjectId>,
) -> Result<Vec<Finding>> {
    let mut walk = NotesWalk::default();
    walk.mark_known_from(repo, &Vec::from_iter(theirs), ours);
    // A local history that is not all notes is still checked as far as
    // it goes; the push of the history then fails on the remote's side.
    let _ = walk.add(repo, ours)?;
    findings(repo, &mut walk, Options::from_repo(repo))
}

/// Summarize findings for one error line: at most three, then a count.
pub fn list(findings: &[Finding]) -> String {
    let mut shown: Vec<String> = findings.iter().take(3).map(ToString::to_string).collect();
    if findings.len() > 3 {
        shown.push(format!("and {} more", findings.len() - 3));
    }
    shown.join("; ")
}

fn marker(repo: &gix::Repository) -> PathBuf {
    repo.common_dir().join("handoff-history-redacted")
}

/// Whether `redact --history` removed secrets from this repository's
/// history: from then on, fetch refuses to merge them back in.
pub fn history_redacted(repo: &gix::Repository) -> bool {
    marker(repo).is_file()
}

/// Record that `redact --history` removed secrets here.
pub fn mark_history_redacted(repo: &gix::Repository) -> Result<()> {
    crate::support::atomic::write(
        &marker(repo),
        b"git handoff redact --history removed secrets from refs/notes/handoffs;\n\
          git handoff fetch refuses to merge them back (fetch --allow-secrets overrides).\n",
    )
}
