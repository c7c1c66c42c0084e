//! The version graph: which version(s) of a key each version was written
//! on top of, like a commit's parents — and, like commits, acyclic by
//! construction.
//!
//! A version is named by an id that binds its key, its content (the blob
//! id of the brief) and its parents, as a commit id binds its tree and
//! parents: `version_id` = the repository's hash of
//! `git-handoff version\nkey <key>\nbrief <blob>\nparent <id>…\n`. A
//! version is recorded once, by one line of the history note beside the
//! brief's own line (the note of its `head_sha`), never a field of the
//! brief, whose schema stays wire-compatible:
//!
//! ```text
//! {"lineage":"<version id>","key":"<key>","brief":"<blob id>","parents":["<version id>",…]}
//! ```
//!
//! A line whose id does not match its key, brief and parents is not
//! believed, so no line can give an existing version other parents: a
//! line can only add a version (as `git merge -s ours` can add a commit).
//! A version's parents exist before it, so the graph has no cycle, and
//! "is an ancestor of" is a partial order. Writing an older content again
//! (an import over a newer version) makes a new version with the same
//! blob and other parents; a resolution makes a merge version.
//!
//! A ref holds a blob, not a version: the version a ref's blob stands for
//! is the newest version recorded with that blob — the one version of the
//! blob that descends from every other. When no single one does (two versions of one content written on different
//! parents), the blob is ambiguous and every question about it answers
//! diverged, never a fast-forward on a guess. A blob no line records (a
//! ref moved by plain git, a push cut off between its refs) stands for a
//! version of its own with unknown parents: diverged from every other.
//!
//! Lines of 0.3 (`{"lineage":<blob>,"key","parents":[<blob>]}`, no
//! `"brief"`) are believed only where they cannot have re-parented a
//! version: a blob with exactly one such parent set; a 0.3 resolve or
//! re-import added a second one, and such a version's parents are unknown
//! until it is resolved with this version. A 0.3 line's parent blob is the
//! version of this one that holds it, unless 0.3 recorded that blob too (a
//! content this version brought back): then it is 0.3's version of it;
//! never a version written over the 0.3 version itself (the old content
//! imported again on top of it), which would close a cycle. Those parents
//! are found on the graph of this version's lines alone, so that every
//! clone builds the same graph; a 0.3 version a cycle still runs through
//! (0.3 lines chained through versions of this one, or forged) is not
//! believed, like one with two parent sets: the graph is acyclic whatever
//! the lines say.
//! A version of this one that brings back a content 0.3 recorded is also
//! written as 0.3 writes it ([`Graph::v03_echo`]), for 0.3 clones, which
//! read no other line of this version. "R fast-forwards L" means
//! exactly: L's version is an ancestor of R's.

use std::collections::{HashMap, HashSet, VecDeque};

use anyhow::Result;
use gix::ObjectId;
use serde::{Deserialize, Serialize};

/// How many versions one question reads at most before it answers
/// diverged.
const WALK_LIMIT: usize = 20_000;

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    lineage: String,
    key: String,
    /// The brief's blob id (absent in a line of 0.3, whose `lineage` is
    /// the blob id itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    brief: Option<String>,
    parents: Vec<String>,
    /// When the line was written (the clock `write` reads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    at: Option<String>,
    /// The agent session that wrote it, when one was known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    session: Option<String>,
    /// Who wrote it: the author's name (git's `user.name`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    by: Option<String>,
}

/// Who wrote a lineage line, and when: what tells a brief a session wrote
/// from one it found, whatever the brief's own fields say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Written {
    /// When (`YYYY-MM-DDTHH:MM:SSZ`).
    pub at: Option<String>,
    /// The session, when one was known.
    pub session: Option<String>,
    /// The author's name (git's `user.name`), when known.
    pub by: Option<String>,
}

/// One lineage line, read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The key.
    pub key: String,
    /// The version id (for a 0.3 line, the blob id).
    pub version: ObjectId,
    /// The brief's blob (for a 0.3 line, the same as `version`).
    pub brief: ObjectId,
    /// Its parents: version ids (for a 0.3 line, blob ids).
    pub parents: Vec<ObjectId>,
    /// Who and when.
    pub written: Written,
    /// A line of 0.3 (no version id of its own).
    pub legacy: bool,
}

/// The id of the version of `key` with content `brief` written on top of
/// `parents`: binds all three, as a commit id binds tree and parents.
pub fn version_id(
    kind: gix::hash::Kind,
    key: &str,
    brief: ObjectId,
    parents: &[ObjectId],
) -> ObjectId {
    let mut parents: Vec<ObjectId> = parents.to_vec();
    parents.sort();
    parents.dedup();
    let mut text = format!("git-handoff version\nkey {key}\nbrief {brief}\n");
    for p in &parents {
        text.push_str(&format!("parent {p}\n"));
    }
    let mut hasher = gix::hash::hasher(kind);
    hasher.update(text.as_bytes());
    hasher.try_finalize().expect("hashing a short text")
}

