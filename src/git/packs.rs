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

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;

use gix::ObjectId;
use gix::odb::pack;

/// A decoded object's bytes, shared between the cache and its readers.
pub type Bytes = Arc<Vec<u8>>;

/// The packs of one object database, opened on the first read.
pub struct Packs {
    dir: PathBuf,
    hash: gix::hash::Kind,
    opened: Option<Vec<Pack>>,
    bases: Bases,
    inflate: gix::zlib::Inflate,
}

struct Pack {
    index: pack::index::File,
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
            bases: Bases {
                cap: cache_bytes,
                ..Bases::default()
            },
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

    /// `id` decoded from the packs opened here, when one has it and it
    /// decodes.
    fn packed(&mut self, id: ObjectId) -> Option<(gix::object::Kind, Bytes)> {
        if self.opened.is_none() {
            self.opened = Some(open_packs(&self.dir, self.hash));
        }
        let packs = self.opened.as_ref().expect("opened");
        let (n, offset) = packs.iter().enumerate().find_map(|(n, p)| {
            let i = p.index.lookup(id)?;
            Some((n, p.index.pack_offset_at_index(i)))
        })?;
        self.decode(n, offset)
    }

    /// The object at `offset` in pack `n`: down its delta chain to a cached
    /// or whole base, then up again applying each delta, caching every
    /// object met on the way up.
    fn decode(&mut self, n: usize, offset: u64) -> Option<(gix::object::Kind, Bytes)> {
        use pack::data::entry::Header;
        let pack = &self.opened.as_ref().expect("opened")[n];
        let mut chain = Vec::new();
        let mut at = offset;
        let (kind, mut object) = loop {
            if let Some(hit) = self.bases.get(n, at) {
                break hit;
            }
            let entry = pack.data.entry(at).ok()?;
            let next = match entry.header {
                Header::OfsDelta { base_distance } => {
                    entry.checked_base_pack_offset(base_distance)?
                }
                Header::RefDelta { base_id } => pack
                    .index
                    .lookup(base_id)
                    .map(|i| pack.index.pack_offset_at_index(i))?,
                header => {
                    let kind = header.as_kind()?;
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

/// Every pack of the directory whose index and data open; the rest are
/// left to gix.
fn open_packs(dir: &std::path::Path, hash: gix::hash::Kind) -> Vec<Pack> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "idx"))
        .filter_map(|idx| {
            let index = pack::index::File::at(&idx, hash).ok()?;
            let data = pack::data::File::at(idx.with_extension("pack"), hash).ok()?;
            Some(Pack { index, data })
        })
        .collect()
}

/// The inflated data of one pack entry: a whole object or a delta.
fn inflate(
    pack: &Pack,
    entry: &pack::data::Entry,
    inflate: &mut gix::zlib::Inflate,
) -> Option<Vec<u8>> {
    if entry.decompressed_size > MAX_OBJECT {
        return None;
    }
    let mut out = vec![0; usize::try_from(entry.decompressed_size).ok()?];
    pack.data.decompress_entry(entry, inflate, &mut out).ok()?;
    Some(out)
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
    while let Some(&cmd) = delta.get(at) {
        at += 1;
        if cmd & 0x80 != 0 {
            // Copy: which offset and size bytes follow is in the low bits.
            let mut field = |bits: u8, shifts: &[u32]| -> Option<usize> {
                let mut value = 0usize;
                for (i, shift) in shifts.iter().enumerate() {
                    if bits & (1 << i) != 0 {
                        value |= usize::from(*delta.get(at)?) << shift;
                        at += 1;
                    }
                }
                Some(value)
            };
            let offset = field(cmd & 0x0f, &[0, 8, 16, 24])?;
            let len = match field((cmd >> 4) & 0x07, &[0, 8, 16])? {
                0 => 0x10000,
                n => n,
            };
            out.extend_from_slice(base.get(offset..offset.checked_add(len)?)?);
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
    (out.len() == size).then_some(out)
}

/// Decoded objects by (pack, offset), least recently put evicted first
/// once they hold more than `cap` bytes.
#[derive(Default)]
struct Bases {
    map: HashMap<(usize, u64), (gix::object::Kind, Bytes)>,
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
    use std::path::Path;
    use std::process::{Command, Stdio};

    fn git(dir: &Path, args: &[&str], stdin: Option<&str>) -> String {
        let mut child = Command::new("git")
            .current_dir(dir)
            .args(args)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        if let Some(input) = stdin {
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(input.as_bytes())
                .unwrap();
        }
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8(out.stdout).unwrap()
    }

    /// A `git fast-import` stream: 60 commits over 40 files in 4
    /// directories, one file changed a commit.
    fn stream() -> String {
        let mut s = String::new();
        for k in 1..=60 {
            s += &format!(
                "commit refs/heads/main\nmark :{k}\ncommitter T <t@x> {} +0000\ndata 1\nc\n",
                1_700_000_000 + k
            );
            let files: Vec<usize> = if k == 1 {
                (0..40).collect()
            } else {
                vec![k * 7 % 40]
            };
            for f in files {
                let body = format!("file {f} at {k}\n");
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
        git(dir, &["fast-import", "--quiet"], Some(&stream()));
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
            for cap in [16 << 20, 300, 0] {
                let mut packs = Packs::new(&repo, cap);
                for line in listing.lines().rev() {
                    let id = gix::ObjectId::from_hex(&line.as_bytes()[..40]).unwrap();
                    let (kind, data) = packs.packed(id).expect("read from the pack");
                    let want = repo.find_object(id).unwrap();
                    assert_eq!((kind, data.as_slice()), (want.kind, &want.data[..]), "{id}");
                }
            }
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
