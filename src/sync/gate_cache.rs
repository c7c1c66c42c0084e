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
//! blob is checked as if there were no cache. The digest is no secret: the
//! cache trusts whoever can write the git dir (a line computed by hand for
//! given bytes whitelists them), as the rest of `.git` does — whoever can
//! write it can rewrite the refs and the history too.

use std::path::PathBuf;

use gix::ObjectId;
use gix::hashtable::HashMap;

use crate::brief::redact::Options;
use crate::support::atomic;

/// The cache file's first line; another first line discards the file.
const HEADER: &str = "git-handoff gate cache 2\n";

/// How many verdicts the file keeps at most (about 1.3 MB with SHA-1).
const MOST_VERDICTS: usize = 16_384;

/// Clean verdicts by blob id, loaded from and saved to the cache file.
///
/// The file holds one fixed-width line `<blob id> <digest>` per verdict,
/// sorted by id, as [`GateCache::save`] writes it: a lookup is a binary
/// search over the bytes read, so loading costs one read however many
/// verdicts there are (a push asks about a few blobs of thousands). A line
/// out of order or malformed is only never found.
#[derive(Debug)]
pub struct GateCache {
    path: PathBuf,
    /// The digest of the rules and options the verdicts are keyed with.
    stamp: Vec<u8>,
    kind: gix::hash::Kind,
    /// The verdicts on file: the body after the header, whole lines.
    saved: Vec<u8>,
    /// The verdicts recorded by this process.
    added: HashMap<ObjectId, ObjectId>,
}

impl GateCache {
    /// Load the cache of `repo` for the gate run with `options`.
    pub fn load(repo: &gix::Repository, options: Options) -> GateCache {
        let path = repo.common_dir().join("handoff-gate.cache");
        let kind = repo.object_hash();
        let saved = std::fs::read(&path)
            .ok()
            .and_then(|data| body(data, kind))
            .unwrap_or_default();
        // The rules' digest was computed when they were compiled in: the
        // stamp is a few dozen bytes to hash, not the rules' 280 KB.
        let stamp = format!(
            "git-handoff {} gate, {options:?}\0{}\0{}\0",
            env!("CARGO_PKG_VERSION"),
            crate::brief::redact::rules_digest(),
            crate::brief::redact::engine_version()
        );
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
            saved,
            added: HashMap::default(),
        }
    }

    fn digest(&self, data: &[u8]) -> Option<ObjectId> {
        let mut hasher = gix::hash::hasher(self.kind);
        hasher.update(&self.stamp);
        hasher.update(data);
        hasher.try_finalize().ok()
    }

    /// The digest on file or recorded for blob `id`.
    fn verdict(&self, id: &ObjectId) -> Option<ObjectId> {
        if let Some(digest) = self.added.get(id) {
            return Some(*digest);
        }
        let hex = id.to_hex().to_string();
        let width = line_width(self.kind);
        let line = |at: usize| &self.saved[at * width..(at + 1) * width];
        let (mut low, mut high) = (0, self.saved.len() / width);
        while low < high {
            let mid = low + (high - low) / 2;
            match line(mid)[..hex.len()].cmp(hex.as_bytes()) {
                std::cmp::Ordering::Less => low = mid + 1,
                std::cmp::Ordering::Greater => high = mid,
                std::cmp::Ordering::Equal => {
                    return entry(line(mid), self.kind).map(|(_, digest)| digest);
                }
            }
        }
        None
    }

    /// Whether blob `id`, whose bytes are `data`, was checked clean before
    /// under the same rules and options.
    pub fn is_clean(&self, id: &ObjectId, data: &[u8]) -> bool {
        self.verdict(id)
            .is_some_and(|want| self.digest(data) == Some(want))
    }

    /// Record that blob `id`, whose bytes are `data`, passed the gate. The
    /// id is recomputed from the bytes, never taken on trust.
    pub fn record_clean(&mut self, data: &[u8]) {
        let Ok(id) = gix::objs::compute_hash(self.kind, gix::object::Kind::Blob, data) else {
            return;
        };
        if let Some(digest) = self.digest(data) {
            self.added.insert(id, digest);
        }
    }

    /// Whether `key` was checked clean before under the same rules and
    /// options ([`crate::brief::redact::key_rule`] found nothing in it).
    /// A key's verdict is kept as that of the bytes `git-handoff key\0`
    /// and the key, so it never answers for a blob or a history line.
    pub fn is_clean_key(&self, key: &str) -> bool {
        let data = key_bytes(key);
        gix::objs::compute_hash(self.kind, gix::object::Kind::Blob, &data)
            .is_ok_and(|id| self.is_clean(&id, &data))
    }

    /// Record that `key` passed [`crate::brief::redact::key_rule`].
    pub fn record_clean_key(&mut self, key: &str) {
        self.record_clean(&key_bytes(key));
    }

    /// Whether every one of `keys` was checked clean before, together:
    /// a remote's keys rarely change between two pushes, and one verdict
    /// over all of them costs one digest, not one per key.
    pub fn are_clean_keys<'k>(&self, keys: impl IntoIterator<Item = &'k str>) -> bool {
        let data = keys_bytes(keys);
        gix::objs::compute_hash(self.kind, gix::object::Kind::Blob, &data)
            .is_ok_and(|id| self.is_clean(&id, &data))
    }

    /// Record that each of `keys` passed [`crate::brief::redact::key_rule`].
    pub fn record_clean_keys<'k>(&mut self, keys: impl IntoIterator<Item = &'k str>) {
        self.record_clean(&keys_bytes(keys));
    }

    /// Write the cache back if anything was added (git's lock-file
    /// protocol; a concurrent writer wins and this write is skipped).
    pub fn save(&mut self) {
        if self.added.is_empty() {
            return;
        }
        let width = line_width(self.kind);
        // Derived data grows with every version checked: past a bound the
        // file starts over with this process's verdicts (a verdict lost
        // costs one check again).
        let keep = self.saved.len() / width + self.added.len() <= MOST_VERDICTS;
        let mut all: HashMap<ObjectId, ObjectId> = self
            .saved
            .chunks_exact(width)
            .take_while(|_| keep)
            .filter_map(|line| entry(line, self.kind))
            .collect();
        all.extend(self.added.drain());
        let mut all: Vec<(ObjectId, ObjectId)> = all.into_iter().collect();
        all.sort();
        let mut out = String::with_capacity(HEADER.len() + all.len() * width);
        out.push_str(HEADER);
        for (id, digest) in all {
            out.push_str(&format!("{id} {digest}\n"));
        }
        let _ = atomic::write_unless_locked(&self.path, out.as_bytes());
        self.saved = out.into_bytes().split_off(HEADER.len());
    }
}

