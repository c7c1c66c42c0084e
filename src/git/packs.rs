//! Reading many trees from packs the way git does: every base met while
//! undoing a delta chain is kept in a delta-base cache, so the trees of
//! consecutive commits, whose chains overlap, are undone one delta each.
//!
//! gix 0.90 keeps only the object asked for in its delta-base cache, not the
//! bases below it: reading a chain's objects from the newest down (the order
//! of a commit walk, in a pack written by `git fast-import` or received as
//! is) undoes the whole chain again for each, which is quadratic in its
//! depth. Anything this reader cannot read — loose objects, objects of an
//! alternate, a base in another pack, damaged data — is read through gix,
//! so an answer never depends on which reader read it.
//!
//! Pack indexes are read with positioned reads, not mapped: a walk looks
//! up thousands of ids scattered over the whole index, which would make
//! most of a mapped one resident (28 MB for a million objects). Ids are
//! uniformly distributed, so one read of a small window where the id
//! should be finds it.

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::hash::{BuildHasherDefault, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use gix::ObjectId;
use gix::odb::pack;

mod appends;

/// A decoded object's bytes, shared between the cache and its readers.
pub type Bytes = Arc<Vec<u8>>;

/// The packs of one object database, opened on the first read.
pub struct Packs {
    dir: PathBuf,
    hash: gix::hash::Kind,
    opened: Option<Vec<Pack>>,
    /// Where [`Packs::locate`] found ids: (pack, offset).
    located: FastMap<ObjectId, (usize, u64)>,
    /// The pack the last object read was in.
    last: usize,
    bases: Bases,
    /// What each entry read for a proof of appending says ([`appends`]).
    links: FastMap<(usize, u64), Option<appends::Link>>,
    inflate: gix::zlib::Inflate,
}

struct Pack {
    index: Index,
    data: pack::data::File,
}

/// The longest delta chain followed (git writes at most 4095).
const MAX_CHAIN: usize = 10_000;

/// The largest object decoded here; larger ones go through gix.
const MAX_OBJECT: u64 = 256 << 20;

impl Packs {
    /// The reader of `repo`'s packs, with a delta-base cache of at most
    /// `cache_bytes` (0: none).
    pub fn new(repo: &gix::Repository, cache_bytes: usize) -> Packs {
        Packs {
            dir: repo.objects.store_ref().path().join("pack"),
            hash: repo.object_hash(),
            opened: None,
            located: FastMap::default(),
            last: 0,
            bases: Bases {
                cap: cache_bytes,
                ..Bases::default()
            },
            links: FastMap::default(),
            inflate: gix::zlib::Inflate::default(),
        }
    }

    /// The bytes of tree `id`; `None` when it cannot be read or is not a
    /// tree.
    pub fn tree(&mut self, repo: &gix::Repository, id: ObjectId) -> Option<Bytes> {
        if let Some((kind, data)) = self.packed(id) {
            return (kind == gix::object::Kind::Tree).then_some(data);
        }
        let tree = repo.find_tree(id).ok()?;
        Some(Arc::new(tree.detach().data))
    }

    /// The kind and bytes of object `id`: from the packs opened here, else
    /// through gix (a loose object, an alternate's). For a few objects in a
    /// large repository, cheaper than gix, which validates a pack index's
    /// whole offset table when it first opens it (4 MB for a million
    /// objects).
    pub fn object(
        &mut self,
        repo: &gix::Repository,
        id: ObjectId,
    ) -> Option<(gix::object::Kind, Bytes)> {
        if let Some(found) = self.packed(id) {
            return Some(found);
        }
        let object = repo.find_object(id).ok()?;
        Some((object.kind, Arc::new(object.detach().data)))
    }

    /// `id` decoded from the packs opened here, when one has it and it
    /// decodes.
    fn packed(&mut self, id: ObjectId) -> Option<(gix::object::Kind, Bytes)> {
        let (n, offset) = self.find(id)?;
        self.last = n;
        self.decode(n, offset)
    }

    fn packs(&mut self) -> &[Pack] {
        self.opened
            .get_or_insert_with(|| open_packs(&self.dir, self.hash))
    }

    /// Find where many objects about to be read are, in one pass over each
    /// index's buckets rather than one search each.
    pub fn locate(&mut self, mut ids: Vec<ObjectId>) {
        ids.sort_unstable();
        ids.dedup();
        let mut found = Vec::new();
        for (n, pack) in self.packs().iter().enumerate() {
            let offsets = pack.index.lookup_sorted(&ids);
            found.extend(
                ids.iter()
                    .zip(offsets)
                    .filter_map(|(id, offset)| Some((*id, (n, offset?)))),
            );
        }
        for (id, at) in found {
            self.located.entry(id).or_insert(at);
        }
    }

    /// The object at `offset` in pack `n`: down its delta chain to a cached
    /// or whole base, then up again applying each delta, caching every
    /// object met on the way up.
    fn decode(&mut self, n: usize, offset: u64) -> Option<(gix::object::Kind, Bytes)> {
        let pack = &self.opened.as_ref().expect("opened")[n];
        let mut chain = Vec::new();
        let mut at = offset;
        let (kind, mut object) = loop {
            if let Some(hit) = self.bases.get(n, at) {
                break hit;
            }
            let entry = pack.data.entry(at).ok()?;
            let next = match stands_on(pack, &entry)? {
                Stands::Delta(base) => base,
                Stands::Whole(kind) => {
                    let object = Arc::new(inflate(pack, &entry, &mut self.inflate)?);
                    self.bases.put(n, at, kind, object.clone());
                    break (kind, object);
                }
            };
            if chain.len() == MAX_CHAIN {
                return None;
            }
            chain.push((at, entry));
            at = next;
        };
        while let Some((at, entry)) = chain.pop() {
            let delta = inflate(pack, &entry, &mut self.inflate)?;
            object = Arc::new(apply_delta(&object, &delta)?);
            self.bases.put(n, at, kind, object.clone());
        }
        Some((kind, object))
    }
}

/// Every pack of the directory whose index and data open, largest first;
/// the rest are left to gix.
fn open_packs(dir: &Path, hash: gix::hash::Kind) -> Vec<Pack> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut packs: Vec<Pack> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "idx"))
        .filter_map(|idx| {
            let index = Index::open(&idx, hash.len_in_bytes())?;
            let data = pack::data::File::at(idx.with_extension("pack"), hash).ok()?;
            (data.num_objects() == index.count).then_some(Pack { index, data })
        })
        .collect();
    packs.sort_by_key(|p| std::cmp::Reverse(p.index.count));
    packs
}