/// The version a blob no line records stands for: its own, with unknown
/// parents (a distinct domain, so that it is never a recorded version).
fn unrecorded(kind: gix::hash::Kind, key: &str, blob: ObjectId) -> ObjectId {
    let mut hasher = gix::hash::hasher(kind);
    hasher.update(format!("git-handoff unrecorded version\nkey {key}\nbrief {blob}\n").as_bytes());
    hasher.try_finalize().expect("hashing a short text")
}

/// The history line recording that the version of `key` with content
/// `brief` was written on top of `parents` (versions; none: a first
/// version), when and by which session, and that version's id.
pub fn line(
    kind: gix::hash::Kind,
    key: &str,
    brief: ObjectId,
    parents: &[ObjectId],
    by: &Written,
) -> (String, ObjectId) {
    let id = version_id(kind, key, brief, parents);
    let mut parents: Vec<String> = parents.iter().map(|p| p.to_string()).collect();
    parents.sort();
    parents.dedup();
    let text = serde_json::to_string(&Line {
        lineage: id.to_string(),
        key: key.to_string(),
        brief: Some(brief.to_string()),
        parents,
        at: by.at.clone(),
        session: by.session.clone(),
        by: by.by.clone(),
    })
    .expect("a lineage line serializes");
    (text, id)
}

/// A lineage line of 0.3's shape: `brief` of `key` written over the
/// blobs `over` (see [`Graph::v03_echo`] for when one is written).
pub fn v03_line(key: &str, brief: ObjectId, over: &[ObjectId], by: &Written) -> String {
    let mut parents: Vec<String> = over
        .iter()
        .filter(|p| **p != brief)
        .map(|p| p.to_string())
        .collect();
    parents.sort();
    parents.dedup();
    serde_json::to_string(&Line {
        lineage: brief.to_string(),
        key: key.to_string(),
        brief: None,
        parents,
        at: by.at.clone(),
        session: by.session.clone(),
        // 0.3's shape exactly: its lines never named the author.
        by: None,
    })
    .expect("a lineage line serializes")
}

/// A lineage line read back: key, version, parents. `None` for any other
/// line (a brief, or something else). The id is not checked here (see
/// [`Record::is_sound`]).
pub fn parse(line: &[u8]) -> Option<(String, ObjectId, Vec<ObjectId>)> {
    parse_record(line).map(|r| (r.key, r.version, r.parents))
}

/// A lineage line read back in full.
pub fn parse_record(line: &[u8]) -> Option<Record> {
    if !line.starts_with(b"{\"lineage\"") {
        return None;
    }
    let parsed: Line = serde_json::from_slice(line).ok()?;
    let id = |hex: &str| ObjectId::from_hex(hex.as_bytes()).ok();
    let parents = parsed
        .parents
        .iter()
        .map(|p| id(p))
        .collect::<Option<Vec<_>>>()?;
    let version = id(&parsed.lineage)?;
    let brief = match &parsed.brief {
        Some(b) => id(b)?,
        None => version,
    };
    Some(Record {
        key: parsed.key,
        version,
        brief,
        parents,
        written: Written {
            at: parsed.at,
            session: parsed.session,
            by: parsed.by,
        },
        legacy: parsed.brief.is_none(),
    })
}

impl Record {
    /// Whether a line of this version may be believed: its id binds its
    /// key, brief and parents (a line of 0.3 has no such id; see
    /// [`Graph`] for when those are believed).
    pub fn is_sound(&self) -> bool {
        self.legacy
            || version_id(self.version.kind(), &self.key, self.brief, &self.parents) == self.version
    }

    /// Whether this version stands for `blob`.
    pub fn holds(&self, blob: ObjectId) -> bool {
        self.brief == blob
    }
}

/// The lines of the lineage section of `key` in every checked notes
/// history here (the local one and the remotes' as validated).
fn lines_of(repo: &gix::Repository, key: &str) -> Result<Vec<Vec<u8>>> {
    let tips = crate::store::history::notes_tips(repo)?;
    if tips.is_empty() {
        return Ok(Vec::new());
    }
    let entries = crate::store::history_index::entries_of(repo, &tips, &section(key))?;
    Ok(entries.into_iter().map(|e| e.line).collect())
}

/// Every record of how a version holding `blob` of `key` was written
/// (its lineage lines in every notes history here), oldest first by
/// their time; empty for a version written before lineage was recorded.
pub fn records(repo: &gix::Repository, key: &str, blob: ObjectId) -> Result<Vec<Written>> {
    let mut out: Vec<Written> = lines_of(repo, key)?
        .iter()
        .filter_map(|line| parse_record(line))
        .filter(|r| r.key == key && r.holds(blob) && r.is_sound())
        .map(|r| r.written)
        .collect();
    out.sort_by(|a, b| a.at.cmp(&b.at));
    out.dedup();
    Ok(out)
}

/// The blob of the version `blob` of `key` was written on top of, when
/// its version has exactly one parent.
pub fn parent_of(repo: &gix::Repository, key: &str, blob: ObjectId) -> Result<Option<ObjectId>> {
    Ok(ancestors(repo, key, blob, 1)?.into_iter().next())
}

