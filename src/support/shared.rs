//! `core.sharedRepository`: the permissions of every file and folder
//! created under a shared git dir, as git's `adjust_shared_perm` sets them
//! (group or everybody read/write, folders searchable and set-group-id),
//! so that a teammate's own git can go on writing where this one did.
//!
//! The policy is the process's: set once when the repository is opened
//! ([`set_policy`], with the git dirs it covers), applied by whoever
//! creates a file there ([`adjust`], [`adjust_up_to`]); files outside
//! those git dirs (the worktree's) keep the umask's permissions. `0`
//! (git's `umask`, the default) changes nothing.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The policy and the git dirs it applies to.
static SHARED: Mutex<Option<(i32, Vec<PathBuf>)>> = Mutex::new(None);

/// git's `PERM_GROUP`.
const GROUP: i32 = 0o660;
/// git's `PERM_EVERYBODY`.
const EVERYBODY: i32 = 0o664;

/// Parse a `core.sharedRepository` value as git does: `umask`/`false`
/// (0), `group`/`true` (group read/write), `all`/`world`/`everybody`
/// (also world readable), `0`/`1`/`2`, or an octal file mode (`0640`),
/// returned negated as git keeps it. `None` for a value git refuses (the
/// owner must keep read and write).
pub fn parse_policy(value: Option<&str>) -> Option<i32> {
    let Some(value) = value else {
        // A bare `sharedRepository` key is a boolean true.
        return Some(GROUP);
    };
    let lower = value.trim().to_ascii_lowercase();
    match lower.as_str() {
        "" | "umask" | "false" | "no" | "off" => return Some(0),
        "group" | "true" | "yes" | "on" => return Some(GROUP),
        "all" | "world" | "everybody" => return Some(EVERYBODY),
        _ => {}
    }
    let mode = i32::from_str_radix(&lower, 8).ok()?;
    match mode {
        0 => Some(0),
        1 => Some(GROUP),
        2 => Some(EVERYBODY),
        m if m & 0o600 == 0o600 => Some(-(m & 0o666)),
        _ => None,
    }
}

/// Set this process's policy (see [`parse_policy`]) for the files under
/// `git_dirs`.
pub fn set_policy(policy: i32, git_dirs: Vec<PathBuf>) {
    if let Ok(mut shared) = SHARED.lock() {
        *shared = (policy != 0).then_some((policy, git_dirs));
    }
}

/// The policy for a file at `path`: this process's, when `path` is under
/// one of its git dirs; else 0.
pub fn policy_for(path: &Path) -> i32 {
    match SHARED.lock().ok().as_deref() {
        Some(Some((policy, dirs))) if dirs.iter().any(|d| path.starts_with(d)) => *policy,
        _ => 0,
    }
}

/// The mode git gives a file or folder of mode `mode` under `policy`
/// (git's `calc_shared_perm`, and for folders `adjust_shared_perm`'s
/// search bits and set-group-id).
pub fn shared_mode(mode: u32, is_dir: bool, policy: i32) -> u32 {
    if policy == 0 {
        return mode;
    }
    let mut tweak = policy.unsigned_abs();
    if mode & 0o200 == 0 {
        tweak &= !0o222;
    }
    if mode & 0o100 != 0 {
        tweak |= (tweak & 0o444) >> 2;
    }
    let mut new = if policy < 0 {
        (mode & !0o777) | tweak
    } else {
        mode | tweak
    };
    if is_dir {
        new |= (new & 0o444) >> 2;
        if new & 0o060 != 0 {
            new |= 0o2000;
        }
    }
    new
}

/// Give `path` the permissions the policy asks, as git does after creating
/// a file or folder. Best effort: a file another user owns is left as it is.
pub fn adjust(path: &Path) {
    let policy = policy_for(path);
    if policy == 0 {
        return;
    }
    adjust_with(path, policy);
}

#[cfg(unix)]
fn adjust_with(path: &Path, policy: i32) {
    use std::os::unix::fs::PermissionsExt;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return;
    };
    if meta.file_type().is_symlink() {
        return;
    }
    let mode = meta.permissions().mode() & 0o7777;
    let new = shared_mode(mode, meta.is_dir(), policy);
    if new != mode {
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(new));
    }
}

#[cfg(not(unix))]
fn adjust_with(_: &Path, _: i32) {}

/// [`adjust`] `path` and each folder between it and `base` (not `base`
/// itself): what creating `path` may have created.
pub fn adjust_up_to(base: &Path, path: &Path) {
    if policy_for(path) == 0 {
        return;
    }
    let mut at = Some(path);
    while let Some(p) = at {
        if p == base || !p.starts_with(base) {
            break;
        }
        adjust(p);
        at = p.parent();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_read_as_git_reads_them() {
        assert_eq!(parse_policy(Some("group")), Some(0o660));
        assert_eq!(parse_policy(Some("true")), Some(0o660));
        assert_eq!(parse_policy(None), Some(0o660));
        assert_eq!(parse_policy(Some("all")), Some(0o664));
        assert_eq!(parse_policy(Some("2")), Some(0o664));
        assert_eq!(parse_policy(Some("umask")), Some(0));
        assert_eq!(parse_policy(Some("0640")), Some(-0o640));
        assert_eq!(parse_policy(Some("0440")), None);
    }

    #[test]
    fn modes_are_git_s() {
        // A ref file 0644 and a folder 0755 in a group-shared repository.
        assert_eq!(shared_mode(0o644, false, 0o660), 0o664);
        assert_eq!(shared_mode(0o755, true, 0o660), 0o2775);
        // A loose object stays read-only.
        assert_eq!(shared_mode(0o444, false, 0o660), 0o444);
        // An explicit mode replaces the bits: 0640 makes others lose read.
        assert_eq!(shared_mode(0o644, false, -0o640), 0o640);
        assert_eq!(shared_mode(0o755, true, -0o640), 0o2750);
        assert_eq!(shared_mode(0o600, false, 0), 0o600);
    }
}