/// A version-2 pack index: a fan-out table by first byte, the sorted ids,
/// their CRCs, their 31-bit offsets (the high bit pointing into a table of
/// 64-bit ones).
struct Index {
    file: File,
    hash_len: u64,
    fan: [u32; 256],
    count: u32,
    /// Ids read around where an id should be ([`WINDOW`]; less in tests).
    window: u64,
}

/// Ids read around where an id should be.
const WINDOW: u64 = 128;

/// The fan-out table's end: magic, version and 256 counts.
const FAN_END: u64 = 8 + 256 * 4;

impl Index {
    fn open(path: &Path, hash_len: usize) -> Option<Index> {
        let file = File::open(path).ok()?;
        let mut head = [0u8; FAN_END as usize];
        read_at(&file, &mut head, 0)?;
        if head[..8] != [0xff, b't', b'O', b'c', 0, 0, 0, 2] {
            return None;
        }
        let mut fan = [0u32; 256];
        for (n, count) in fan.iter_mut().enumerate() {
            let at = 8 + n * 4;
            *count = u32::from_be_bytes(head[at..at + 4].try_into().ok()?);
        }
        if fan.windows(2).any(|w| w[0] > w[1]) {
            return None;
        }
        let (count, hash_len) = (fan[255], hash_len as u64);
        let tables = FAN_END + u64::from(count) * (hash_len + 8) + 2 * hash_len;
        let len = file.metadata().ok()?.len();
        (len >= tables && (len - tables).is_multiple_of(8)).then_some(Index {
            file,
            hash_len,
            fan,
            count,
            window: WINDOW,
        })
    }

