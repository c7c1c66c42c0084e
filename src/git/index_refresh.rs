//! The working tree against the index, as git's fast path takes it: every
//! tracked file's `lstat` compared with its entry, split across threads as
//! git's `preload_index` does (`core.preloadIndex`), and the racily clean
//! entries — a file modified in the same second the index was written
//! (every file of a fresh clone or a large checkout) cannot be trusted by
//! its stat data — read once each, in parallel too, and compared with
//! their entries; then, as `git status` does, the index is written back
//! when its lock is free, so that the next reader trusts those entries by
//! stat alone.

use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use gix::index::entry::Flags;

use crate::support::parallel::{self, Split};

/// git's `preload_index`: a thread per 500 entries, at most 20 (and here
/// no more than the cores).
const STAT_SPLIT: Split = Split {
    per_thread: 500,
    max: 20,
};

/// Reading and hashing a racily clean file costs more than its `lstat`:
/// a thread per 50 of them.
const READ_SPLIT: Split = Split {
    per_thread: 50,
    max: 20,
};

/// How many entries a thread checks between looks at the stop flag.
const STOP_EVERY: usize = 64;

/// Whether every tracked file is unchanged by its `lstat` alone: git's
/// fast path (stat data equal to the index entry's), taken for every entry
/// at the cost of one `lstat` per file and one per directory, on several
/// threads (`core.preloadIndex`, default true, as in git). `Some(racy)`
/// when every entry's stat matches: `racy` are the indices of the entries
/// whose stat cannot be trusted (racily clean: modified in the second the
/// index was written), whose content must be compared. `None` as soon as
/// one entry needs a closer look, and where the shortcut is not trusted
/// (`core.checkStat=minimal`, which compares no inode; case-folding or
/// precomposing filesystems); the full comparison then decides. Entries
/// git skips (skip-worktree, assume-valid) and submodules, which
/// `diff --stat` does not count, are skipped.
pub fn matches_by_stat(repo: &gix::Repository, index: &gix::index::State) -> Option<Vec<usize>> {
    let options = repo.stat_options().ok()?;
    let fs = repo.filesystem_options().ok()?;
    if !options.check_stat || fs.ignore_case || fs.precompose_unicode {
        return None;
    }
    let mut root = gix::path::into_bstr(repo.workdir()?).ok()?.into_owned();
    root.push(b'/');
    let scan = StatScan {
        root: &root,
        index,
        options,
        symlink: fs.symlink,
        executable_bit: fs.executable_bit,
    };
    let preload = repo
        .config_snapshot()
        .boolean("core.preloadIndex")
        .unwrap_or(true);
    let split = if preload {
        STAT_SPLIT
    } else {
        Split {
            max: 1,
            ..STAT_SPLIT
        }
    };
    parallel::all(index.entries().len(), split, |range, stop| {
        scan.part(range, stop)
    })
}

/// What every part of the `lstat` scan shares.
struct StatScan<'a> {
    /// The worktree root, ending in `/`.
    root: &'a [u8],
    index: &'a gix::index::State,
    options: gix::index::entry::stat::Options,
    symlink: bool,
    executable_bit: bool,
}

impl StatScan<'_> {
    /// [`matches_by_stat`] over the entries in `range`.
    fn part(&self, range: Range<usize>, stop: &AtomicBool) -> Option<Vec<usize>> {
        let index = self.index;
        // One buffer for every path: `Path::join` costs more than the `lstat`.
        let mut path = self.root.to_vec();
        let base = path.len();
        let timestamp = index.timestamp();
        let mut verified_dirs: std::collections::HashSet<&[u8]> = Default::default();
        let mut last_dir: &[u8] = b"";
        let mut racy = Vec::new();
        for n in range {
            if n % STOP_EVERY == 0 && stop.load(Ordering::Relaxed) {
                return None;
            }
            let entry = &index.entries()[n];
            if entry.flags.intersects(
                Flags::UPTODATE
                    | Flags::SKIP_WORKTREE
                    | Flags::ASSUME_VALID
                    | Flags::FSMONITOR_VALID,
            ) {
                continue;
            }
            if entry.stage_raw() != 0 || entry.flags.contains(Flags::INTENT_TO_ADD) {
                return None;
            }
            if entry.mode.is_submodule() {
                continue;
            }
            let rela: &[u8] = entry.path(index);
            // Each leading directory must be a directory, not a symlink to
            // one (git does not look through those): checked once per
            // directory.
            let dir = rela
                .iter()
                .rposition(|b| *b == b'/')
                .map_or(&b""[..], |end| &rela[..end]);
            if dir != last_dir {
                if !dirs_are_dirs(dir, &mut path, base, &mut verified_dirs) {
                    return None;
                }
                last_dir = dir;
            }
            path.truncate(base);
            path.extend_from_slice(rela);
            if !self.entry_matches(entry, &path)? {
                return None;
            }
            if entry.stat.is_racy(timestamp, self.options) {
                racy.push(n);
            }
        }
        Some(racy)
    }

    /// Whether the file at `path` matches `entry` by its `lstat`; `None`
    /// when the path cannot be spelled here.
    fn entry_matches(&self, entry: &gix::index::Entry, path: &[u8]) -> Option<bool> {
        let Ok(meta) =
            gix::index::fs::Metadata::from_path_no_follow(gix::path::from_byte_slice(path).ok()?)
        else {
            return Some(false);
        };
        if meta.is_dir()
            || entry
                .mode
                .change_to_match_fs(&meta, self.symlink, self.executable_bit)
                .is_some()
        {
            return Some(false);
        }
        let Ok(stat) = gix::index::entry::Stat::from_fs(&meta) else {
            return Some(false);
        };
        Some(
            stat.matches(&entry.stat, self.options)
                && !(entry.id.is_empty_blob() && entry.stat.size != 0),
        )
    }
}

