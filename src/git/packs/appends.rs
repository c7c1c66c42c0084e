//! Notes that grow by appending, read off their deltas.
//!
//! A note written line by line is a chain of blobs, each its parent plus a
//! line. A pack stores such a chain as deltas: `git fast-import` stores
//! each blob as its predecessor copied whole plus an insert, `git repack`
//! and `git pack-objects` (what a fetch receives) store each older blob as
//! a copy of the start of a newer one. Either way the delta's leading run
//! of copies from offset 0 of its base, each continuing where the last
//! ended, says how many of its first bytes it shares with its base. Those
//! runs prove that one blob begins with another without decoding either
//! ([`Packs::extends`]), and a blob that keeps its whole base is decoded by
//! appending to that base in place ([`Packs::blob`]), so decoding the
//! newest blob of a long chain costs its size, not the chain's.

use std::sync::Arc;

use gix::ObjectId;

use super::{
    MAX_CHAIN, MAX_OBJECT, Packs, Stands, apply_delta, delta_size, inflate, inflate_into,
    run_delta, stands_on,
};

/// The longest chain of deltas [`Packs::extends`] follows.
const MAX_PROOF: usize = 256;

/// The largest delta read for a proof: a delta that only adds a line is
/// small, a larger one is decoded instead.
const MAX_PROOF_DELTA: u64 = 1 << 20;

/// The largest blob [`Packs::blob_into`] keeps in the delta-base cache.
const SMALL_BLOB: usize = 64 << 10;

/// What one pack entry says of its object's first bytes.
#[derive(Debug, Clone, Copy)]
pub(super) struct Link {
    /// The object's size.
    len: u64,
    /// The entry its delta applies to, when it is a delta in the same pack.
    base: Option<u64>,
    /// How many of its first bytes are its base's first bytes.
    kept: u64,
}

impl Packs {
    /// Where `id` is in the packs opened here: (pack, offset).
    pub(super) fn find(&mut self, id: ObjectId) -> Option<(usize, u64)> {
        if let Some(&found) = self.located.get(&id) {
            return Some(found);
        }
        let last = self.last;
        let packs = self.packs();
        let order = std::iter::once(last).chain((0..packs.len()).filter(|&n| n != last));
        order
            .filter_map(|n| Some((n, packs.get(n)?)))
            .find_map(|(n, p)| Some((n, p.index.lookup(id.as_slice())?)))
    }

    /// The [`Link`] of the entry at `at` in pack `n`, read once.
    fn link(&mut self, n: usize, at: u64) -> Option<Link> {
        if let Some(link) = self.links.get(&(n, at)) {
            return *link;
        }
        let link = self.read_link(n, at);
        self.links.insert((n, at), link);
        link
    }

    fn read_link(&mut self, n: usize, at: u64) -> Option<Link> {
        let pack = &self.opened.as_ref()?[n];
        let entry = pack.data.entry(at).ok()?;
        let base = match stands_on(pack, &entry)? {
            Stands::Delta(base) => base,
            Stands::Whole(_) => {
                return Some(Link {
                    len: entry.decompressed_size,
                    base: None,
                    kept: 0,
                });
            }
        };
        if entry.decompressed_size > MAX_PROOF_DELTA {
            return None;
        }
        let delta = inflate(pack, &entry, &mut self.inflate)?;
        let (base_len, len, kept, _) = kept_run(&delta)?;
        (kept <= base_len && kept <= len).then_some(Link {
            len: len as u64,
            base: Some(base),
            kept: kept as u64,
        })
    }

    /// Whether blob `new` begins with every byte of blob `old`, as the
    /// deltas of the pack holding both show, without decoding either:
    /// their sizes when it does. `None` says nothing either way (loose
    /// objects, other packs, a rewritten blob, a chain too long).
    pub fn extends(&mut self, old: ObjectId, new: ObjectId) -> Option<(u64, u64)> {
        let (n, a) = self.find(old)?;
        let (m, b) = self.find(new)?;
        // The next proof asks for `new` as its old blob.
        self.located.insert(new, (m, b));
        if n != m {
            return None;
        }
        let old_len = self.link(n, a)?.len;
        // `old` is the start of `root` (followed while a delta keeps all
        // of its own bytes from its base).
        let mut root = a;
        for _ in 0..MAX_PROOF {
            match self.link(n, root)? {
                Link {
                    base: Some(base),
                    kept,
                    len,
                } if kept == len => root = base,
                _ => break,
            }
        }
        // `new`'s first `shared` bytes are `at`'s, going down its chain.
        let new_len = self.link(n, b)?.len;
        let (mut at, mut shared) = (b, new_len);
        for _ in 0..MAX_PROOF {
            if (at == a || at == root) && old_len <= shared {
                return Some((old_len, new_len));
            }
            let link = self.link(n, at)?;
            shared = shared.min(link.kept);
            if shared < old_len {
                return None;
            }
            at = link.base?;
        }
        None
    }

    /// The bytes of blob `id`, decoded from the packs, or read through gix
    /// when they do not have it, into `out` (whose room is reused: notes
    /// of megabytes read one after the other need no new pages); `None`
    /// when it cannot be read or is not a blob. `known` is another blob
    /// whose bytes the caller holds: a chain of deltas reaching it stops
    /// there. A delta that keeps its whole base is applied by appending to
    /// it in place; nothing is cached.
    pub fn blob_into(
        &mut self,
        repo: &gix::Repository,
        id: ObjectId,
        known: Option<(ObjectId, &[u8])>,
        out: &mut Vec<u8>,
    ) -> Option<()> {
        if self.packed_blob(id, known, out).is_some() {
            return Some(());
        }
        let blob = repo.find_blob(id).ok()?;
        out.clear();
        out.extend_from_slice(&blob.data);
        Some(())
    }

