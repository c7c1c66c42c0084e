//! Whole-file replacement with git's lock-file protocol: the new content is
//! written to `<path>.lock`, then renamed over `<path>`, so a reader sees
//! the old file or the new one, never a half-written one, and two writers
//! never interleave.

use std::path::Path;
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

fn write_waiting(path: &Path, data: &[u8], wait: Duration) -> Result<()> {
    let mode = if wait.is_zero() {
        gix::lock::acquire::Fail::Immediately
    } else {
        gix::lock::acquire::Fail::AfterDurationWithBackoff(wait)
    };
    let mut lock = gix::lock::File::acquire_to_update_resource(
        path,
        mode,
        None,
        0,
    )
    .map_err(|_| {
        let lock = format!("{}.lock", path.display());
        anyhow!(
            "cannot lock '{}': '{lock}' exists; another process may be writing it. If none is, remove it: rm '{lock}'",
            path.display()
        )
    })?;
    lock.with_mut(|f| std::io::Write::write_all(f, data))
        .with_context(|| format!("cannot write {}.lock", path.display()))?;
    lock.commit()
        .map_err(|e| anyhow!("cannot replace {}: {}", path.display(), e.error))?;
    Ok(())
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
}