    /// The pack offset of `id`, when this index has it.
    fn lookup(&self, id: &[u8]) -> Option<u64> {
        let first = usize::from(*id.first()?);
        let mut lo = u64::from(if first == 0 { 0 } else { self.fan[first - 1] });
        let mut hi = u64::from(self.fan[first]);
        let guess = u64::from_be_bytes(id.get(1..9)?.try_into().ok()?);
        let len = self.hash_len as usize;
        let mut window = Vec::new();
        let mut first = true;
        while lo < hi {
            // First where the id falls between the bucket's ends, were ids
            // evenly spread (almost always right); then halving.
            let at = if first {
                lo + ((u128::from(hi - lo) * u128::from(guess)) >> 64) as u64
            } else {
                lo + (hi - lo) / 2
            };
            first = false;
            let start = at.saturating_sub(self.window / 2).max(lo);
            let end = (start + self.window).min(hi);
            window.resize((end - start) as usize * len, 0);
            read_at(&self.file, &mut window, FAN_END + start * self.hash_len)?;
            let ids: Vec<&[u8]> = window.chunks_exact(len).collect();
            match ids.binary_search(&id) {
                Ok(i) => return self.offset(start + i as u64),
                Err(0) if start > lo => hi = start,
                Err(i) if i == ids.len() && end < hi => lo = end,
                Err(_) => return None,
            }
        }
        None
    }

    /// The pack offsets of `ids` (sorted), bucket by bucket: a bucket
    /// holding many of them is read whole (ids and offsets, two reads), the
    /// others searched one id at a time.
    fn lookup_sorted(&self, ids: &[ObjectId]) -> Vec<Option<u64>> {
        let mut out = Vec::with_capacity(ids.len());
        let len = self.hash_len as usize;
        let mut bucket = Vec::new();
        let mut offsets = Vec::new();
        for group in ids.chunk_by(|a, b| a.as_slice()[0] == b.as_slice()[0]) {
            let first = usize::from(group[0].as_slice()[0]);
            let lo = u64::from(if first == 0 { 0 } else { self.fan[first - 1] });
            let hi = u64::from(self.fan[first]);
            let whole = group.len() as u64 * self.window >= (hi - lo) / 2;
            let table = FAN_END + u64::from(self.count) * (self.hash_len + 4);
            let read = whole && {
                bucket.resize((hi - lo) as usize * len, 0);
                offsets.resize((hi - lo) as usize * 4, 0);
                read_at(&self.file, &mut bucket, FAN_END + lo * self.hash_len).is_some()
                    && read_at(&self.file, &mut offsets, table + lo * 4).is_some()
            };
            if !read {
                out.extend(group.iter().map(|id| self.lookup(id.as_slice())));
                continue;
            }
            let known: Vec<&[u8]> = bucket.chunks_exact(len).collect();
            out.extend(group.iter().map(|id| {
                let i = known.binary_search(&id.as_slice()).ok()?;
                let word = u32::from_be_bytes(offsets[i * 4..i * 4 + 4].try_into().ok()?);
                self.large_offset(word)
            }));
        }
        out
    }

    /// The pack offset of the `n`th id.
    fn offset(&self, n: u64) -> Option<u64> {
        let count = u64::from(self.count);
        let table = FAN_END + count * (self.hash_len + 4);
        let mut word = [0u8; 4];
        read_at(&self.file, &mut word, table + n * 4)?;
        self.large_offset(u32::from_be_bytes(word))
    }

    /// An offset from the table of 31-bit ones: itself, or with the high
    /// bit set, which 64-bit one.
    fn large_offset(&self, small: u32) -> Option<u64> {
        if small & 0x8000_0000 == 0 {
            return Some(u64::from(small));
        }
        let count = u64::from(self.count);
        let table = FAN_END + count * (self.hash_len + 8);
        let mut large = [0u8; 8];
        read_at(
            &self.file,
            &mut large,
            table + u64::from(small & 0x7fff_ffff) * 8,
        )?;
        Some(u64::from_be_bytes(large))
    }
}

/// Fill `buf` from `file` at `offset`; `None` when it cannot (and on
/// systems without positioned reads, where gix reads instead).
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> Option<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, offset).ok()
    }
    #[cfg(not(unix))]
    {
        let _ = (file, buf, offset);
        None
    }
}

/// What a pack entry stands on: its delta's base, in the same pack, or
/// nothing (a whole object of this kind).
enum Stands {
    Delta(u64),
    Whole(gix::object::Kind),
}

/// What `entry` of `pack` stands on; `None` when that cannot be read (a
/// base in another pack, a damaged header).
fn stands_on(pack: &Pack, entry: &pack::data::Entry) -> Option<Stands> {
    use pack::data::entry::Header;
    Some(match entry.header {
        Header::OfsDelta { base_distance } => {
            Stands::Delta(entry.checked_base_pack_offset(base_distance)?)
        }
        Header::RefDelta { base_id } => Stands::Delta(pack.index.lookup(base_id.as_slice())?),
        header => Stands::Whole(header.as_kind()?),
    })
}

