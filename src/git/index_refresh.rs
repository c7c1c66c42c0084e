//! Racily clean index entries, as git treats them: a file modified in the
//! same second the index was written (every file of a fresh clone or a
//! large checkout) cannot be trusted by its stat data, so its content is
//! read once and compared with the entry; and, as `git status` does, the
//! index is then written back when its lock is free, so that the next
//! reader trusts those entries by stat alone.

use std::path::Path;

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
/// exactly what their entries record, each read once: a file's bytes, or a
/// symlink's target, hashed as a blob. `false` as soon as one differs or
/// cannot be read; the full status (which applies git's filters, where a
/// file's bytes may legitimately differ from its blob) then decides.
pub fn unchanged(repo: &gix::Repository, index: &gix::index::State, racy: &[usize]) -> bool {
    let Some(root) = repo.workdir() else {
        return false;
    };
    let kind = repo.object_hash();
    racy.iter().all(|&n| {
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
    })
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