/// What a key's verdict is kept under (see [`GateCache::is_clean_key`]).
fn key_bytes(key: &str) -> Vec<u8> {
    [b"git-handoff key\0".as_slice(), key.as_bytes()].concat()
}

/// What the verdict over a list of keys is kept under: each key ends
/// with a NUL, which no key holds.
fn keys_bytes<'k>(keys: impl IntoIterator<Item = &'k str>) -> Vec<u8> {
    let mut data = b"git-handoff keys\0".to_vec();
    for key in keys {
        data.extend_from_slice(key.as_bytes());
        data.push(0);
    }
    data
}

/// The length of one line of the file: two ids in hex, a space, a newline.
fn line_width(kind: gix::hash::Kind) -> usize {
    2 * kind.len_in_hex() + 2
}

/// The lines of a cache file `data` after its header, or None for a file
/// of another version or a torn one.
fn body(mut data: Vec<u8>, kind: gix::hash::Kind) -> Option<Vec<u8>> {
    if !data.starts_with(HEADER.as_bytes()) {
        return None;
    }
    let body = data.split_off(HEADER.len());
    body.len().is_multiple_of(line_width(kind)).then_some(body)
}

/// The blob id and digest of one line, None when malformed.
fn entry(line: &[u8], kind: gix::hash::Kind) -> Option<(ObjectId, ObjectId)> {
    let hex = kind.len_in_hex();
    if line.get(hex) != Some(&b' ') || line.last() != Some(&b'\n') {
        return None;
    }
    let id = ObjectId::from_hex(&line[..hex]).ok()?;
    let digest = ObjectId::from_hex(&line[hex + 1..2 * hex + 1]).ok()?;
    Some((id, digest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(dir: &std::path::Path) -> gix::Repository {
        gix::init_bare(dir).unwrap()
    }

    /// Verdicts survive a save and a load, are found among many by their
    /// id only for the bytes they were given, and a file whose lines are
    /// out of order or torn whitelists nothing.
    /// Past its bound the file starts over with the newest verdicts.
    #[test]
    fn the_file_stays_bounded() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = repo(tmp.path());
        let options = Options::default();
        let mut cache = GateCache::load(&repo, options);
        for i in 0..MOST_VERDICTS {
            cache.record_clean(format!("{i}").as_bytes());
        }
        cache.save();
        let mut cache = GateCache::load(&repo, options);
        cache.record_clean(b"newest");
        cache.save();
        let text = std::fs::read_to_string(repo.common_dir().join("handoff-gate.cache")).unwrap();
        assert_eq!(text.lines().count(), 2, "the header and the newest verdict");
    }

    #[test]
    fn verdicts_are_found_by_id_for_their_bytes_only() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = repo(tmp.path());
        let options = Options::default();
        let blobs: Vec<Vec<u8>> = (0..300)
            .map(|i| format!("line {i}\n").into_bytes())
            .collect();
        let id = |data: &[u8]| {
            gix::objs::compute_hash(repo.object_hash(), gix::object::Kind::Blob, data).unwrap()
        };
        let mut cache = GateCache::load(&repo, options);
        for data in &blobs[..200] {
            cache.record_clean(data);
        }
        cache.save();
        // A second process adds more: the file keeps both.
        let mut cache = GateCache::load(&repo, options);
        for data in &blobs[200..250] {
            cache.record_clean(data);
        }
        cache.save();
        let cache = GateCache::load(&repo, options);
        for (i, data) in blobs.iter().enumerate() {
            assert_eq!(cache.is_clean(&id(data), data), i < 250, "blob {i}");
        }
        // The verdict is for those bytes: another blob's bytes under a
        // cached id are not clean.
        assert!(!cache.is_clean(&id(&blobs[0]), &blobs[1]));
        let path = repo.common_dir().join("handoff-gate.cache");
        let text = std::fs::read_to_string(&path).unwrap();
        let (header, lines) = text.split_once('\n').unwrap();
        assert_eq!(lines.lines().count(), 250);

        // Reversed: nothing is found, nothing is wrongly found.
        let reversed: Vec<&str> = lines.lines().rev().collect();
        std::fs::write(&path, format!("{header}\n{}\n", reversed.join("\n"))).unwrap();
        let cache = GateCache::load(&repo, options);
        let found = blobs.iter().filter(|d| cache.is_clean(&id(d), d)).count();
        assert!(found < 250, "{found}");
        std::fs::write(&path, &text).unwrap();
        // A key's verdict answers for that key only, never for a blob of
        // the same bytes.
        let mut cache = GateCache::load(&repo, options);
        cache.record_clean_key("feat-x");
        cache.save();
        let cache = GateCache::load(&repo, options);
        assert!(cache.is_clean_key("feat-x"));
        assert!(!cache.is_clean_key("feat-y"));
        assert!(!cache.is_clean(&id(b"feat-x"), b"feat-x"));
        // A verdict over a list of keys answers for that very list only:
        // not one key more or less, not the keys joined otherwise.
        let mut cache = GateCache::load(&repo, options);
        cache.record_clean_keys(["a", "bc"]);
        cache.save();
        let cache = GateCache::load(&repo, options);
        assert!(cache.are_clean_keys(["a", "bc"]));
        assert!(!cache.are_clean_keys(["a", "bc", "d"]));
        assert!(!cache.are_clean_keys(["a"]));
        assert!(!cache.are_clean_keys(["ab", "c"]));
        assert!(!cache.is_clean_key("a"));
        let text = std::fs::read_to_string(&path).unwrap();
        // Torn (the last line cut short): the file counts as empty.
        std::fs::write(&path, &text[..text.len() - 5]).unwrap();
        let cache = GateCache::load(&repo, options);
        assert!(!blobs.iter().any(|d| cache.is_clean(&id(d), d)));
    }
}
