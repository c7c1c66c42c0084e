//! The paths a brief records (files to read first, changed files): a line
//! range suffix stripped, and whether a path stays inside the worktree —
//! the one check every reader of a pointed-at file goes through.

use std::borrow::Cow;
use std::path::{Component, Path, PathBuf};

/// `src/a.rs:10-20` → `src/a.rs`, when the suffix is a line range.
pub fn strip_lines(path: &str) -> &str {
    match path.rsplit_once(':') {
        Some((p, lines))
            if !p.is_empty()
                && !lines.is_empty()
                && lines
                    .chars()
                    .all(|c| c.is_ascii_digit() || c == '-' || c == ',') =>
        {
            p
        }
        _ => path,
    }
}

/// Whether a recorded path leaves the worktree (absolute or through `..`).
pub fn path_outside(path: &str) -> bool {
    let p = Path::new(path);
    p.is_absolute()
        || p.components().any(|c| {
            matches!(
                c,
                Component::ParentDir | Component::RootDir | Component::Prefix(_)
            )
        })
}

/// Where a recorded path really is (symlinks followed), when it exists and
/// stays inside `root`; `None` when it is missing or leads out of the
/// worktree, also through a symlink. Whoever reads a pointed-at file reads
/// it through this.
pub fn resolve_inside(root: &Path, path: &str) -> Option<PathBuf> {
    if path_outside(path) {
        return None;
    }
    let real = root.join(path).canonicalize().ok()?;
    let real_root = root.canonicalize().ok()?;
    real.starts_with(&real_root).then_some(real)
}

/// A recorded path as the worktree-relative path it is: an absolute path
/// under one of `roots` (the worktree it was written in, the one it is
/// checked in) is checked like the relative one, never called outside.
pub fn relative_to<'p>(roots: &[&Path], recorded: &'p str) -> Cow<'p, str> {
    let path = Path::new(recorded);
    if path.is_absolute() {
        for root in roots {
            if let Ok(rest) = path.strip_prefix(root)
                && let Some(rest) = rest.to_str().filter(|r| !r.is_empty())
            {
                return Cow::Owned(rest.to_string());
            }
        }
    }
    Cow::Borrowed(recorded)
}

/// Whether an absolute path exists, checked as it is (its metadata: an
/// existence check reads nothing), a line range ignored; `None` for a
/// relative path. Resume's `!! MISSING` and lint's dangling pointer both
/// use it for absolute paths outside the worktree (after [`relative_to`]).
pub fn absolute_exists(recorded: &str) -> Option<bool> {
    let path = strip_lines(recorded);
    if !Path::new(path).is_absolute() {
        return None;
    }
    Some(
        Path::new(recorded).symlink_metadata().is_ok()
            || Path::new(path).symlink_metadata().is_ok(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_paths_are_checked_as_they_are() {
        let dir = std::env::temp_dir();
        let file = dir.join(format!("paths-{}", std::process::id()));
        std::fs::write(&file, "x").unwrap();
        let recorded = format!("{}:1-2", file.display());
        assert_eq!(absolute_exists(&recorded), Some(true));
        std::fs::remove_file(&file).unwrap();
        assert_eq!(absolute_exists(&recorded), Some(false));
        assert_eq!(absolute_exists("src/a.rs"), None);
        assert_eq!(
            relative_to(&[dir.as_path()], &recorded),
            format!("paths-{}:1-2", std::process::id())
        );
        assert_eq!(relative_to(&[Path::new("/elsewhere")], "/srv/a"), "/srv/a");
    }
}