    /// [`Packs::blob_into`] a new buffer.
    pub fn blob(
        &mut self,
        repo: &gix::Repository,
        id: ObjectId,
        known: Option<(ObjectId, &[u8])>,
    ) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        self.blob_into(repo, id, known, &mut out)?;
        Some(out)
    }

    fn packed_blob(
        &mut self,
        id: ObjectId,
        known: Option<(ObjectId, &[u8])>,
        object: &mut Vec<u8>,
    ) -> Option<()> {
        let (n, start) = self.find(id)?;
        let stop = known.and_then(|(k, data)| Some((self.find(k)?, data)));
        let pack = &self.opened.as_ref()?[n];
        // Down the chain to the held blob, a cached one or a whole one.
        let mut chain = Vec::new();
        let mut at = start;
        let cached;
        let base = loop {
            if let Some(((kn, kat), data)) = stop
                && (kn, kat) == (n, at)
            {
                break Err(data);
            }
            if let Some((gix::object::Kind::Blob, hit)) = self.bases.get(n, at) {
                cached = hit;
                break Err(&cached[..]);
            }
            let entry = pack.data.entry(at).ok()?;
            let next = match stands_on(pack, &entry)? {
                Stands::Delta(base) => base,
                Stands::Whole(gix::object::Kind::Blob) => break Ok(entry),
                Stands::Whole(_) => return None,
            };
            if chain.len() == MAX_CHAIN {
                return None;
            }
            chain.push(entry);
            at = next;
        };
        // The newest delta says how large the blob is: room for it first,
        // so that appending never moves it.
        let top = match chain.first() {
            Some(entry) => Some(inflate(pack, entry, &mut self.inflate)?),
            None => None,
        };
        let room = match &top {
            Some(top) => kept_run(top)?.1,
            None => 0,
        };
        object.clear();
        match base {
            Ok(entry) => inflate_into(pack, &entry, &mut self.inflate, room, object)?,
            Err(data) => {
                object.reserve(room.max(data.len()));
                object.extend_from_slice(data);
            }
        }
        let Some(top) = top else {
            return Some(());
        };
        while chain.len() > 1 {
            let entry = chain.pop()?;
            let delta = inflate(pack, &entry, &mut self.inflate)?;
            append_delta(object, &delta)?;
        }
        append_delta(object, &top)?;
        // Small blobs (notes of a line or two, deltas of one another in a
        // pack) are kept for the next one's chain; large ones are notes
        // that grew, read from the one before.
        if object.len() <= SMALL_BLOB {
            self.bases
                .put(n, start, gix::object::Kind::Blob, Arc::new(object.clone()));
        }
        Some(())
    }
}

/// A delta's base size, result size, the length of its leading run of
/// copies that keep their base's bytes in place, and where the
/// instructions after that run start.
fn kept_run(delta: &[u8]) -> Option<(usize, usize, usize, usize)> {
    let mut at = 0;
    let base_len = delta_size(delta, &mut at)?;
    let len = delta_size(delta, &mut at)?;
    let mut kept = 0usize;
    while let Some(&cmd) = delta.get(at) {
        if cmd & 0x80 == 0 {
            break;
        }
        let mut next = at + 1;
        let (offset, size) = copy_fields(delta, cmd, &mut next)?;
        if offset != kept || offset.checked_add(size)? > base_len {
            break;
        }
        kept += size;
        at = next;
    }
    Some((base_len, len, kept, at))
}

/// The offset and size of the copy instruction `cmd` whose fields start
/// at `at` (moved past them).
pub(super) fn copy_fields(delta: &[u8], cmd: u8, at: &mut usize) -> Option<(usize, usize)> {
    let mut field = |bits: u8, shifts: &[u32]| -> Option<usize> {
        let mut value = 0usize;
        for (i, shift) in shifts.iter().enumerate() {
            if bits & (1 << i) != 0 {
                value |= usize::from(*delta.get(*at)?) << shift;
                *at += 1;
            }
        }
        Some(value)
    };
    let offset = field(cmd & 0x0f, &[0, 8, 16, 24])?;
    let size = match field((cmd >> 4) & 0x07, &[0, 8, 16])? {
        0 => 0x10000,
        n => n,
    };
    Some((offset, size))
}

/// `object` (the delta's base) replaced by the delta applied to it: in
/// place when the delta keeps the whole base and only adds after it.
fn append_delta(object: &mut Vec<u8>, delta: &[u8]) -> Option<()> {
    let (base_len, len, kept, at) = kept_run(delta)?;
    if base_len != object.len() || len as u64 > MAX_OBJECT {
        return None;
    }
    if kept != base_len {
        *object = apply_delta(object, delta)?;
        return Some(());
    }
    object.reserve(len.saturating_sub(base_len));
    // The base is the start of `object`: copies read from there.
    run_delta(delta, at, object, len, |out, offset, size| {
        if offset.checked_add(size)? > base_len {
            return None;
        }
        out.extend_from_within(offset..offset + size);
        Some(())
    })
}