/// The blobs of the versions under the version `blob` of `key` stands
/// for, nearest first, hop by hop while a version has exactly one parent
/// whose content is known; at most `max`, from one read of the key's
/// lineage.
pub fn ancestors(
    repo: &gix::Repository,
    key: &str,
    blob: ObjectId,
    max: usize,
) -> Result<Vec<ObjectId>> {
    let mut graph = Graph::of_repo(repo, &[])?;
    graph.ancestors(key, blob, max)
}

/// How two versions of one key stand in the version graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    /// The same version.
    Same,
    /// The first is an ancestor of the second: the second fast-forwards it.
    Behind,
    /// The second is an ancestor of the first.
    Ahead,
    /// Neither is an ancestor of the other, or the graph cannot tell
    /// (a blob no line records, a version of 0.3 whose parents were added
    /// after the fact, a blob two versions hold): diverged, never a
    /// fast-forward on a guess.
    Diverged,
}

/// The history index section a key's lineage lines are kept under: the
/// key and a newline, which no key holds (a ref name has no control
/// character), so it never reads as a key.
pub fn section(key: &str) -> String {
    format!("{key}\nlineage")
}

/// Whether a history index key is a lineage section, not a key.
pub fn is_section(name: &str) -> bool {
    name.contains('\n')
}

/// One version in the graph of a key.
#[derive(Debug, Clone)]
struct Node {
    /// Its content.
    brief: ObjectId,
    /// Its parents; `None` when unknown.
    parents: Option<Vec<ObjectId>>,
    /// Who wrote its line, and when.
    written: Written,
}

/// A version of a key as the graph knows it, for drawing it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionNode {
    /// The version id.
    pub id: ObjectId,
    /// Its brief's blob.
    pub brief: ObjectId,
    /// Its parents (empty: a first version, or parents unknown).
    pub parents: Vec<ObjectId>,
    /// Whether `parents` is known: not for a version whose lines disagree
    /// or that a cycle of 0.3's lines runs through.
    pub parents_known: bool,
    /// Who wrote it, and when.
    pub written: Written,
}

/// The versions of one key.
#[derive(Debug, Default)]
struct KeyGraph {
    nodes: HashMap<ObjectId, Node>,
    /// Blob → the versions that stand for it.
    by_blob: HashMap<ObjectId, Vec<ObjectId>>,
    /// The blobs lines of 0.3 record, believed or not.
    v03: HashSet<ObjectId>,
}

impl KeyGraph {
    /// The graph of `key` from its lineage lines: every sound line of this
    /// version, and the lines of 0.3 that cannot have re-parented one.
    fn from_records(kind: gix::hash::Kind, key: &str, records: Vec<Record>) -> KeyGraph {
        let mut graph = KeyGraph::default();
        let mut legacy: HashMap<ObjectId, HashSet<Vec<ObjectId>>> = HashMap::new();
        let mut legacy_written: HashMap<ObjectId, Written> = HashMap::new();
        for r in records {
            if r.key != key || r.version.kind() != kind || !r.is_sound() {
                continue;
            }
            if r.legacy {
                graph.v03.insert(r.brief);
                let mut parents = r.parents;
                parents.sort();
                parents.dedup();
                legacy.entry(r.brief).or_default().insert(parents);
                legacy_written.entry(r.brief).or_insert(r.written);
                continue;
            }
            graph.add(r.version, r.brief, Some(r.parents), r.written);
        }
        // A 0.3 line speaks only of a blob this version never recorded (so
        // a line of 0.3's shape cannot touch a version of this one); its
        // parent is what that blob stands for here. A parent blob 0.3
        // recorded as well (an older content this version kept or imported
        // again) is 0.3's version of it: a 0.3 line written over the old
        // content never descends from the version that brought it back.
        let explicit: HashSet<ObjectId> = graph.by_blob.keys().copied().collect();
        // Nor is it a version written over the 0.3 version itself (the
        // content brought back on top of it): that would close a cycle.
        let stands = |graph: &KeyGraph, p: ObjectId, own: ObjectId| match explicit.contains(&p)
            && !graph.v03.contains(&p)
        {
            true => graph.versions_below(kind, key, p, own),
            false => vec![unrecorded(kind, key, p)],
        };
        // Every 0.3 line's parents are found on the graph of this version's
        // lines alone, in blob order, so that each clone builds the same
        // graph whatever order it reads the lines in.
        let mut legacy: Vec<_> = legacy.into_iter().collect();
        legacy.sort_by_key(|(blob, _)| *blob);
        let mut found = Vec::new();
        for (blob, sets) in legacy {
            let version = unrecorded(kind, key, blob);
            let parents: Option<Vec<ObjectId>> = (sets.len() == 1).then(|| {
                let set = sets.into_iter().next().expect("one");
                set.iter()
                    .flat_map(|p| stands(&graph, *p, version))
                    .collect()
            });
            let written = legacy_written.remove(&blob).unwrap_or_default();
            found.push((version, blob, parents, written));
        }
        let versions: Vec<ObjectId> = found.iter().map(|(v, ..)| *v).collect();
        for (version, blob, parents, written) in found {
            // 0.3's version of a content this version recorded again stays
            // below the versions written over it (a merge base), but the
            // blob stands for this version's only.
            if explicit.contains(&blob) {
                graph.nodes.entry(version).or_insert(Node {
                    brief: blob,
                    parents,
                    written,
                });
                continue;
            }
            graph.add(version, blob, parents, written);
        }
        graph.disbelieve_cycles(&versions);
        for versions in graph.by_blob.values_mut() {
            versions.sort();
            versions.dedup();
        }
        graph
    }

