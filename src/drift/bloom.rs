//! Changed-path Bloom filters of the commit-graph (the `BIDX` and `BDAT`
//! chunks that `git commit-graph write --changed-paths` adds), which gix
//! does not read. A filter answers, for one commit and one path, "definitely
//! not changed against the first parent" or "maybe"; only the first answer
//! is ever used, and a maybe is settled by comparing trees.
//!
//! The format is git's (its commit-graph format documentation; `bloom.c`
//! is the reference): per layer of the graph, `BIDX` holds for each commit,
//! in the layer's id order, the end offset of its filter in `BDAT`; `BDAT`
//! starts with the settings the filters were built with (hash version,
//! number of hashes, bits per entry) and holds the filters. The settings are
//! read from each layer, never assumed.

use std::path::{Path, PathBuf};

/// The hash settings of one layer's filters (`BDAT`'s header).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Settings {
    /// 1: git's first Murmur3, which sign-extends bytes ≥ 0x80 (a bug kept
    /// for the filters written with it); 2: the fixed one.
    pub hash_version: u32,
    /// How many bit positions a path sets.
    pub num_hashes: u32,
    /// Bits per changed path the filters were sized with (informational).
    pub bits_per_entry: u32,
}

/// A path's bit positions under some [`Settings`]: `hash0 + i * hash1`.
#[derive(Debug, Clone)]
pub struct Key {
    hashes: Vec<u32>,
}

impl Key {
    /// The key of `path` (bytes as stored in trees, no leading or trailing
    /// slash) under `settings`.
    pub fn new(path: &[u8], settings: Settings) -> Key {
        let (h0, h1) = match settings.hash_version {
            1 => (
                murmur3(0x293a_e76f, path, true),
                murmur3(0x7e64_6e2c, path, true),
            ),
            _ => (
                murmur3(0x293a_e76f, path, false),
                murmur3(0x7e64_6e2c, path, false),
            ),
        };
        Key {
            hashes: (0..settings.num_hashes)
                .map(|i| h0.wrapping_add(i.wrapping_mul(h1)))
                .collect(),
        }
    }
}

/// The keys git looks up for `path` (components joined by `/`): the path
/// and each of its leading directories, as git adds every directory of a
/// changed path to the filter.
pub fn path_keys(components: &[&str], settings: Settings) -> Vec<Key> {
    (1..=components.len())
        .map(|n| Key::new(components[..n].join("/").as_bytes(), settings))
        .collect()
}

/// Whether `filter` says the path of `keys` (from [`path_keys`]) is
/// definitely unchanged: one of its keys is definitely absent.
pub fn definitely_not(filter: &[u8], keys: &[Key]) -> bool {
    keys.iter().any(|k| !may_contain(filter, k))
}

/// Murmur3 (32-bit) as git's `bloom.c` computes it. With `signed`, each
/// byte is widened as a C `signed char` would be (version 1 of the hash).
pub fn murmur3(seed: u32, data: &[u8], signed: bool) -> u32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let widen = |b: u8| {
        if signed {
            b as i8 as i32 as u32
        } else {
            b as u32
        }
    };
    let mut h = seed;
    let mut chunks = data.chunks_exact(4);
    for c in &mut chunks {
        let k = widen(c[0]) | widen(c[1]) << 8 | widen(c[2]) << 16 | widen(c[3]) << 24;
        h ^= k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
        h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        let mut k = 0u32;
        for (i, b) in tail.iter().enumerate().rev() {
            k ^= widen(*b) << (8 * i);
        }
        h ^= k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
    }
    h ^= data.len() as u32;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// Whether `filter` may contain `key`: `false` is definite; an empty filter
/// knows nothing (`true`).
pub fn may_contain(filter: &[u8], key: &Key) -> bool {
    let bits = filter.len() as u64 * 8;
    if bits == 0 {
        return true;
    }
    key.hashes.iter().all(|h| {
        let pos = u64::from(*h) % bits;
        filter[(pos / 8) as usize] & (1 << (pos % 8)) != 0
    })
}

/// One layer of the graph: its commits' filters, if it has any.
struct Layer {
    data: memmap2::Mmap,
    commits: u32,
    /// `BIDX`'s and `BDAT`'s filter area byte ranges, and the settings.
    filters: Option<(std::ops::Range<usize>, std::ops::Range<usize>, Settings)>,
}

/// The filters of every layer of a commit-graph, addressed by the graph
/// positions gix uses (layers in chain order, base first).
pub struct Filters {
    layers: Vec<Layer>,
}

impl Filters {
    /// Open the filters of the commit-graph `graph` was read from (in the
    /// objects directory `objects`). `None` when no layer has filters, or
    /// when the files on disk are not the ones `graph` was read from (a
    /// concurrent `git commit-graph write`): the walk then compares trees.
    pub fn open(objects: &Path, graph: &gix::commitgraph::Graph) -> Option<Filters> {
        let info = objects.join("info");
        let single = info.join("commit-graph");
        let paths: Vec<PathBuf> = if single.is_file() {
            vec![single]
        } else {
            let dir = info.join("commit-graphs");
            std::fs::read_to_string(dir.join("commit-graph-chain"))
                .ok()?
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| dir.join(format!("graph-{}.graph", l.trim())))
                .collect()
        };
        let hash_len = graph.object_hash().len_in_bytes();
        let mut layers = Vec::with_capacity(paths.len());
        let mut start = 0u32;
        for path in paths {
            let layer = Layer::open(&path, hash_len, graph, start)?;
            start = start.checked_add(layer.commits)?;
            layers.push(layer);
        }
        (start == graph.num_commits() && layers.iter().any(|l| l.filters.is_some()))
            .then_some(Filters { layers })
    }

    /// Each layer's filter settings, base first (`None`: no filters).
    pub fn settings(&self) -> Vec<Option<Settings>> {
        self.layers
            .iter()
            .map(|l| l.filters.as_ref().map(|f| f.2))
            .collect()
    }

    /// The filter of the commit at graph position `pos` and its layer's
    /// settings; `None` when that commit has none (its layer was written
    /// without filters, or its filter was not computed).
    pub fn filter(&self, pos: u32) -> Option<(&[u8], Settings)> {
        let mut local = pos;
        for layer in &self.layers {
            if local < layer.commits {
                return layer.filter(local);
            }
            local -= layer.commits;
        }
        None
    }
}