/// Whether every leading directory of `dir` (a worktree-relative path) is
/// a directory, not a symlink to one; those already verified are skipped.
/// `path` is a buffer whose first `base` bytes are the worktree root.
fn dirs_are_dirs<'p>(
    dir: &'p [u8],
    path: &mut Vec<u8>,
    base: usize,
    verified: &mut std::collections::HashSet<&'p [u8]>,
) -> bool {
    for (i, b) in dir
        .iter()
        .enumerate()
        .chain(std::iter::once((dir.len(), &b'/')))
    {
        if *b != b'/' {
            continue;
        }
        let prefix = &dir[..i];
        if verified.contains(prefix) {
            continue;
        }
        path.truncate(base);
        path.extend_from_slice(prefix);
        let Ok(p) = gix::path::from_byte_slice(path) else {
            return false;
        };
        if !std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()) {
            return false;
        }
        verified.insert(prefix);
    }
    true
}

/// What the index file looked like when it was read: it is written back
/// only if it is still that file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    inode: u64,
}

impl Stamp {
    /// The stamp of the file at `path`, if it exists.
    pub fn of(path: &Path) -> Option<Stamp> {
        let meta = std::fs::metadata(path).ok()?;
        Some(Stamp {
            len: meta.len(),
            modified: meta.modified().ok(),
            inode: inode(&meta),
        })
    }
}

#[cfg(unix)]
fn inode(meta: &std::fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(meta)
}

#[cfg(not(unix))]
fn inode(_: &std::fs::Metadata) -> u64 {
    0
}

/// Whether the files of the `racy` entries (indices into `index`) hold
/// exactly what their entries record, each read once (several threads
/// share them): a file's bytes, or a symlink's target, hashed as a blob.
/// `false` as soon as one differs or
/// cannot be read; the full status (which applies git's filters, where a
/// file's bytes may legitimately differ from its blob) then decides.
pub fn unchanged(repo: &gix::Repository, index: &gix::index::State, racy: &[usize]) -> bool {
    let Some(root) = repo.workdir() else {
        return false;
    };
    let kind = repo.object_hash();
    let same = |n: usize| {
        let entry = &index.entries()[n];
        let Ok(rela) = gix::path::from_bstr(entry.path(index)) else {
            return false;
        };
        let path = root.join(rela);
        let data: Option<Vec<u8>> = if entry.mode == gix::index::entry::Mode::SYMLINK {
            std::fs::read_link(&path)
                .ok()
                .map(|t| t.as_os_str().as_encoded_bytes().to_vec())
        } else {
            std::fs::read(&path).ok()
        };
        data.and_then(|d| gix::objs::compute_hash(kind, gix::object::Kind::Blob, &d).ok())
            == Some(entry.id)
    };
    parallel::all(racy.len(), READ_SPLIT, |range, stop| {
        for (i, &n) in racy[range.clone()].iter().enumerate() {
            if (i % STOP_EVERY == 0 && stop.load(Ordering::Relaxed)) || !same(n) {
                return None;
            }
        }
        Some(Vec::<()>::new())
    })
    .is_some()
}

/// Write the index back (as `git status` refreshes it), so that entries
/// verified clean by content stop being racy: only when there were some,
/// every one of them is older than the current second (else they would be
/// racy in the new index too), the index holds nothing this writer cannot
/// write again (an untracked cache, fsmonitor data, resolve-undo records,
/// a split or sparse index), its lock is free and it is still the file
/// read at `read_at`. Best effort: any failure leaves the index as it was.
pub fn write_back(
    repo: &gix::Repository,
    index: &gix::index::File,
    racy: &[usize],
    read_at: Option<Stamp>,
) {
    if racy.is_empty() || read_at.is_none() || !writable(index) {
        return;
    }
    let Ok(now) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) else {
        return;
    };
    let this_second = u32::try_from(now.as_secs()).unwrap_or(u32::MAX);
    if racy
        .iter()
        .any(|&n| index.entries()[n].stat.mtime.secs >= this_second)
    {
        return;
    }
    let mut data = Vec::with_capacity(64 * 1024);
    if index
        .write_to(&mut data, gix::index::write::Options::default())
        .is_err()
    {
        return;
    }
    let path = repo.index_path();
    let Ok(mut lock) = gix::lock::File::acquire_to_update_resource(
        &path,
        gix::lock::acquire::Fail::Immediately,
        None,
        crate::support::shared::policy_for(&path),
    ) else {
        return;
    };
    // Under the lock no git writes the index: it must still be the file
    // that was read, or another writer's update would be lost.
    if Stamp::of(&path) != read_at {
        return;
    }
    if lock
        .with_mut(|f| std::io::Write::write_all(f, &data))
        .is_ok()
        && lock.commit().is_ok()
    {
        crate::support::shared::adjust(&path);
    }
}

/// Whether writing `index` back keeps everything it holds: gix writes the
/// entries and the cache tree (and the end-of-index entry), nothing else.
fn writable(index: &gix::index::File) -> bool {
    index.link().is_none()
        && index.untracked().is_none()
        && index.fs_monitor().is_none()
        && index.resolve_undo().is_none()
        && !index.is_sparse()
}