    fn add(
        &mut self,
        version: ObjectId,
        brief: ObjectId,
        parents: Option<Vec<ObjectId>>,
        written: Written,
    ) {
        self.nodes.entry(version).or_insert(Node {
            brief,
            parents,
            written,
        });
        self.by_blob.entry(brief).or_default().push(version);
    }

    /// Lines of this version alone cannot close a cycle (a version's id
    /// binds its parents); lines of 0.3 can, chained through versions of
    /// this one or forged. Every 0.3 version of `legacy` a cycle runs
    /// through is not believed (as a 0.3 version with two parent sets is
    /// not): the key stays diverged there until resolved, and the graph
    /// is acyclic whatever the lines say.
    fn disbelieve_cycles(&mut self, legacy: &[ObjectId]) {
        if legacy.is_empty() {
            return;
        }
        let on_cycles = self.on_cycles();
        for v in legacy.iter().filter(|v| on_cycles.contains(*v)) {
            if let Some(node) = self.nodes.get_mut(v) {
                node.parents = None;
            }
        }
    }

    /// The versions a cycle runs through: those in a strongly connected
    /// component of more than one, or their own parent. Tarjan's algorithm
    /// without recursion: one pass over the versions and their parents,
    /// however long the history (no walk limit, which would let a long
    /// enough forged cycle stand).
    fn on_cycles(&self) -> HashSet<ObjectId> {
        let parents = |v: &ObjectId| -> &[ObjectId] {
            self.nodes
                .get(v)
                .and_then(|n| n.parents.as_deref())
                .unwrap_or(&[])
        };
        // Each visited version's (index, lowest index it reaches back to).
        let mut seen: HashMap<ObjectId, (usize, usize)> = HashMap::new();
        let (mut stack, mut on_stack) = (Vec::new(), HashSet::new());
        let mut out = HashSet::new();
        for root in self.nodes.keys() {
            if seen.contains_key(root) {
                continue;
            }
            let mut calls = vec![(*root, 0usize)];
            while let Some((v, next)) = calls.last_mut() {
                let v = *v;
                if *next == 0 && !seen.contains_key(&v) {
                    seen.insert(v, (seen.len(), seen.len()));
                    stack.push(v);
                    on_stack.insert(v);
                }
                if let Some(w) = parents(&v).get(*next).copied() {
                    *next += 1;
                    match seen.get(&w) {
                        None if self.nodes.contains_key(&w) => calls.push((w, 0)),
                        Some(&(index, _)) if on_stack.contains(&w) => {
                            let low = &mut seen.get_mut(&v).expect("visited").1;
                            *low = (*low).min(index);
                        }
                        _ => {}
                    }
                    continue;
                }
                calls.pop();
                let (index, low) = seen[&v];
                if let Some((caller, _)) = calls.last() {
                    let up = &mut seen.get_mut(caller).expect("visited").1;
                    *up = (*up).min(low);
                }
                if index == low {
                    let mut component = Vec::new();
                    while let Some(w) = stack.pop() {
                        on_stack.remove(&w);
                        component.push(w);
                        if w == v {
                            break;
                        }
                    }
                    if component.len() > 1 || parents(&v).contains(&v) {
                        out.extend(component);
                    }
                }
            }
        }
        out
    }

    /// Whether `target` is `from` or one of its ancestors.
    fn reaches(&self, from: ObjectId, target: ObjectId) -> bool {
        let mut queue = VecDeque::from([from]);
        let mut seen = HashSet::from([from]);
        while let Some(id) = queue.pop_front() {
            if id == target {
                return true;
            }
            if seen.len() > WALK_LIMIT {
                return false;
            }
            let Some(Node {
                parents: Some(ps), ..
            }) = self.nodes.get(&id)
            else {
                continue;
            };
            for p in ps {
                if seen.insert(*p) {
                    queue.push_back(*p);
                }
            }
        }
        false
    }

    /// The versions `blob` stands for: of those recorded with it, the ones
    /// no other descends from (one, unless the blob is ambiguous); a blob
    /// no line records stands for a version of its own.
    fn versions_of(&self, kind: gix::hash::Kind, key: &str, blob: ObjectId) -> Vec<ObjectId> {
        let Some(all) = self.by_blob.get(&blob) else {
            return vec![unrecorded(kind, key, blob)];
        };
        all.iter()
            .filter(|c| !all.iter().any(|d| d != *c && self.reaches(*d, **c)))
            .copied()
            .collect()
    }

