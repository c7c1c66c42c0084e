//! The version graph as the design says to believe it, read from a
//! history's lineage lines with plain git and rebuilt here independently
//! of the crate: a version id binds key, brief and parents; a line whose
//! id does not is not believed; a line of 0.3 (no `"brief"`) is believed
//! only for a blob no line of this version records, with exactly one
//! parent set, found on the graph of this version's lines, and not on a
//! cycle; a blob stands for its newest version (the one that descends
//! from every other), else it is ambiguous.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};

/// One lineage line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub vid: String,
    pub key: String,
    pub blob: String,
    pub parents: Vec<String>,
    pub legacy: bool,
}

impl Line {
    pub fn parse(text: &str) -> Option<Line> {
        if !text.starts_with("{\"lineage\"") {
            return None;
        }
        let v: serde_json::Value = serde_json::from_str(text).ok()?;
        let vid = v["lineage"].as_str()?.to_string();
        let parents = v["parents"]
            .as_array()?
            .iter()
            .map(|p| p.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()?;
        let (blob, legacy) = match v["brief"].as_str() {
            Some(b) => (b.to_string(), false),
            None => (vid.clone(), true),
        };
        Some(Line {
            vid,
            key: v["key"].as_str()?.to_string(),
            blob,
            parents,
            legacy,
        })
    }

    /// Whether the line may be believed: its id binds key, brief, parents.
    pub fn is_sound(&self) -> bool {
        self.legacy || self.vid == version_id(&self.key, &self.blob, &self.parents)
    }
}

fn sha1(text: &str) -> String {
    let mut hasher = gix::hash::hasher(gix::hash::Kind::Sha1);
    hasher.update(text.as_bytes());
    hasher.try_finalize().expect("hashing").to_string()
}

/// The id of the version of `key` holding `blob` on top of `parents`.
pub fn version_id(key: &str, blob: &str, parents: &[String]) -> String {
    let parents: BTreeSet<&String> = parents.iter().collect();
    let mut text = format!("git-handoff version\nkey {key}\nbrief {blob}\n");
    for p in parents {
        text.push_str(&format!("parent {p}\n"));
    }
    sha1(&text)
}

/// The version a blob no line records stands for.
pub fn unrecorded(key: &str, blob: &str) -> String {
    sha1(&format!(
        "git-handoff unrecorded version\nkey {key}\nbrief {blob}\n"
    ))
}

/// How two sets of versions relate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rel {
    Same,
    Behind,
    Ahead,
    Diverged,
}

/// One key's believed graph: version → parents (None: unknown).
#[derive(Debug, Default)]
pub struct Graph {
    pub key: String,
    pub nodes: HashMap<String, Option<Vec<String>>>,
    by_blob: HashMap<String, Vec<String>>,
    /// The versions only lines of 0.3 speak of.
    legacy: HashSet<String>,
}

impl Graph {
    pub fn of(key: &str, lines: &[Line]) -> Graph {
        let mut g = Graph {
            key: key.to_string(),
            ..Graph::default()
        };
        let mut legacy: HashMap<&str, HashSet<Vec<String>>> = HashMap::new();
        for l in lines.iter().filter(|l| l.key == key && l.is_sound()) {
            if l.legacy {
                let set: BTreeSet<String> = l.parents.iter().cloned().collect();
                legacy
                    .entry(&l.blob)
                    .or_default()
                    .insert(set.into_iter().collect());
            } else {
                g.add(&l.vid, &l.blob, Some(l.parents.clone()));
            }
        }
        // A 0.3 line's parent blob is the version of this one that holds
        // it, unless 0.3 recorded that blob too: then 0.3's version of it.
        let explicit: HashSet<String> = g.by_blob.keys().cloned().collect();
        let v03: HashSet<String> = legacy.keys().map(|b| b.to_string()).collect();
        let mut added = Vec::new();
        for (blob, sets) in legacy {
            // Never a version written over the 0.3 version itself.
            let own = unrecorded(key, blob);
            let parents = (sets.len() == 1).then(|| {
                let set = sets.into_iter().next().expect("one");
                set.iter()
                    .flat_map(|p| match explicit.contains(p) && !v03.contains(p) {
                        true => g.versions_below(p, &own),
                        false => vec![unrecorded(key, p)],
                    })
                    .collect()
            });
            added.push((own, blob.to_string(), parents));
        }
        for (vid, blob, parents) in added {
            g.legacy.insert(vid.clone());
            // 0.3's version of a content this version recorded stays below
            // the versions written over it; the blob stands for this
            // version's only.
            if explicit.contains(&blob) {
                g.nodes.entry(vid).or_insert(parents);
            } else {
                g.add(&vid, &blob, parents);
            }
        }
        // A 0.3 version a cycle runs through is not believed.
        let on_cycle: Vec<String> = (g.legacy.iter())
            .filter(|v| {
                let parents = g.nodes.get(*v).cloned().flatten().unwrap_or_default();
                parents.iter().any(|p| g.reaches(p, v))
            })
            .cloned()
            .collect();
        for v in on_cycle {
            g.nodes.insert(v, None);
        }
        g
    }

