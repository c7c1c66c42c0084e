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
        let timestamp = index.timestamp();
        let mut files = Files::new(self.root)?;
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
            // Each leading directory must be a directory, not a symlink to
            // one (git does not look through those).
            let found = files.lstat(entry.path(index))?;
            if !self.entry_matches(entry, found) {
                return None;
            }
            if entry.stat.is_racy(timestamp, self.options) {
                racy.push(n);
            }
        }
        Some(racy)
    }

    /// Whether the file `found` (its `lstat`, `None` for a missing
    /// file) matches `entry`.
    fn entry_matches(&self, entry: &gix::index::Entry, found: Option<Found>) -> bool {
        let Some(found) = found else {
            return false;
        };
        if found.is_dir
            || entry
                .mode
                .change_to_match_fs_with_values(
                    found.is_file,
                    found.is_dir,
                    found.is_symlink,
                    found.is_executable,
                    self.symlink,
                    self.executable_bit,
                )
                .is_some()
        {
            return false;
        }
        found.stat.matches(&entry.stat, self.options)
            && !(entry.id.is_empty_blob() && entry.stat.size != 0)
    }
}

/// What an `lstat` of a tracked file says, as the comparison with its
/// index entry needs it.
#[derive(Debug, Clone, Copy)]
struct Found {
    stat: gix::index::entry::Stat,
    is_file: bool,
    is_dir: bool,
    is_symlink: bool,
    is_executable: bool,
}

/// The tracked files of one part of the scan, `lstat`ed relative to
/// their directory, kept open while its entries (sorted by path) go by:
/// the kernel then walks one component per file, not the whole path from
/// `/` (that walk was the larger part of the scan's system time). Each
/// directory is opened from its parent without following a symlink, which
/// also checks what git checks: every leading directory is a directory.
#[cfg(unix)]
struct Files {
    root: rustix::fd::OwnedFd,
    /// The open directories of the current path, outermost first: where
    /// each one's name ends in `dir`, and its descriptor.
    open: Vec<(usize, rustix::fd::OwnedFd)>,
    /// The worktree-relative directory `open` leads to.
    dir: Vec<u8>,
}

#[cfg(unix)]
impl Files {
    /// How directories are opened: for lookups only, never through a
    /// symlink.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    const DIR: rustix::fs::OFlags = rustix::fs::OFlags::PATH
        .union(rustix::fs::OFlags::DIRECTORY)
        .union(rustix::fs::OFlags::NOFOLLOW)
        .union(rustix::fs::OFlags::CLOEXEC);
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    const DIR: rustix::fs::OFlags = rustix::fs::OFlags::RDONLY
        .union(rustix::fs::OFlags::DIRECTORY)
        .union(rustix::fs::OFlags::NOFOLLOW)
        .union(rustix::fs::OFlags::CLOEXEC);

    /// The files under the worktree `root` (ending in `/`).
    fn new(root: &[u8]) -> Option<Files> {
        let flags = Files::DIR.difference(rustix::fs::OFlags::NOFOLLOW);
        let root = rustix::fs::open(root, flags, rustix::fs::Mode::empty()).ok()?;
        Some(Files {
            root,
            open: Vec::new(),
            dir: Vec::new(),
        })
    }

    /// The `lstat` of the worktree-relative `path`: `Some(None)` when it
    /// does not exist (or cannot be read), `None` when one of its leading
    /// directories is not a directory.
    fn lstat(&mut self, path: &[u8]) -> Option<Option<Found>> {
        let (dir, name) = match path.iter().rposition(|b| *b == b'/') {
            Some(end) => (&path[..end], &path[end + 1..]),
            None => (&b""[..], path),
        };
        let at = self.enter(dir)?;
        let Ok(st) = rustix::fs::statat(at, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW) else {
            return Some(None);
        };
        Some(Some(found(&st)))
    }

    /// The descriptor of the worktree-relative `dir`, opening what is not
    /// open yet; `None` when a component is not a directory.
    fn enter(&mut self, dir: &[u8]) -> Option<rustix::fd::BorrowedFd<'_>> {
        use rustix::fd::AsFd;
        while let Some(&(end, _)) = self.open.last() {
            let kept = dir.len() >= end
                && dir[..end] == self.dir[..end]
                && (dir.len() == end || dir[end] == b'/');
            if kept {
                break;
            }
            self.open.pop();
        }
        let mut from = self.open.last().map_or(0, |&(end, _)| end + 1);
        self.dir.clear();
        self.dir.extend_from_slice(dir);
        while from < dir.len() {
            let end = dir[from..]
                .iter()
                .position(|b| *b == b'/')
                .map_or(dir.len(), |i| from + i);
            let parent = self
                .open
                .last()
                .map_or(self.root.as_fd(), |(_, fd)| fd.as_fd());
            let fd = rustix::fs::openat(
                parent,
                &dir[from..end],
                Files::DIR,
                rustix::fs::Mode::empty(),
            )
            .ok()?;
            self.open.push((end, fd));
            from = end + 1;
        }
        Some(
            self.open
                .last()
                .map_or(self.root.as_fd(), |(_, fd)| fd.as_fd()),
        )
    }
}

