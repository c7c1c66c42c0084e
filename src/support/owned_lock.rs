//! Lock files that are git-handoff's own (not git's `index.lock`,
//! `packed-refs.lock` or ref locks, which keep git's rule: name the lock and
//! the `rm` that clears it). An owned lock records its owner — process id,
//! host and the process's start time — so that a lock left by a process
//! that was killed is taken over instead of blocking every later command:
//! a lock is taken over only when its owner is provably dead (same host,
//! and its process is gone, or its id now belongs to a process started at
//! another time, or the machine was restarted since). Anything else (another
//! host, a lock without a readable owner, a live owner) is waited for, and
//! then named.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A held lock; released (the file removed) when dropped.
#[derive(Debug)]
pub struct Owned {
    path: PathBuf,
    record: String,
    taken_over: Option<String>,
}

/// Why a lock could not be taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LockError {
    /// A live process (or one on another host) holds it.
    #[error(
        "'{path}' is held by process {pid} on {host}; wait for it to finish. If it is not running, remove the lock: rm '{path}'"
    )]
    Held {
        /// The lock file.
        path: String,
        /// Its owner's process id.
        pid: u32,
        /// Its owner's host.
        host: String,
    },
    /// The lock names no owner (an older version, or another program).
    #[error("'{path}' exists; another process may be running. If none is, remove it: rm '{path}'")]
    Unowned {
        /// The lock file.
        path: String,
    },
    /// The lock file could not be created.
    #[error("cannot create '{path}': {reason}")]
    Io {
        /// The lock file.
        path: String,
        /// Why.
        reason: String,
    },
}

/// Who holds a lock, as its file records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    /// Process id.
    pub pid: u32,
    /// Host name.
    pub host: String,
    /// The process's start time (clock ticks since boot), when known.
    pub start: Option<u64>,
    /// The boot the process ran in, when known.
    pub boot: Option<String>,
}

impl Owner {
    /// This process.
    pub fn me() -> Owner {
        let pid = std::process::id();
        Owner {
            pid,
            host: host(),
            start: start_time(pid),
            boot: boot_id(),
        }
    }

    fn record(&self) -> String {
        let mut text = format!("pid {}\nhost {}\n", self.pid, self.host);
        if let Some(start) = self.start {
            text.push_str(&format!("start {start}\n"));
        }
        if let Some(boot) = &self.boot {
            text.push_str(&format!("boot {boot}\n"));
        }
        text
    }

    /// The owner a lock file's text records, if it is one.
    pub fn parse(text: &str) -> Option<Owner> {
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
                .map(str::to_string)
        };
        Some(Owner {
            pid: field("pid")?.parse().ok()?,
            host: field("host")?,
            start: field("start").and_then(|s| s.parse().ok()),
            boot: field("boot"),
        })
    }

    /// Whether this owner is provably gone: it ran on this host, and
    /// the machine restarted since, or its process no longer runs, or its
    /// id belongs to a process started at another time.
    pub fn is_dead(&self) -> bool {
        if self.host != host() || !Path::new("/proc/self/stat").exists() {
            return false;
        }
        if let (Some(then), Some(now)) = (&self.boot, boot_id())
            && *then != now
        {
            return true;
        }
        if !Path::new("/proc").join(self.pid.to_string()).exists() {
            return true;
        }
        matches!((self.start, start_time(self.pid)), (Some(a), Some(b)) if a != b)
    }
}

fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .ok()
        .map(|b| b.trim().to_string())
}

/// Field 22 of `/proc/<pid>/stat`: when the process started.
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

impl Owned {
    /// Take the lock file `path`, waiting up to `wait` for a live owner; a
    /// lock whose owner is provably dead is taken over at once.
    pub fn acquire(path: &Path, wait: Duration) -> Result<Owned, LockError> {
        Owned::acquire_with(path, wait, "")
    }