/// The inflated data of one pack entry: a whole object or a delta.
fn inflate(
    pack: &Pack,
    entry: &pack::data::Entry,
    inflate: &mut gix::zlib::Inflate,
) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    inflate_into(pack, entry, inflate, 0, &mut out)?;
    Some(out)
}

/// [`inflate`] into `out` (replacing what it held), with room for at
/// least `room` bytes.
fn inflate_into(
    pack: &Pack,
    entry: &pack::data::Entry,
    inflate: &mut gix::zlib::Inflate,
    room: usize,
    out: &mut Vec<u8>,
) -> Option<()> {
    if entry.decompressed_size > MAX_OBJECT {
        return None;
    }
    let size = usize::try_from(entry.decompressed_size).ok()?;
    out.clear();
    out.reserve(size.max(room.min(MAX_OBJECT as usize)));
    out.resize(size, 0);
    pack.data.decompress_entry(entry, inflate, out).ok()?;
    Some(())
}

/// A size in a delta's header (7 bits a byte, least significant first).
fn delta_size(delta: &[u8], at: &mut usize) -> Option<usize> {
    let mut size = 0usize;
    let mut shift = 0;
    loop {
        let byte = *delta.get(*at)?;
        *at += 1;
        size |= usize::from(byte & 0x7f).checked_shl(shift)?;
        shift += 7;
        if byte & 0x80 == 0 || shift > 63 {
            return (byte & 0x80 == 0).then_some(size);
        }
    }
}

/// `base` with git's delta applied (copy-from-base and insert
/// instructions); `None` when the delta does not fit the base.
pub fn apply_delta(base: &[u8], delta: &[u8]) -> Option<Vec<u8>> {
    let mut at = 0;
    if delta_size(delta, &mut at)? != base.len() {
        return None;
    }
    let size = delta_size(delta, &mut at)?;
    if size as u64 > MAX_OBJECT {
        return None;
    }
    let mut out = Vec::with_capacity(size);
    run_delta(delta, at, &mut out, size, |out, offset, len| {
        out.extend_from_slice(base.get(offset..offset.checked_add(len)?)?);
        Some(())
    })?;
    Some(out)
}

/// Run a delta's instructions from `at`, appending to `out` until it holds
/// `size` bytes: inserts from the delta, copies through `copy` (`len`
/// bytes from `offset` of the base); `None` when they do not fit.
fn run_delta(
    delta: &[u8],
    mut at: usize,
    out: &mut Vec<u8>,
    size: usize,
    mut copy: impl FnMut(&mut Vec<u8>, usize, usize) -> Option<()>,
) -> Option<()> {
    while let Some(&cmd) = delta.get(at) {
        at += 1;
        if cmd & 0x80 != 0 {
            let (offset, len) = appends::copy_fields(delta, cmd, &mut at)?;
            copy(out, offset, len)?;
        } else if cmd != 0 {
            let len = usize::from(cmd);
            out.extend_from_slice(delta.get(at..at + len)?);
            at += len;
        } else {
            return None;
        }
        if out.len() > size {
            return None;
        }
    }
    (out.len() == size).then_some(())
}

/// A hash map for keys that are object ids, pack offsets or small
/// integers: hashed with a multiply and rotate per word (as rustc's
/// `FxHasher`), several times faster than the default SipHash, whose
/// protection against chosen keys these keys do not need.
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// The hasher of [`FastMap`].
#[derive(Default, Clone, Copy)]
pub struct FastHasher(u64);

