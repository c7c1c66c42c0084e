//! The version graph: which version(s) of a key each version was written
//! on top of, like a commit's parents.
//!
//! A write records the local brief it replaced; a `resolve` records the
//! kept version on top of the other side's. The record is one line of the
//! history note beside the version's own line (the note of its
//! `head_sha`), never a field of the brief, whose schema stays
//! wire-compatible:
//!
//! ```text
//! {"lineage":"<version id>","key":"<key>","parents":["<version id>",…]}
//! ```
//!
//! Older readers pass over it as a line that is not a brief. A version may
//! have several lines (a resolve adds one); its parents are their union.
//! "R fast-forwards L" means exactly: L is an ancestor of R here. That a
//! version's line is merely reachable in a history proves nothing: every
//! pushed history line, a diverged one included, is merged everywhere.

use std::collections::{HashMap, HashSet, VecDeque};

use anyhow::Result;
use gix::ObjectId;
use serde::{Deserialize, Serialize};

/// How many versions one question reads at most before it answers
/// [`Relation::Unknown`].
const WALK_LIMIT: usize = 20_000;

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    lineage: String,
    key: String,
    parents: Vec<String>,
    /// When the line was written (the clock `write` reads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    at: Option<String>,
    /// The agent session that wrote it, when one was known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    session: Option<String>,
}

/// Who wrote a lineage line, and when: what tells a brief a session wrote
/// from one it found, whatever the brief's own fields say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Written {
    /// When (`YYYY-MM-DDTHH:MM:SSZ`).
    pub at: Option<String>,
    /// The session, when one was known.
    pub session: Option<String>,
}

/// The history line recording that `version` of `key` was written on top
/// of `parents` (none: a first version), when and by which session.
pub fn line(key: &str, version: ObjectId, parents: &[ObjectId], by: &Written) -> String {
    let mut parents: Vec<String> = parents.iter().map(|p| p.to_string()).collect();
    parents.sort();
    parents.dedup();
    serde_json::to_string(&Line {
        lineage: version.to_string(),
        key: key.to_string(),
        parents,
        at: by.at.clone(),
        session: by.session.clone(),
    })
    .expect("a lineage line serializes")
}

/// A lineage line read back: key, version, parents. `None` for any other
/// line (a brief, or something else).
pub fn parse(line: &[u8]) -> Option<(String, ObjectId, Vec<ObjectId>)> {
    parse_written(line).map(|(key, id, parents, _)| (key, id, parents))
}

/// [`parse`], with who wrote the line and when.
pub fn parse_written(line: &[u8]) -> Option<(String, ObjectId, Vec<ObjectId>, Written)> {
    if !line.starts_with(b"{\"lineage\"") {
        return None;
    }
    let parsed: Line = serde_json::from_slice(line).ok()?;
    let id = |hex: &str| ObjectId::from_hex(hex.as_bytes()).ok();
    let parents = parsed
        .parents
        .iter()
        .map(|p| id(p))
        .collect::<Option<_>>()?;
    let written = Written {
        at: parsed.at,
        session: parsed.session,
    };
    Some((parsed.key, id(&parsed.lineage)?, parents, written))
}

/// The lines of the lineage section of `key` in every notes history here.
fn lines_of(repo: &gix::Repository, key: &str) -> Result<Vec<Vec<u8>>> {
    let tips = crate::store::history::notes_tips(repo)?;
    if tips.is_empty() {
        return Ok(Vec::new());
    }
    let entries = crate::store::history_index::entries_of(repo, &tips, &section(key))?;
    Ok(entries.into_iter().map(|e| e.line).collect())
}

/// Every record of how `version` of `key` was written (its lineage lines
/// in every notes history here), oldest first by their time; empty for a
/// version written before lineage was recorded.
pub fn records(repo: &gix::Repository, key: &str, version: ObjectId) -> Result<Vec<Written>> {
    let mut out: Vec<Written> = lines_of(repo, key)?
        .iter()
        .filter_map(|line| parse_written(line))
        .filter(|(k, id, _, _)| k == key && *id == version)
        .map(|(_, _, _, w)| w)
        .collect();
    out.sort_by(|a, b| a.at.cmp(&b.at));
    out.dedup();
    Ok(out)
}

/// The version `version` of `key` was written on top of, when one
/// record names exactly one.
pub fn parent_of(repo: &gix::Repository, key: &str, version: ObjectId) -> Result<Option<ObjectId>> {
    Ok(ancestors(repo, key, version, 1)?.into_iter().next())
}