    /// The versions `blob` stands for as the parent of the 0.3 version
    /// `own`: as [`KeyGraph::versions_of`], among those that do not descend
    /// from `own`.
    fn versions_below(
        &self,
        kind: gix::hash::Kind,
        key: &str,
        blob: ObjectId,
        own: ObjectId,
    ) -> Vec<ObjectId> {
        let all: Vec<ObjectId> = (self.by_blob.get(&blob).into_iter().flatten())
            .filter(|v| !self.reaches(**v, own))
            .copied()
            .collect();
        if all.is_empty() {
            return vec![unrecorded(kind, key, blob)];
        }
        all.iter()
            .filter(|c| !all.iter().any(|d| d != *c && self.reaches(*d, **c)))
            .copied()
            .collect()
    }

    /// How the versions `a` stands for stand to those of `b`.
    fn relation(&self, a: &[ObjectId], b: &[ObjectId]) -> Relation {
        let below = |xs: &[ObjectId], y: &[ObjectId]| {
            y.len() == 1 && xs.iter().all(|x| self.reaches(y[0], *x))
        };
        // Each below the other only through a cycle of 0.3 lines (which
        // a forger can write for blobs this version never recorded):
        // diverged.
        match (a.len() == 1 && a == b, below(a, b), below(b, a)) {
            (true, _, _) => Relation::Same,
            (false, true, false) => Relation::Behind,
            (false, false, true) => Relation::Ahead,
            _ => Relation::Diverged,
        }
    }
}

/// The version graph of the checked notes histories at some tips: each
/// key's lineage lines are read once, from the history index (one section
/// of its file), when a question about that key first comes.
pub struct Graph {
    repo: gix::Repository,
    tips: Vec<ObjectId>,
    keys: HashMap<String, KeyGraph>,
}

impl Graph {
    /// The graph of the notes histories at `tips`: the local one and
    /// remotes' once validated, never a staged copy as such.
    pub fn new(repo: &gix::Repository, tips: &[ObjectId]) -> Graph {
        let mut unique = tips.to_vec();
        unique.sort();
        unique.dedup();
        Graph {
            repo: repo.clone(),
            tips: unique,
            keys: HashMap::new(),
        }
    }

    /// The graph of every checked notes history this repository holds (the
    /// local one, the remotes' as last validated), and the extra tips given
    /// (checked ones only: the local history before a fetch merged).
    pub fn of_repo(repo: &gix::Repository, extra: &[ObjectId]) -> Result<Graph> {
        let mut tips = crate::store::history::notes_tips(repo)?;
        tips.extend_from_slice(extra);
        Ok(Graph::new(repo, &tips))
    }

    /// How the version blob `a` of `key` stands for stands to `b`'s.
    pub fn relation(&mut self, key: &str, a: ObjectId, b: ObjectId) -> Result<Relation> {
        if a == b {
            return Ok(Relation::Same);
        }
        let kind = self.repo.object_hash();
        let graph = self.key(key)?;
        let (va, vb) = (
            graph.versions_of(kind, key, a),
            graph.versions_of(kind, key, b),
        );
        Ok(graph.relation(&va, &vb))
    }

    /// The versions blob `blob` of `key` stands for: what a version
    /// written over it names as its parents.
    pub fn versions_of(&mut self, key: &str, blob: ObjectId) -> Result<Vec<ObjectId>> {
        let kind = self.repo.object_hash();
        Ok(self.key(key)?.versions_of(kind, key, blob))
    }

    /// The blobs of the versions under the one `blob` of `key` stands for,
    /// nearest first, while each has exactly one parent; at most `max`.
    pub fn ancestors(&mut self, key: &str, blob: ObjectId, max: usize) -> Result<Vec<ObjectId>> {
        let kind = self.repo.object_hash();
        let graph = self.key(key)?;
        let mut at = match graph.versions_of(kind, key, blob)[..] {
            [one] => one,
            _ => return Ok(Vec::new()),
        };
        let mut out = Vec::new();
        let mut seen = HashSet::from([at]);
        while out.len() < max {
            let Some(Node {
                parents: Some(ps), ..
            }) = graph.nodes.get(&at)
            else {
                break;
            };
            let [parent] = ps[..] else { break };
            let Some(node) = graph.nodes.get(&parent) else {
                break;
            };
            if !seen.insert(parent) {
                break;
            }
            out.push(node.brief);
            at = parent;
        }
        Ok(out)
    }

    /// The blob of the merge base of the versions blobs `a` and `b` of
    /// `key` stand for: a common ancestor no other common ancestor
    /// descends from (the first by id when several do), whose content is
    /// known. `None` when they share none.
    pub fn merge_base(&mut self, key: &str, a: ObjectId, b: ObjectId) -> Result<Option<ObjectId>> {
        let kind = self.repo.object_hash();
        let graph = self.key(key)?;
        let below = |blob: ObjectId| -> HashSet<ObjectId> {
            let mut seen: HashSet<ObjectId> = HashSet::new();
            let mut queue: VecDeque<ObjectId> = graph.versions_of(kind, key, blob).into();
            while let Some(id) = queue.pop_front() {
                if seen.len() > WALK_LIMIT || !seen.insert(id) {
                    continue;
                }
                if let Some(Node {
                    parents: Some(ps), ..
                }) = graph.nodes.get(&id)
                {
                    queue.extend(ps.iter().copied());
                }
            }
            seen
        };
        let (under_a, under_b) = (below(a), below(b));
        let mut common: Vec<ObjectId> = under_a
            .intersection(&under_b)
            .copied()
            .filter(|id| graph.nodes.contains_key(id))
            .collect();
        common.sort();
        let best = common
            .iter()
            .find(|c| !common.iter().any(|d| d != *c && graph.reaches(*d, **c)));
        Ok(best.map(|id| graph.nodes[id].brief))
    }