/// An `lstat` as gix's `Stat::from_fs` reads it (times before 1970 as 0,
/// device, inode and size cut to 32 bits, as git does).
#[cfg(unix)]
fn found(st: &rustix::fs::Stat) -> Found {
    use gix::index::entry::stat::Time;
    use rustix::fs::FileType;
    // Seconds cut to 32 bits as gix and git cut them.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let time = |secs: i64, nsecs: i64| {
        if secs < 0 {
            Time::default()
        } else {
            Time {
                secs: secs as u32,
                nsecs: nsecs as u32,
            }
        }
    };
    #[allow(clippy::unnecessary_cast, clippy::cast_possible_wrap)]
    let stat = gix::index::entry::Stat {
        mtime: time(st.st_mtime as i64, st.st_mtime_nsec as i64),
        ctime: time(st.st_ctime as i64, st.st_ctime_nsec as i64),
        dev: st.st_dev as u32,
        ino: st.st_ino as u32,
        uid: st.st_uid as u32,
        gid: st.st_gid as u32,
        size: st.st_size as u32,
    };
    #[allow(clippy::unnecessary_cast)]
    let mode = st.st_mode as u32;
    let kind = FileType::from_raw_mode(mode as rustix::fs::RawMode);
    Found {
        stat,
        is_file: kind == FileType::RegularFile,
        is_dir: kind == FileType::Directory,
        is_symlink: kind == FileType::Symlink,
        is_executable: kind == FileType::RegularFile
            && rustix::fs::Mode::from_raw_mode(mode as rustix::fs::RawMode)
                .contains(rustix::fs::Mode::XUSR),
    }
}

/// Elsewhere, by full paths: each leading directory checked once.
#[cfg(not(unix))]
struct Files {
    root: Vec<u8>,
    verified: std::collections::HashSet<Vec<u8>>,
}

#[cfg(not(unix))]
impl Files {
    fn new(root: &[u8]) -> Option<Files> {
        Some(Files {
            root: root.to_vec(),
            verified: Default::default(),
        })
    }

    fn lstat(&mut self, path: &[u8]) -> Option<Option<Found>> {
        let mut full = self.root.clone();
        for (i, b) in path.iter().enumerate() {
            if *b == b'/' && !self.verified.contains(&path[..i]) {
                full.truncate(self.root.len());
                full.extend_from_slice(&path[..i]);
                let p = gix::path::from_byte_slice(&full).ok()?;
                if !std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()) {
                    return None;
                }
                self.verified.insert(path[..i].to_vec());
            }
        }
        full.truncate(self.root.len());
        full.extend_from_slice(path);
        let p = gix::path::from_byte_slice(&full).ok()?;
        let Ok(meta) = gix::index::fs::Metadata::from_path_no_follow(p) else {
            return Some(None);
        };
        let Ok(stat) = gix::index::entry::Stat::from_fs(&meta) else {
            return Some(None);
        };
        Some(Some(Found {
            stat,
            is_file: meta.is_file(),
            is_dir: meta.is_dir(),
            is_symlink: meta.is_symlink(),
            is_executable: meta.is_executable(),
        }))
    }
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

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// Files in nested directories, visited in index order, are each
    /// found from their own open directory; a directory that is a symlink
    /// is refused, a missing file is missing.
    #[test]
    fn files_are_found_from_their_open_directory() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let paths = [
            "a/b.txt",
            "a/b/c/deep.txt",
            "a/b/c2.txt",
            "a/bc/d.txt",
            "top",
        ];
        for (n, p) in paths.iter().enumerate() {
            std::fs::create_dir_all(root.join(p).parent().unwrap()).unwrap();
            std::fs::write(root.join(p), "x".repeat(n + 1)).unwrap();
        }
        std::os::unix::fs::symlink(root.join("a/b"), root.join("link")).unwrap();
        let mut base = root.as_os_str().as_encoded_bytes().to_vec();
        base.push(b'/');
        let mut files = Files::new(&base).unwrap();
        for _ in 0..2 {
            for (n, p) in paths.iter().enumerate() {
                let found = files.lstat(p.as_bytes()).unwrap().unwrap();
                assert!(found.is_file && !found.is_executable, "{p}");
                assert_eq!(found.stat.size as usize, n + 1, "{p}");
                let meta = gix::index::fs::Metadata::from_path_no_follow(&root.join(p)).unwrap();
                assert_eq!(found.stat, gix::index::entry::Stat::from_fs(&meta).unwrap());
            }
        }
        assert!(files.lstat(b"a/b/c/none").unwrap().is_none());
        assert!(files.lstat(b"link/c2.txt").is_none(), "through a symlink");
        assert!(files.lstat(b"top/x").is_none(), "a file is no directory");
        let found = files.lstat(b"a/b").unwrap().unwrap();
        assert!(found.is_dir);
    }
}