/// The versions under `version` of `key`, nearest first, hop by hop while
/// a record names exactly one parent; at most `max`, from one read of the
/// key's lineage.
pub fn ancestors(
    repo: &gix::Repository,
    key: &str,
    version: ObjectId,
    max: usize,
) -> Result<Vec<ObjectId>> {
    let links: Vec<(ObjectId, Vec<ObjectId>)> = lines_of(repo, key)?
        .iter()
        .filter_map(|line| parse(line))
        .filter(|(k, _, _)| k == key)
        .map(|(_, id, parents)| (id, parents))
        .collect();
    let mut out = Vec::new();
    let mut at = version;
    while out.len() < max {
        let Some(parent) = links
            .iter()
            .filter(|(id, _)| *id == at)
            .find_map(|(_, parents)| (parents.len() == 1).then(|| parents[0]))
        else {
            break;
        };
        if parent == version || out.contains(&parent) {
            break;
        }
        out.push(parent);
        at = parent;
    }
    Ok(out)
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
    /// Neither is an ancestor of the other (or, after two rival
    /// resolutions, each is of the other): diverged.
    Diverged,
    /// The graph cannot tell: a version on the way was written by a
    /// git-handoff that recorded no lineage. The caller falls back to what
    /// the bases say, erring on the side of diverged.
    Unknown,
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

/// The version graph of the notes histories at some tips: each key's
/// lineage lines are read once, from the history index (one section of
/// its file), when a question about that key first comes.
pub struct Graph {
    repo: gix::Repository,
    tips: Vec<ObjectId>,
    /// Key → version → its parents (absent: no lineage recorded).
    keys: HashMap<String, HashMap<ObjectId, Vec<ObjectId>>>,
}

impl Graph {
    /// The graph of the notes histories at `tips` (local and remotes').
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

    /// The graph of every notes history this repository holds, and the
    /// extra tips given (a remote's history as just fetched).
    pub fn of_repo(repo: &gix::Repository, extra: &[ObjectId]) -> Result<Graph> {
        let mut tips = crate::store::history::notes_tips(repo)?;
        tips.extend_from_slice(extra);
        Ok(Graph::new(repo, &tips))
    }

    /// How `a` stands to `b`, both versions of `key`.
    pub fn relation(&mut self, key: &str, a: ObjectId, b: ObjectId) -> Result<Relation> {
        if a == b {
            return Ok(Relation::Same);
        }
        let parents = self.parents(key)?;
        let (a_below_b, b_complete) = reaches(parents, b, a);
        let (b_below_a, a_complete) = reaches(parents, a, b);
        Ok(match (a_below_b, b_below_a) {
            (true, false) => Relation::Behind,
            (false, true) => Relation::Ahead,
            (true, true) => Relation::Diverged,
            (false, false) if a_complete && b_complete => Relation::Diverged,
            (false, false) => Relation::Unknown,
        })
    }

    /// Whether lineage is recorded for `version` of `key`.
    pub fn is_recorded(&mut self, key: &str, version: ObjectId) -> Result<bool> {
        Ok(self.parents(key)?.contains_key(&version))
    }

    /// Every version of `key` with recorded lineage, and its parents: the
    /// union of its lineage lines in every history.
    fn parents(&mut self, key: &str) -> Result<&HashMap<ObjectId, Vec<ObjectId>>> {
        if !self.keys.contains_key(key) {
            let mut map: HashMap<ObjectId, Vec<ObjectId>> = HashMap::new();
            if !self.tips.is_empty() {
                let entries =
                    crate::store::history_index::entries_of(&self.repo, &self.tips, &section(key))?;
                for entry in entries {
                    if let Some((k, id, parents)) = parse(&entry.line)
                        && k == key
                        && id == entry.id
                    {
                        map.entry(id).or_default().extend(parents);
                    }
                }
            }
            for parents in map.values_mut() {
                parents.sort();
                parents.dedup();
            }
            self.keys.insert(key.to_string(), map);
        }
        Ok(&self.keys[key])
    }
}

/// Whether `target` is an ancestor of `from` (or is it), and whether the
/// walk saw every ancestor's lineage (no unrecorded version, no limit
/// reached) when it is not.
fn reaches(
    parents: &HashMap<ObjectId, Vec<ObjectId>>,
    from: ObjectId,
    target: ObjectId,
) -> (bool, bool) {
    let mut queue = VecDeque::from([from]);
    let mut seen = HashSet::from([from]);
    let mut complete = true;
    while let Some(id) = queue.pop_front() {
        if id == target {
            return (true, true);
        }
        if seen.len() > WALK_LIMIT {
            return (false, false);
        }
        match parents.get(&id) {
            Some(ps) => {
                for p in ps {
                    if seen.insert(*p) {
                        queue.push_back(*p);
                    }
                }
            }
            None => complete = false,
        }
    }
    (false, complete)
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

    #[test]
    fn lines_read_back_and_nothing_else_reads_as_one() {
        let (v, p) = (
            ObjectId::from_bytes_or_panic(&[1; 20]),
            ObjectId::from_bytes_or_panic(&[2; 20]),
        );
        let line = line("feat-x", v, &[p, p], &Written::default());
        assert_eq!(parse(line.as_bytes()), Some(("feat-x".into(), v, vec![p])));
        assert_eq!(parse(br#"{"schema_version":"1","key":"k"}"#), None);
        assert_eq!(parse(br#"{"lineage":"zz","key":"k","parents":[]}"#), None);
        let extra = br#"{"lineage":"0101010101010101010101010101010101010101","key":"k","parents":[],"x":1}"#;
        assert_eq!(parse(extra), None);
    }
}