fn be32(data: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(data.get(at..at + 4)?.try_into().ok()?))
}

impl Layer {
    /// Map one graph file and find its chunks; checks that its first and
    /// last ids are the graph's at the same positions.
    fn open(
        path: &Path,
        hash_len: usize,
        graph: &gix::commitgraph::Graph,
        start: u32,
    ) -> Option<Layer> {
        let file = std::fs::File::open(path).ok()?;
        // SAFETY: git replaces commit-graph files by renaming a new file
        // over them, never by writing in place, so the mapped file does not
        // change under us; this is how gix maps the same files.
        let data = unsafe { memmap2::Mmap::map(&file) }.ok()?;
        if data.len() < 8 || &data[0..4] != b"CGPH" || data[4] != 1 {
            return None;
        }
        let chunks = usize::from(data[6]);
        let mut table = Vec::with_capacity(chunks + 1);
        for i in 0..=chunks {
            let at = 8 + 12 * i;
            let id: [u8; 4] = data.get(at..at + 4)?.try_into().ok()?;
            let offset = u64::from_be_bytes(data.get(at + 4..at + 12)?.try_into().ok()?);
            table.push((id, usize::try_from(offset).ok()?));
        }
        let chunk = |want: &[u8; 4]| {
            let i = table.iter().position(|(id, _)| id == want)?;
            let (start, end) = (table[i].1, table.get(i + 1)?.1);
            (start <= end && end <= data.len()).then_some(start..end)
        };
        let fan = chunk(b"OIDF")?;
        let commits = be32(&data, fan.start + 255 * 4)?;
        let ids = chunk(b"OIDL")?;
        if commits > 0 {
            let last = commits - 1;
            let first_id = data.get(ids.start..ids.start + hash_len)?;
            let at = ids.start + last as usize * hash_len;
            let last_id = data.get(at..at + hash_len)?;
            let end = start.checked_add(last)?;
            if end >= graph.num_commits()
                || graph.id_at(gix::commitgraph::Position(start)).as_bytes() != first_id
                || graph.id_at(gix::commitgraph::Position(end)).as_bytes() != last_id
            {
                return None;
            }
        }
        let filters = (|| {
            let index = chunk(b"BIDX")?;
            let bdat = chunk(b"BDAT")?;
            if index.len() != commits as usize * 4 || bdat.len() < 12 {
                return None;
            }
            let settings = Settings {
                hash_version: be32(&data, bdat.start)?,
                num_hashes: be32(&data, bdat.start + 4)?,
                bits_per_entry: be32(&data, bdat.start + 8)?,
            };
            matches!(settings.hash_version, 1 | 2).then_some((
                index,
                bdat.start + 12..bdat.end,
                settings,
            ))
        })();
        Some(Layer {
            data,
            commits,
            filters,
        })
    }

    fn filter(&self, local: u32) -> Option<(&[u8], Settings)> {
        let (index, area, settings) = self.filters.as_ref()?;
        let end = be32(&self.data, index.start + 4 * local as usize)? as usize;
        let start = match local {
            0 => 0,
            _ => be32(&self.data, index.start + 4 * (local as usize - 1))? as usize,
        };
        if start >= end || area.start + end > area.end {
            return None;
        }
        Some((&self.data[area.start + start..area.start + end], *settings))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn murmur3_matches_the_reference_and_version_one_sign_extends() {
        // Reference vectors of Murmur3_x86_32.
        assert_eq!(murmur3(0, b"", false), 0);
        assert_eq!(murmur3(1, b"", false), 0x514e_28b7);
        assert_eq!(murmur3(0, b"test", false), 0xba6b_d213);
        assert_eq!(murmur3(0x9747_b28c, b"Hello, world!", false), 0x2488_4cba);
        assert_eq!(
            murmur3(
                0x9747_b28c,
                b"The quick brown fox jumps over the lazy dog",
                false
            ),
            0x2fa8_26cd
        );
        // ASCII: both versions agree; bytes >= 0x80: they differ.
        assert_eq!(
            murmur3(7, b"src/a.rs", true),
            murmur3(7, b"src/a.rs", false)
        );
        assert_ne!(
            murmur3(7, "é.txt".as_bytes(), true),
            murmur3(7, "é.txt".as_bytes(), false)
        );
    }

    #[test]
    fn a_key_not_set_is_definitely_not_contained() {
        let settings = Settings {
            hash_version: 2,
            num_hashes: 7,
            bits_per_entry: 10,
        };
        let key = Key::new(b"a/b", settings);
        let mut filter = vec![0u8; 4];
        assert!(!may_contain(&filter, &key));
        for h in &key.hashes {
            let pos = u64::from(*h) % 32;
            filter[(pos / 8) as usize] |= 1 << (pos % 8);
        }
        assert!(may_contain(&filter, &key));
        assert!(may_contain(&[], &key), "an empty filter knows nothing");
        assert!(
            may_contain(&[0xff], &key),
            "git's filter for too many changes"
        );
    }
}