    /// The line of 0.3's shape to write beside a new version of `key`
    /// holding `brief` over the versions `parents`, when lines of 0.3
    /// already record `brief` (an older content kept by a resolve or
    /// imported again): `brief` over its parents' blobs, the line 0.3's
    /// own `resolve` or `import --force` writes. 0.3 reads none of this
    /// version's lines; without it a 0.3 clone takes the old content back
    /// on the remote for a rollback, and its next push puts its own
    /// version back over this one. With it, 0.3 sees a divergence to
    /// resolve, as after a 0.3 teammate's resolve. Here it re-parents
    /// nothing: a line of 0.3 about a blob this version recorded speaks
    /// only of 0.3's version of that blob.
    pub fn v03_echo(
        &mut self,
        key: &str,
        brief: ObjectId,
        parents: &[ObjectId],
        by: &Written,
    ) -> Result<Option<String>> {
        let graph = self.key(key)?;
        if !graph.v03.contains(&brief) {
            return Ok(None);
        }
        let over: Vec<ObjectId> = parents
            .iter()
            .filter_map(|p| graph.nodes.get(p).map(|n| n.brief))
            .collect();
        Ok((!over.iter().all(|b| *b == brief)).then(|| v03_line(key, brief, &over, by)))
    }

    /// Every version of `key` the graph records.
    pub fn nodes(&mut self, key: &str) -> Result<Vec<VersionNode>> {
        let graph = self.key(key)?;
        Ok(graph
            .nodes
            .iter()
            .map(|(id, node)| VersionNode {
                id: *id,
                brief: node.brief,
                parents: node.parents.clone().unwrap_or_default(),
                parents_known: node.parents.is_some(),
                written: node.written.clone(),
            })
            .collect())
    }

    /// The graph of `key`, read when first asked for.
    fn key(&mut self, key: &str) -> Result<&KeyGraph> {
        if !self.keys.contains_key(key) {
            let mut records = Vec::new();
            if !self.tips.is_empty() {
                let entries =
                    crate::store::history_index::entries_of(&self.repo, &self.tips, &section(key))?;
                records.extend(entries.iter().filter_map(|e| parse_record(&e.line)));
            }
            let graph = KeyGraph::from_records(self.repo.object_hash(), key, records);
            self.keys.insert(key.to_string(), graph);
        }
        Ok(&self.keys[key])
    }
}