impl FastHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.add(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        }
        let mut tail = [0u8; 8];
        let rest = chunks.remainder();
        if !rest.is_empty() {
            tail[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(tail));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Decoded objects by (pack, offset), least recently put evicted first
/// once they hold more than `cap` bytes.
#[derive(Default)]
struct Bases {
    map: FastMap<(usize, u64), (gix::object::Kind, Bytes)>,
    order: VecDeque<(usize, u64)>,
    bytes: usize,
    cap: usize,
}

impl Bases {
    fn get(&self, pack: usize, offset: u64) -> Option<(gix::object::Kind, Bytes)> {
        self.map.get(&(pack, offset)).cloned()
    }

    fn put(&mut self, pack: usize, offset: u64, kind: gix::object::Kind, object: Bytes) {
        if object.len() > self.cap {
            return;
        }
        self.bytes += object.len();
        if let Some((_, old)) = self.map.insert((pack, offset), (kind, object)) {
            self.bytes -= old.len();
        } else {
            self.order.push_back((pack, offset));
        }
        while self.bytes > self.cap {
            let Some(key) = self.order.pop_front() else {
                break;
            };
            if let Some((_, old)) = self.map.remove(&key) {
                self.bytes -= old.len();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Packs, apply_delta};
    use crate::support::test_git::git;
    use std::path::Path;

    /// A `git fast-import` stream: 60 commits over 40 files in 4
    /// directories, one file changed a commit; `run` names the contents.
    fn stream(run: usize) -> String {
        let mut s = String::new();
        for k in 1..=60 {
            s += &format!(
                "commit refs/heads/run{run}\nmark :{k}\ncommitter T <t@x> {} +0000\ndata 1\nc\n",
                1_700_000_000 + k
            );
            let files: Vec<usize> = if k == 1 {
                (0..40).collect()
            } else {
                vec![k * 7 % 40]
            };
            for f in files {
                let body = format!("file {f} at {k} in run {run}\n");
                s += &format!(
                    "M 100644 inline d{}/f{f}.txt\ndata {}\n{body}\n",
                    f % 4,
                    body.len()
                );
            }
        }
        s
    }

    /// Every object of the packs, read here, is what gix reads, for
    /// chains met newest first (fast-import) and oldest first (repack),
    /// with a cache, a tiny one and none.
    #[test]
    fn every_packed_object_reads_as_gix_reads_it() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        git(dir, &["init", "-q"], None);
        // Two packs, then one.
        git(dir, &["fast-import", "--quiet"], Some(&stream(1)));
        git(dir, &["fast-import", "--quiet"], Some(&stream(2)));
        let packs = std::fs::read_dir(dir.join(".git/objects/pack")).unwrap();
        assert_eq!(
            packs
                .filter(|e| e.as_ref().unwrap().path().extension().unwrap() == "idx")
                .count(),
            2
        );
        for repack in [false, true] {
            if repack {
                git(dir, &["repack", "-a", "-d", "-f", "-q", "--depth=50"], None);
            }
            let listing = git(
                dir,
                &[
                    "cat-file",
                    "--batch-all-objects",
                    "--batch-check=%(objectname) %(deltabase)",
                ],
                None,
            );
            let deltas = listing
                .lines()
                .filter(|l| !l.ends_with(&"0".repeat(40)))
                .count();
            assert!(deltas > 30, "{deltas} deltas");
            let repo = gix::open(dir).unwrap();
            let ids: Vec<gix::ObjectId> = listing
                .lines()
                .map(|l| gix::ObjectId::from_hex(&l.as_bytes()[..40]).unwrap())
                .collect();
            // Windows of 1 id: searches take several reads.
            for (cap, locate, window) in [(16 << 20, false, 1), (300, true, 128), (0, false, 128)] {
                let mut packs = Packs::new(&repo, cap);
                for pack in packs
                    .opened
                    .get_or_insert_with(|| super::open_packs(&packs.dir, packs.hash))
                {
                    pack.index.window = window;
                }
                if locate {
                    packs.locate(ids.clone());
                    assert_eq!(packs.located.len(), ids.len());
                }
                for line in listing.lines().rev() {
                    let id = gix::ObjectId::from_hex(&line.as_bytes()[..40]).unwrap();
                    let (kind, data) = packs.packed(id).expect("read from the pack");
                    let want = repo.find_object(id).unwrap();
                    assert_eq!((kind, data.as_slice()), (want.kind, &want.data[..]), "{id}");
                    // Ids next to it are in no pack.
                    let mut near = id;
                    near.as_mut_slice()[19] ^= 1;
                    assert!(packs.packed(near).is_none(), "{near}");
                }
            }
        }
    }

    /// A note grown one line a commit (fast-import: each blob a delta of
    /// the one before, a whole one every so often), one commit that
    /// rewrites its first line, and the ids of the note's blobs in order.
    fn grown_note(dir: &Path, lines: usize) -> Vec<gix::ObjectId> {
        git(dir, &["init", "-q"], None);
        let mut s = String::new();
        let mut text = String::new();
        for k in 1..=lines + 1 {
            if k <= lines {
                text += &format!("{{\"line\":{k},\"pad\":\"{}\"}}\n", "x".repeat(k % 7 * 9));
            } else {
                text = text.replacen("\"line\":1,", "\"line\":0,", 1);
            }
            s += &format!(
                "commit refs/heads/notes\nmark :{k}\ncommitter T <t@x> {} +0000\ndata 1\nc\nM 100644 inline note\ndata {}\n{text}\n",
                1_700_000_000 + k,
                text.len()
            );
        }
        git(dir, &["fast-import", "--quiet"], Some(&s));
        let log = git(dir, &["log", "--reverse", "--format=%H", "notes"], None);
        log.lines()
            .map(|c| {
                let id = git(dir, &["rev-parse", &format!("{c}:note")], None);
                gix::ObjectId::from_hex(id.trim().as_bytes()).unwrap()
            })
            .collect()
    }

    /// Appends are proven from either direction of delta, never where a
    /// blob does not begin with the other, and a chain of appends decodes
    /// as gix decodes it, from nothing or from a blob already held.
    #[test]
    fn appends_are_proven_from_the_deltas_and_only_when_true() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        let blobs = grown_note(dir, 120);
        for repack in [false, true] {
            if repack {
                git(dir, &["repack", "-a", "-d", "-f", "-q", "--depth=50"], None);
            }
            let repo = gix::open(dir).unwrap();
            let data: Vec<Vec<u8>> = blobs
                .iter()
                .map(|id| repo.find_blob(*id).unwrap().detach().data)
                .collect();
            let mut packs = Packs::new(&repo, 0);
            let mut proven = 0;
            for i in 0..blobs.len() - 1 {
                for (a, b) in [(i, i + 1), (i + 1, i)] {
                    let Some(sizes) = packs.extends(blobs[a], blobs[b]) else {
                        continue;
                    };
                    assert!(
                        data[b].starts_with(&data[a]),
                        "{repack}: {a} is not the start of {b}"
                    );
                    assert_eq!(sizes, (data[a].len() as u64, data[b].len() as u64));
                    proven += 1;
                }
                // Not the start of a blob that is not longer.
                assert_eq!(packs.extends(blobs[i + 1], blobs[i]), None);
            }
            // The last commit rewrote the first line: nothing begins with
            // an older blob there.
            let last = blobs.len() - 1;
            for old in [0, last / 2, last - 1] {
                assert_eq!(
                    packs.extends(blobs[old], blobs[last]),
                    None,
                    "{repack}: {old}"
                );
            }
            assert!(proven >= 100, "{repack}: {proven} of 120 appends proven");
            for (i, id) in blobs.iter().enumerate() {
                assert_eq!(
                    packs.blob(&repo, *id, None).unwrap(),
                    data[i],
                    "{repack}: {i}"
                );
                if i > 0 {
                    let known = Some((blobs[i - 1], &data[i - 1][..]));
                    assert_eq!(
                        packs.blob(&repo, *id, known).unwrap(),
                        data[i],
                        "{repack}: {i}"
                    );
                }
            }
            let tree = repo
                .find_commit(repo.rev_parse_single("notes").unwrap().detach())
                .unwrap()
                .tree_id()
                .unwrap()
                .detach();
            assert_eq!(packs.blob(&repo, tree, None), None, "a tree is no blob");
        }
    }

    #[test]
    fn deltas_copy_and_insert_and_refuse_what_does_not_fit() {
        let base = b"hello, world";
        // base size 12, result size 11: copy "hello" (offset 0, size 5),
        // insert " you!" then copy "d" (offset 11, size 1).
        let delta = [
            12, 11, 0x90, 5, 5, b' ', b'y', b'o', b'u', b'!', 0x91, 11, 1,
        ];
        assert_eq!(
            apply_delta(base, &delta).as_deref(),
            Some(&b"hello you!d"[..])
        );
        // Wrong base size, copy past the base, result size mismatch, cmd 0.
        assert_eq!(apply_delta(base, &[11, 5, 0x90, 5]), None);
        assert_eq!(apply_delta(base, &[12, 5, 0x91, 10, 5]), None);
        assert_eq!(apply_delta(base, &[12, 6, 0x90, 5]), None);
        assert_eq!(apply_delta(base, &[12, 1, 0]), None);
    }
}