    fn add(&mut self, vid: &str, blob: &str, parents: Option<Vec<String>>) {
        self.nodes.entry(vid.to_string()).or_insert(parents);
        let all = self.by_blob.entry(blob.to_string()).or_default();
        if !all.iter().any(|v| v == vid) {
            all.push(vid.to_string());
        }
    }

    pub fn records(&self, blob: &str) -> bool {
        self.by_blob.contains_key(blob)
    }

    /// Whether `target` is `from` or one of its ancestors.
    pub fn reaches(&self, from: &str, target: &str) -> bool {
        let mut queue = VecDeque::from([from.to_string()]);
        let mut seen = HashSet::from([from.to_string()]);
        while let Some(id) = queue.pop_front() {
            if id == target {
                return true;
            }
            for p in self.nodes.get(&id).cloned().flatten().unwrap_or_default() {
                if seen.insert(p.clone()) {
                    queue.push_back(p);
                }
            }
        }
        false
    }

    /// The versions `blob` stands for: its newest, or several (ambiguous),
    /// or its own unrecorded one.
    pub fn versions_of(&self, blob: &str) -> Vec<String> {
        let Some(all) = self.by_blob.get(blob) else {
            return vec![unrecorded(&self.key, blob)];
        };
        let mut out: Vec<String> = all
            .iter()
            .filter(|c| !all.iter().any(|d| d != *c && self.reaches(d, c)))
            .cloned()
            .collect();
        out.sort();
        out
    }

    /// The versions `blob` stands for as the parent of the 0.3 version
    /// `own`: the newest of those that do not descend from `own`.
    fn versions_below(&self, blob: &str, own: &str) -> Vec<String> {
        let all: Vec<&String> = (self.by_blob.get(blob).into_iter().flatten())
            .filter(|v| !self.reaches(v, own))
            .collect();
        if all.is_empty() {
            return vec![unrecorded(&self.key, blob)];
        }
        all.iter()
            .filter(|c| !all.iter().any(|d| d != *c && self.reaches(d, c)))
            .map(|v| v.to_string())
            .collect()
    }

    pub fn relation(&self, a: &str, b: &str) -> Rel {
        if a == b {
            return Rel::Same;
        }
        let (va, vb) = (self.versions_of(a), self.versions_of(b));
        let below =
            |xs: &[String], y: &[String]| y.len() == 1 && xs.iter().all(|x| self.reaches(&y[0], x));
        match (va.len() == 1 && va == vb, below(&va, &vb), below(&vb, &va)) {
            (true, _, _) => Rel::Same,
            (false, true, false) => Rel::Behind,
            (false, false, true) => Rel::Ahead,
            _ => Rel::Diverged,
        }
    }

    /// A version on a cycle, if the graph has one. A cycle of 0.3's
    /// versions only (lines a forger can write for blobs this version never
    /// recorded; the crate answers diverged there) is not one.
    pub fn cycle(&self) -> Option<String> {
        // 0: unseen, 1: on the path, 2: done.
        let mut state: HashMap<&str, u8> = HashMap::new();
        for start in self.nodes.keys() {
            if state.contains_key(start.as_str()) {
                continue;
            }
            let mut stack: Vec<(&str, usize)> = vec![(start, 0)];
            state.insert(start, 1);
            while let Some((id, i)) = stack.pop() {
                let parents = self.nodes.get(id).and_then(|p| p.as_deref());
                let next = parents.and_then(|ps| ps.get(i));
                let Some(p) = next else {
                    state.insert(id, 2);
                    continue;
                };
                stack.push((id, i + 1));
                match state.get(p.as_str()) {
                    Some(1) => {
                        let at = stack.iter().position(|(id, _)| *id == p.as_str());
                        let path = &stack[at.unwrap_or(0)..];
                        if path.iter().any(|(id, _)| !self.legacy.contains(*id)) {
                            return Some(p.clone());
                        }
                    }
                    Some(_) => {}
                    None if self.nodes.contains_key(p) => {
                        state.insert(p, 1);
                        stack.push((p, 0));
                    }
                    None => {}
                }
            }
        }
        None
    }
}
