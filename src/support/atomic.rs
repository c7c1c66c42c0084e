//! Atomic file writes. Whole-file replacement uses git's lock-file
//! protocol: the new content is written to `<path>.lock`, then renamed over
//! `<path>`, so a reader sees the old file or the new one, never a
//! half-written one, and two writers never interleave. New files are staged
//! in a temporary file beside them and renamed into place without replacing
//! anything; moves never replace a file either.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, anyhow};

/// How long to wait for another writer's lock on the same file.
const LOCK_WAIT: Duration = Duration::from_secs(5);

/// Replace the file at `path` with `data` atomically, creating it if it is
/// missing. The parent directory must exist. A symlink at `path` is
/// replaced by the file, never followed.
pub fn write(path: &Path, data: &[u8]) -> Result<()> {
    write_waiting(path, data, LOCK_WAIT)
}

/// Like [`write`], but give up at once when another writer holds the lock
/// (for caches, where a lost update only costs a recomputation).
pub fn write_unless_locked(path: &Path, data: &[u8]) -> Result<()> {
    write_waiting(path, data, Duration::ZERO)
}

fn write_waiting(path: &Path, data: &[u8], wait: Duration) -> Result<()> {
    // The lock is git-handoff's own: it records its owner, and one a killed
    // writer left is taken over (`owned_lock`); the new content waits in a
    // file beside it and is renamed into place.
    let lock_path = PathBuf::from(format!("{}.lock", path.display()));
    let _lock = super::owned_lock::Owned::acquire(&lock_path, wait)
        .map_err(|err| anyhow!("cannot lock '{}': {err}", path.display()))?;
    let dir = parent(path)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".git-handoff-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
    tmp.write_all(data)
        .with_context(|| format!("cannot write a temporary file in {}", dir.display()))?;
    tmp.persist(path)
        .map_err(|e| anyhow!("cannot replace {}: {}", path.display(), e.error))?;
    super::shared::adjust(path);
    Ok(())
}

/// Why [`create_new`] did not create the file.
#[derive(Debug, thiserror::Error)]
pub enum CreateError {
    /// A file of that name exists already; it was left untouched.
    #[error("'{0}' exists already")]
    Exists(PathBuf),
    /// Anything else.
    #[error(transparent)]
    Other(#[from] anyhow::Error),
}

fn staged(dir: &Path, content: &str) -> Result<tempfile::NamedTempFile> {
    let mut tmp = tempfile::Builder::new()
        .prefix(".git-handoff-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
    tmp.write_all(content.as_bytes())
        .and_then(|()| tmp.as_file().sync_all())
        .with_context(|| format!("cannot write a temporary file in {}", dir.display()))?;
    Ok(tmp)
}

/// Create `path` with `content`, atomically, refusing to replace an
/// existing file ([`CreateError::Exists`]). The file is readable by its
/// owner only, as temporary files are.
pub fn create_new(path: &Path, content: &str) -> Result<(), CreateError> {
    let dir = parent(path)?;
    let tmp = staged(dir, content)?;
    match tmp.persist_noclobber(path) {
        Ok(_) => {
            super::shared::adjust(path);
            Ok(())
        }
        Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => {
            Err(CreateError::Exists(path.to_path_buf()))
        }
        Err(e) => Err(anyhow!("cannot create {}: {}", path.display(), e.error).into()),
    }
}

/// Move `from` to `to` without replacing an existing `to`
/// ([`CreateError::Exists`]): a hard link then an unlink, so the file is
/// never missing from both places.
pub fn move_new(from: &Path, to: &Path) -> Result<(), CreateError> {
    match std::fs::hard_link(from, to) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(CreateError::Exists(to.to_path_buf()));
        }
        // No hard links on this file system: check, then rename.
        Err(_) if !to.exists() => std::fs::rename(from, to)
            .with_context(|| format!("cannot move {} to {}", from.display(), to.display()))?,
        Err(e) => {
            return Err(anyhow!("cannot move {} to {}: {e}", from.display(), to.display()).into());
        }
    }
    if from.exists() {
        std::fs::remove_file(from)
            .with_context(|| format!("cannot remove {} after moving it", from.display()))?;
    }
    Ok(())
}

fn parent(path: &Path) -> Result<&Path> {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .ok_or_else(|| anyhow!("'{}' has no directory", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_content_and_leaves_no_lock() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.json");
        write(&path, b"one\n").unwrap();
        write(&path, b"two\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two\n");
        assert!(!dir.path().join("f.json.lock").exists());
    }

    #[test]
    fn a_held_lock_is_reported_with_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.json");
        std::fs::write(dir.path().join("f.json.lock"), b"").unwrap();
        let err = format!(
            "{:#}",
            write_waiting(&path, b"x", Duration::ZERO).unwrap_err()
        );
        assert!(err.contains("rm '"), "{err}");
        assert!(!path.exists());
    }

    #[test]
    fn create_new_refuses_to_replace() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.md");
        create_new(&path, "one").unwrap();
        assert!(matches!(
            create_new(&path, "two"),
            Err(CreateError::Exists(_))
        ));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "one");
        write(&path, b"three").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "three");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "no temporary file left behind");
    }

    #[test]
    fn move_new_keeps_an_existing_target() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, "a").unwrap();
        std::fs::write(&b, "b").unwrap();
        assert!(matches!(move_new(&a, &b), Err(CreateError::Exists(_))));
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "a");
        std::fs::remove_file(&b).unwrap();
        move_new(&a, &b).unwrap();
        assert!(!a.exists());
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "a");
    }
}
