//! The paths a brief records (files to read first, changed files): a line
//! range suffix stripped, and whether a path stays inside the worktree —
//! the one check every reader of a pointed-at file goes through.

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