/// The commit a stored version annotates: the full `head_sha` of the
/// brief in blob `id`, read without validating the brief.
pub fn head_of(repo: &gix::Repository, id: ObjectId) -> Option<ObjectId> {
    #[derive(Deserialize)]
    struct State {
        head_sha: Option<String>,
    }
    #[derive(Deserialize)]
    struct Head {
        state: State,
    }
    let blob = repo.find_blob(id).ok()?;
    let head: Head = serde_json::from_slice(&blob.data).ok()?;
    let sha = head.state.head_sha?;
    let id = ObjectId::from_hex(sha.as_bytes()).ok()?;
    (sha.len() == id.kind().len_in_hex()).then_some(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA1: gix::hash::Kind = gix::hash::Kind::Sha1;

    fn blob(n: u8) -> ObjectId {
        ObjectId::from_bytes_or_panic(&[n; 20])
    }

    fn rec(line: &str) -> Record {
        parse_record(line.as_bytes()).expect("a lineage line")
    }

    /// The record of a version of `k` with content `b` over `parents`.
    fn version(b: u8, parents: &[ObjectId]) -> (Record, ObjectId) {
        let (text, id) = line(SHA1, "k", blob(b), parents, &Written::default());
        (rec(&text), id)
    }

    /// A line of 0.3: blob `v` of `k` over the blobs `parents`.
    fn legacy(v: u8, parents: &[u8]) -> Record {
        let parents: Vec<String> = (parents.iter())
            .map(|p| format!("\"{}\"", blob(*p)))
            .collect();
        rec(&format!(
            r#"{{"lineage":"{}","key":"k","parents":[{}]}}"#,
            blob(v),
            parents.join(",")
        ))
    }

    fn graph(records: &[&Record]) -> KeyGraph {
        KeyGraph::from_records(SHA1, "k", records.iter().map(|r| (*r).clone()).collect())
    }

    fn relation(g: &KeyGraph, a: u8, b: u8) -> Relation {
        g.relation(
            &g.versions_of(SHA1, "k", blob(a)),
            &g.versions_of(SHA1, "k", blob(b)),
        )
    }

    #[test]
    fn lines_read_back_and_nothing_else_reads_as_one() {
        let (r, id) = version(1, &[blob(2), blob(2)]);
        assert_eq!(
            (r.version, r.brief, r.parents.clone()),
            (id, blob(1), vec![blob(2)])
        );
        assert!(r.is_sound() && !r.legacy);
        assert_eq!(parse(br#"{"schema_version":"1","key":"k"}"#), None);
        assert_eq!(parse(br#"{"lineage":"zz","key":"k","parents":[]}"#), None);
        let extra = br#"{"lineage":"0101010101010101010101010101010101010101","key":"k","parents":[],"x":1}"#;
        assert_eq!(parse(extra), None);
    }

    #[test]
    fn a_line_cannot_reparent_an_existing_version() {
        let (a, va) = version(1, &[]);
        let (b, vb) = version(2, &[va]);
        // A forged line: B's id, with A's version... re-parented on B.
        let forged = rec(&format!(
            r#"{{"lineage":"{va}","key":"k","brief":"{}","parents":["{vb}"]}}"#,
            blob(1)
        ));
        assert!(!forged.is_sound());
        let g = graph(&[&a, &b, &forged]);
        assert_eq!(relation(&g, 1, 2), Relation::Behind);
        assert_eq!(relation(&g, 2, 1), Relation::Ahead);
    }

    #[test]
    fn writing_an_older_content_again_makes_a_new_version_not_a_cycle() {
        let (x1, vx1) = version(1, &[]);
        let (y, vy) = version(2, &[vx1]);
        let (x2, vx2) = version(1, &[vy]);
        assert_ne!(vx1, vx2);
        let (z, _) = version(3, &[vy]);
        let g = graph(&[&x1, &y, &x2, &z]);
        // X stands for its newest version, which Z does not descend from.
        assert_eq!(g.versions_of(SHA1, "k", blob(1)), vec![vx2]);
        assert_eq!(relation(&g, 1, 3), Relation::Diverged);
        assert_eq!(relation(&g, 3, 1), Relation::Diverged);
        assert_eq!(relation(&g, 2, 1), Relation::Behind);
    }

    #[test]
    fn rival_resolutions_stay_diverged_after_another_write() {
        let (base, v0) = version(9, &[]);
        let (a, va) = version(1, &[v0]);
        let (b, vb) = version(2, &[v0]);
        let (m1, vm1) = version(1, &[va, vb]);
        let (m2, _) = version(2, &[va, vb]);
        let (c, _) = version(3, &[vm1]);
        let g = graph(&[&base, &a, &b, &m1, &m2, &c]);
        assert_eq!(relation(&g, 1, 2), Relation::Diverged);
        assert_eq!(relation(&g, 2, 3), Relation::Diverged);
        assert_eq!(relation(&g, 1, 3), Relation::Behind);
    }

    #[test]
    fn a_blob_two_unrelated_versions_hold_is_diverged_from_everything() {
        let (a, va) = version(1, &[]);
        let (b, vb) = version(2, &[va]);
        let (c, _) = version(3, &[vb]);
        let (c2, _) = version(3, &[va]);
        let g = graph(&[&a, &b, &c, &c2]);
        assert_eq!(g.versions_of(SHA1, "k", blob(3)).len(), 2);
        assert_eq!(relation(&g, 1, 3), Relation::Diverged);
        assert_eq!(relation(&g, 2, 3), Relation::Diverged);
        // A blob no line records: diverged, never a guess.
        assert_eq!(relation(&g, 1, 7), Relation::Diverged);
    }

    #[test]
    fn lines_of_0_3_are_believed_only_with_one_parent_set() {
        let (b_over_a, c_over_b) = (legacy(2, &[1]), legacy(3, &[2]));
        let g = graph(&[&b_over_a, &c_over_b]);
        assert_eq!(relation(&g, 1, 3), Relation::Behind);
        // A 0.3 resolve (or re-import) added a second parent set to B.
        let resolved = legacy(2, &[4]);
        let g = graph(&[&b_over_a, &c_over_b, &resolved]);
        assert_eq!(relation(&g, 1, 3), Relation::Diverged);
        assert_eq!(relation(&g, 2, 3), Relation::Behind);
        // A version of this release written over a 0.3 one.
        let (d, vd) = version(5, &[unrecorded(SHA1, "k", blob(3))]);
        let g = graph(&[&b_over_a, &c_over_b, &d]);
        assert_eq!(relation(&g, 1, 5), Relation::Behind);
        // A 0.3 clone writes over it in turn.
        let e_over_d = legacy(6, &[5]);
        let g = graph(&[&b_over_a, &c_over_b, &d, &e_over_d]);
        assert_eq!(relation(&g, 5, 6), Relation::Behind);
        assert_eq!(relation(&g, 1, 6), Relation::Behind);
        // A cycle of 0.3 lines (forged: 0.3 never wrote one) is diverged.
        let (x_over_y, y_over_x) = (legacy(8, &[9]), legacy(9, &[8]));
        let g = graph(&[&x_over_y, &y_over_x]);
        assert_eq!(relation(&g, 8, 9), Relation::Diverged);
        // A line of 0.3's shape about a version of this one is not read:
        // it cannot re-parent D on E. (It makes blob 5 one 0.3 recorded
        // too, so E, over blob 5, is no longer known to be over D.)
        let forged = legacy(5, &[6]);
        let g = graph(&[&b_over_a, &c_over_b, &d, &e_over_d, &forged]);
        assert_eq!(g.versions_of(SHA1, "k", blob(5)), vec![vd]);
        assert_eq!(relation(&g, 5, 6), Relation::Diverged);
    }

    #[test]
    fn a_0_3_line_over_an_older_content_never_descends_from_its_return() {
        // 0.3: A (1), then B over A (2) and C over A (3), diverged.
        let (a, b_over_a, c_over_a) = (legacy(1, &[]), legacy(2, &[1]), legacy(3, &[1]));
        // This version keeps A's content over C: K holds blob 1 again.
        let (k, vk) = version(
            1,
            &[
                unrecorded(SHA1, "k", blob(1)),
                unrecorded(SHA1, "k", blob(3)),
            ],
        );
        let g = graph(&[&a, &b_over_a, &c_over_a, &k]);
        assert_eq!(g.versions_of(SHA1, "k", blob(1)), vec![vk]);
        assert_eq!(relation(&g, 3, 1), Relation::Behind);
        // B was written over the old A, not over K: B does not fast-forward K.
        assert_eq!(relation(&g, 1, 2), Relation::Diverged);
        // 0.3 writing over a version of this one it never recorded does.
        let (d, _) = version(4, &[vk]);
        let g = graph(&[&a, &b_over_a, &c_over_a, &k, &d, &legacy(5, &[4])]);
        assert_eq!(relation(&g, 4, 5), Relation::Behind);
    }

    /// A 0.3 line over a version of this one whose ancestry runs through
    /// other 0.3 lines back to it: a cycle whichever line is read first,
    /// unless it is not believed; read in any order, the same graph.
    #[test]
    fn lines_of_0_3_that_would_close_a_cycle_are_not_believed_in_any_order() {
        // P (this version) over 0.3's Z; 0.3: Z over X, X over P.
        let (p, vp) = version(1, &[unrecorded(SHA1, "k", blob(3))]);
        let (z_over_x, x_over_p) = (legacy(3, &[2]), legacy(2, &[1]));
        let orders = [
            vec![&p, &z_over_x, &x_over_p],
            vec![&x_over_p, &z_over_x, &p],
            vec![&z_over_x, &p, &x_over_p],
        ];
        let mut graphs = Vec::new();
        for order in orders {
            for _ in 0..4 {
                let g = graph(&order);
                for (id, node) in &g.nodes {
                    for parent in node.parents.iter().flatten() {
                        assert!(!g.reaches(*parent, *id), "a cycle through {id}");
                    }
                }
                let mut edges: Vec<String> = (g.nodes.iter())
                    .map(|(id, n)| format!("{id} {:?}", n.parents))
                    .collect();
                edges.sort();
                graphs.push(edges);
            }
        }
        assert!(graphs.windows(2).all(|w| w[0] == w[1]));
        let g = graph(&[&p, &z_over_x, &x_over_p]);
        assert_eq!(g.versions_of(SHA1, "k", blob(1)), vec![vp]);
        assert_eq!(relation(&g, 1, 2), Relation::Diverged);
    }

    /// However long a forged cycle of 0.3 lines, longer than any walk a
    /// question of ancestry takes, none of its versions is believed; nor is
    /// a 0.3 line over its own blob.
    #[test]
    fn a_cycle_of_0_3_lines_longer_than_a_walk_is_not_believed() {
        let n = WALK_LIMIT + 2;
        let hex = |i: usize| {
            let mut b = [0u8; 20];
            b[..8].copy_from_slice(&(i as u64 + 1).to_be_bytes());
            ObjectId::from_bytes_or_panic(&b).to_string()
        };
        let line = |v: String, p: String| {
            rec(&format!(
                r#"{{"lineage":"{v}","key":"k","parents":["{p}"]}}"#
            ))
        };
        let mut records: Vec<Record> = (0..n).map(|i| line(hex(i), hex((i + 1) % n))).collect();
        records.push(line(hex(n), hex(n)));
        let g = KeyGraph::from_records(SHA1, "k", records);
        assert_eq!(g.nodes.len(), n + 1);
        assert!(g.nodes.values().all(|node| node.parents.is_none()));
    }

    #[test]
    fn a_version_over_an_older_content_0_3_recorded_is_echoed_in_0_3s_shape() {
        let by = Written {
            at: Some("2026-11-30T09:00:00Z".into()),
            session: None,
            by: Some("Ada".into()),
        };
        assert_eq!(
            v03_line("k", blob(1), &[blob(1), blob(3)], &by),
            format!(
                r#"{{"lineage":"{}","key":"k","parents":["{}"],"at":"2026-11-30T09:00:00Z"}}"#,
                blob(1),
                blob(3)
            )
        );
        let echo = rec(&v03_line("k", blob(1), &[blob(3)], &by));
        assert!(echo.legacy && echo.is_sound());
    }
}
