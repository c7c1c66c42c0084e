//! Clean verdicts of the secret gate, cached by blob id.
//!
//! A blob never changes, so neither does the gate's answer about it under
//! the same rules: once every line of a note blob (or a brief) was checked
//! and found clean, `<common git dir>/handoff-gate.cache` records it, and a
//! later push or fetch need not run the rules over it again. The cache is
//! derived data: a missing, unreadable or outdated file only costs time,
//! and deleting it is safe.
//!
//! A verdict never whitelists bytes it did not see: each entry holds, next
//! to the blob id, a digest of the rules, the options and the very bytes
//! that were checked. A hit reads the blob again and recomputes that
//! digest (hashing costs a fraction of the rules); an entry edited, copied
//! to another id or written by a different rule set does not match and the
//! blob is checked as if there were no cache.

use std::path::PathBuf;

use gix::ObjectId;
use gix::hashtable::HashMap;

use crate::brief::redact::Options;
use crate::support::atomic;

/// The cache file's first line; another first line discards the file.
const HEADER: &str = "git-handoff gate cache 2\n";

/// Clean verdicts by blob id, loaded from and saved to the cache file.
#[derive(Debug)]
pub struct GateCache {
    path: PathBuf,
    /// The digest of the rules and options the verdicts are keyed with.
    stamp: Vec<u8>,
    kind: gix::hash::Kind,
    entries: HashMap<ObjectId, ObjectId>,
    added: bool,
}

impl GateCache {
    /// Load the cache of `repo` for the gate run with `options`.
    pub fn load(repo: &gix::Repository, options: Options) -> GateCache {
        let path = repo.common_dir().join("handoff-gate.cache");
        let entries = std::fs::read(&path)
            .ok()
            .and_then(|data| parse(&data))
            .unwrap_or_default();
        // The rules' digest was computed when they were compiled in: the
        // stamp is a few dozen bytes to hash, not the rules' 280 KB.
        let stamp = format!(
            "git-handoff {} gate, {options:?}\0{}\0",
            env!("CARGO_PKG_VERSION"),
            crate::brief::redact::rules_digest()
        );
        let kind = repo.object_hash();
        let mut hasher = gix::hash::hasher(kind);
        hasher.update(stamp.as_bytes());
        let stamp = hasher
            .try_finalize()
            .map(|id| id.as_bytes().to_vec())
            .unwrap_or_else(|_| stamp.into_bytes());
        GateCache {
            path,
            stamp,
            kind,
            entries,
            added: false,
        }
    }

    fn digest(&self, data: &[u8]) -> Option<ObjectId> {
        let mut hasher = gix::hash::hasher(self.kind);
        hasher.update(&self.stamp);
        hasher.update(data);
        hasher.try_finalize().ok()
    }

    /// Whether blob `id`, whose bytes are `data`, was checked clean before
    /// under the same rules and options.
    pub fn is_clean(&self, id: &ObjectId, data: &[u8]) -> bool {
        self.entries
            .get(id)
            .is_some_and(|want| self.digest(data).as_ref() == Some(want))
    }

    /// Record that blob `id`, whose bytes are `data`, passed the gate. The
    /// id is recomputed from the bytes, never taken on trust.
    pub fn record_clean(&mut self, data: &[u8]) {
        let Ok(id) = gix::objs::compute_hash(self.kind, gix::object::Kind::Blob, data) else {
            return;
        };
        if let Some(digest) = self.digest(data) {
            self.entries.insert(id, digest);
            self.added = true;
        }
    }

    /// Write the cache back if anything was added (git's lock-file
    /// protocol; a concurrent writer wins and this write is skipped).
    pub fn save(&mut self) {
        if !self.added {
            return;
        }
        let mut ids: Vec<(&ObjectId, &ObjectId)> = self.entries.iter().collect();
        ids.sort();
        let mut out = String::from(HEADER);
        for (id, digest) in ids {
            out.push_str(&format!("{id} {digest}\n"));
        }
        let _ = atomic::write_unless_locked(&self.path, out.as_bytes());
        self.added = false;
    }
}

fn parse(data: &[u8]) -> Option<HashMap<ObjectId, ObjectId>> {
    let text = std::str::from_utf8(data).ok()?;
    let body = text.strip_prefix(HEADER)?;
    let mut entries = HashMap::default();
    for line in body.lines() {
        let (id, digest) = line.split_once(' ')?;
        entries.insert(
            ObjectId::from_hex(id.as_bytes()).ok()?,
            ObjectId::from_hex(digest.as_bytes()).ok()?,
        );
    }
    Some(entries)
}