    /// [`Owned::acquire`], recording `extra` lines after the owner (what
    /// the holder is doing, for whoever takes the lock over from it).
    pub fn acquire_with(path: &Path, wait: Duration, extra: &str) -> Result<Owned, LockError> {
        let record = format!("{}{extra}", Owner::me().record());
        let mut taken_over = None;
        let deadline = Instant::now() + wait;
        let mut pause = Duration::from_millis(5);
        loop {
            match create(path, &record) {
                Ok(()) => {
                    return Ok(Owned {
                        path: path.to_path_buf(),
                        record,
                        taken_over,
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => {
                    return Err(LockError::Io {
                        path: path.display().to_string(),
                        reason: e.to_string(),
                    });
                }
            }
            if let Some(dead) = take_over_dead(path) {
                taken_over = taken_over.or(dead);
                continue;
            }
            if Instant::now() >= deadline {
                return Err(held(path));
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(100));
        }
    }
}

impl Owned {
    /// The record of the killed owner this lock was taken over from, if
    /// it was: what that owner was doing, so the new holder can finish or
    /// undo it.
    pub fn taken_over(&self) -> Option<&str> {
        self.taken_over.as_deref()
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        // Only our own record: a lock taken over from us is not ours.
        if std::fs::read_to_string(&self.path).is_ok_and(|t| t == self.record) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Create the lock with its record in one step: the record is written to
/// a file beside it and linked into place, so that no reader ever sees a
/// lock without its owner.
fn create(path: &Path, record: &str) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".git-handoff-lock-")
        .tempfile_in(dir)?;
    tmp.write_all(record.as_bytes())?;
    match std::fs::hard_link(tmp.path(), path) {
        Ok(()) => {
            super::shared::adjust(path);
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(e),
        // No hard links here: create it exclusively, then write.
        Err(_) => {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)?;
            f.write_all(record.as_bytes())
        }
    }
}

/// Remove the lock at `path` if its owner is provably dead: `None` when it
/// was not, `Some(record)` to try again (the dead owner's record when this
/// process removed it). The lock is moved aside first and checked again
/// there, so that a lock another process took over meanwhile is put back,
/// not removed.
fn take_over_dead(path: &Path) -> Option<Option<String>> {
    let text = std::fs::read_to_string(path).ok()?;
    if !Owner::parse(&text).is_some_and(|o| o.is_dead()) {
        return None;
    }
    let aside = path.with_extension(format!("dead-{}", std::process::id()));
    if std::fs::rename(path, &aside).is_err() {
        // Gone meanwhile: try again.
        return Some(None);
    }
    let ours = std::fs::read_to_string(&aside).is_ok_and(|t| t == text);
    if !ours {
        // Another process took it over between the read and the move.
        let _ = std::fs::hard_link(&aside, path);
    }
    let _ = std::fs::remove_file(&aside);
    Some(ours.then_some(text))
}

fn held(path: &Path) -> LockError {
    let shown = path.display().to_string();
    match std::fs::read_to_string(path)
        .ok()
        .as_deref()
        .and_then(Owner::parse)
    {
        Some(owner) => LockError::Held {
            path: shown,
            pid: owner.pid,
            host: owner.host,
        },
        None => LockError::Unowned { path: shown },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_records_its_owner_and_is_released() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        let lock = Owned::acquire(&path, Duration::ZERO).unwrap();
        let owner = Owner::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(owner.pid, std::process::id());
        assert!(!owner.is_dead());
        let again = Owned::acquire(&path, Duration::from_millis(20)).unwrap_err();
        assert!(matches!(again, LockError::Held { .. }), "{again}");
        drop(lock);
        assert!(!path.exists());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_dead_owners_lock_is_taken_over_a_foreign_one_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        let mut dead = Owner::me();
        // A process id of this host whose start time differs: reused.
        dead.start = dead.start.map(|s| s + 1);
        if dead.start.is_none() {
            return; // no /proc here: nothing is provably dead
        }
        std::fs::write(&path, dead.record()).unwrap();
        let lock = Owned::acquire(&path, Duration::ZERO).unwrap();
        drop(lock);
        let mut elsewhere = Owner::me();
        elsewhere.host = "another-host".into();
        std::fs::write(&path, elsewhere.record()).unwrap();
        assert!(matches!(
            Owned::acquire(&path, Duration::ZERO),
            Err(LockError::Held { .. })
        ));
        std::fs::write(&path, "").unwrap();
        let err = Owned::acquire(&path, Duration::ZERO).unwrap_err();
        assert!(err.to_string().contains("rm '"), "{err}");
    }
}
