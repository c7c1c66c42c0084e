//! The one place ref edits (and the signatures of notes commits) are built
//! and committed: compare-and-swap updates and deletes with their reflog
//! entries, for the store and the sync layer alike. Callers name the ref
//! and the value they expect; what "expect" means (must match, must not
//! exist) is decided here, and [`commit`] applies a transaction through
//! the repository's own ref backend (`git::refdb::Backend`): gix for the
//! files backend, `git update-ref --stdin` for reftable, all or none and
//! compare-and-swap alike.

use gix::ObjectId;
use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
use gix::refs::{FullName, Target};

/// What a compare-and-swap expects of a ref: the value it must still hold,
/// or (`None`) that it must not exist.
pub fn expect(old: Option<ObjectId>) -> PreviousValue {
    match old {
        Some(id) => PreviousValue::MustExistAndMatch(Target::Object(id)),
        None => PreviousValue::MustNotExist,
    }
}

/// An edit moving `name` to `new` when it matches `expected` (see
/// [`expect`]; `PreviousValue::Any` only for scratch refs such as fetch's
/// staging refs), with `message` in its reflog. Refuses a name git would
/// not accept: names built from a remote's name come from configuration.
pub fn set(
    name: &str,
    expected: PreviousValue,
    new: ObjectId,
    message: &str,
) -> anyhow::Result<RefEdit> {
    Ok(RefEdit {
        change: Change::Update {
            log: LogChange {
                mode: RefLog::AndReference,
                force_create_reflog: false,
                message: message.into(),
            },
            expected,
            new: Target::Object(new),
        },
        name: full_name(name)?,
        deref: false,
    })
}

/// An edit deleting `name` when it matches `expected`.
pub fn remove(name: &str, expected: PreviousValue) -> anyhow::Result<RefEdit> {
    Ok(RefEdit {
        change: Change::Delete {
            expected,
            log: RefLog::AndReference,
        },
        name: full_name(name)?,
        deref: false,
    })
}

/// Move `name` to `new` if it still holds `old` (`None`: create it, only if
/// it does not exist), with `message` in its reflog.
///
/// `name` is built by this crate from a validated key or a fixed
/// namespace, so an invalid name is a bug, not an input error.
pub fn update(
    name: impl AsRef<str>,
    new: ObjectId,
    old: Option<ObjectId>,
    message: &str,
) -> RefEdit {
    set(name.as_ref(), expect(old), new, message).unwrap_or_else(|err| panic!("{err}"))
}

/// Delete `name` if it still holds `old` (`name` as for [`update`]).
pub fn delete(name: impl AsRef<str>, old: ObjectId) -> RefEdit {
    remove(name.as_ref(), expect(Some(old))).unwrap_or_else(|err| panic!("{err}"))
}

/// The committer and author of a notes commit: the configured identities,
/// the author falling back to the committer.
pub fn signature(
    repo: &gix::Repository,
) -> anyhow::Result<(gix::actor::SignatureRef<'_>, gix::actor::SignatureRef<'_>)> {
    use anyhow::Context;
    let committer = repo
        .committer()
        .ok_or_else(|| anyhow::anyhow!("no committer identity; set one with `git config user.name` and `git config user.email`"))?
        .context("cannot read the committer identity")?;
    let author = match repo.author() {
        Some(author) => author.context("cannot read the author identity")?,
        None => committer,
    };
    Ok((committer, author))
}

/// Why a ref transaction was not applied (nothing of it was).
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    /// A ref no longer held the value an edit expected: another writer
    /// moved it (a lost compare-and-swap).
    #[error("{0}")]
    Conflict(String),
    /// Anything else: a lock held by another process, an I/O error.
    #[error("{0}")]
    Failed(String),
}

impl EditError {
    /// Whether a compare-and-swap was lost.
    pub fn is_conflict(&self) -> bool {
        matches!(self, EditError::Conflict(_))
    }
}

/// Apply `edits` as one transaction, all or none, through the repository's
/// ref backend: gix's transaction for the files backend (each ref locked,
/// its expected value checked under the lock), `git update-ref --stdin`
/// for reftable (git checks every old value and writes one table, or
/// nothing). Files created under the git dir honour
/// `core.sharedRepository`.
pub fn commit(repo: &gix::Repository, edits: Vec<RefEdit>) -> Result<(), EditError> {
    if edits.is_empty() {
        return Ok(());
    }
    match crate::git::refdb::Backend::of(repo) {
        crate::git::refdb::Backend::Files => {
            let names: Vec<String> = edits.iter().map(|e| e.name.as_bstr().to_string()).collect();
            // The committer is resolved only for a transaction that logs:
            // resolving it dates it too (the system time zone: a walk of
            // the zoneinfo folder, up to a millisecond here).
            let outcome = if logs_any(repo, &edits) {
                repo.edit_references(edits)
            } else {
                repo.edit_references_as(edits, None)
            };
            let outcome = outcome.map(|_| ()).map_err(|err| {
                if err.is_conflict() {
                    EditError::Conflict(err.to_string())
                } else {
                    EditError::Failed(err.to_string())
                }
            });
            share_written(repo, &names);
            outcome
        }
        crate::git::refdb::Backend::Reftable => reftable_commit(repo, &edits),
    }
}

/// Whether a files-backend transaction of `edits` would append to a
/// reflog, as gix decides it: every ref with `core.logAllRefUpdates=always`;
/// otherwise those git logs by default (branches, remote-tracking refs,
/// notes, `HEAD`) and any whose reflog exists; none with logging off. A
/// namespace or an unreadable reflog counts as logging.
fn logs_any(repo: &gix::Repository, edits: &[RefEdit]) -> bool {
    use gix::refs::store::WriteReflog;
    const LOGGED: [&str; 4] = [
        "refs/heads/",
        "refs/remotes/",
        "refs/notes/",
        "refs/worktree/",
    ];
    match repo.refs.write_reflog {
        WriteReflog::Disable => false,
        WriteReflog::Always => true,
        WriteReflog::Normal => {
            repo.refs.namespace.is_some()
                || edits.iter().any(|edit| {
                    let name = edit.name.as_bstr();
                    name == "HEAD"
                        || LOGGED
                            .iter()
                            .any(|prefix| name.starts_with(prefix.as_bytes()))
                        || repo.refs.reflog_exists(edit.name.as_ref()).unwrap_or(true)
                })
        }
    }
}

/// After a files-backend transaction in a repository with
/// `core.sharedRepository`: the ref files, their reflogs, the folders
/// created for them, `packed-refs` and the object fan-out folders (the
/// objects the transaction points at were written just before) get the
/// permissions git gives them. Nothing to do elsewhere.
fn share_written(repo: &gix::Repository, names: &[String]) {
    use crate::support::shared;
    let common = repo.common_dir();
    if shared::policy_for(common) == 0 {
        return;
    }
    for name in names {
        shared::adjust_up_to(common, &common.join(name));
        shared::adjust_up_to(common, &common.join("logs").join(name));
    }
    shared::adjust(&common.join("packed-refs"));
    let objects = common.join("objects");
    if let Ok(entries) = std::fs::read_dir(&objects) {
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.len() == 2 && name.bytes().all(|b| b.is_ascii_hexdigit()) {
                shared::adjust(&entry.path());
            }
        }
    }
}

/// How long a reftable transaction waits for the table lock of another
/// writer, in all.
const REFTABLE_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// [`commit`] in a reftable repository: one `git update-ref --stdin`
/// transaction. When git refuses it, a ref that no longer holds its
/// expected value makes it a [`EditError::Conflict`]; the table lock held
/// by another writer is waited for (git fails at once or after
/// `reftable.lockTimeout`); anything else is git's reason.
fn reftable_commit(repo: &gix::Repository, edits: &[RefEdit]) -> Result<(), EditError> {
    let message = edits
        .iter()
        .find_map(|e| match &e.change {
            Change::Update { log, .. } if !log.message.is_empty() => Some(log.message.to_string()),
            _ => None,
        })
        .unwrap_or_else(|| "handoff".to_string());
    let input = update_ref_input(edits);
    let start = std::time::Instant::now();
    let mut attempt = 0u64;
    loop {
        attempt += 1;
        let mut cmd = crate::git::cmd::command(repo);
        if repo
            .config_snapshot()
            .integer("reftable.lockTimeout")
            .is_none()
        {
            cmd.args(["-c", "reftable.lockTimeout=1000"]);
        }
        cmd.args(["update-ref", "--no-deref", "-m", &message, "--stdin"]);
        let run = crate::git::cmd::run_command(cmd, Some(input.as_bytes()))
            .map_err(|e| EditError::Failed(e.to_string()))?;
        if run.ok {
            return Ok(());
        }
        let reason = crate::git::cmd::reason(&run.stderr);
        if lost(repo, edits) {
            return Err(EditError::Conflict(reason));
        }
        let locked = run.stderr.contains("lock");
        if !locked || start.elapsed() > REFTABLE_LOCK_WAIT {
            return Err(EditError::Failed(reason));
        }
        std::thread::sleep(std::time::Duration::from_millis(attempt.min(20) * 5));
    }
}

/// The `git update-ref --stdin` lines of `edits`: each with the old value
/// it expects (`create` for a ref that must not exist; no old value for
/// `PreviousValue::Any`).
fn update_ref_input(edits: &[RefEdit]) -> String {
    let mut input = String::new();
    for edit in edits {
        let name = edit.name.as_bstr();
        let line = match &edit.change {
            Change::Update {
                expected,
                new: Target::Object(new),
                ..
            } => match expected {
                PreviousValue::MustNotExist => format!("create {name} {new}"),
                PreviousValue::MustExistAndMatch(Target::Object(old))
                | PreviousValue::ExistingMustMatch(Target::Object(old)) => {
                    format!("update {name} {new} {old}")
                }
                _ => format!("update {name} {new}"),
            },
            Change::Update { .. } => unreachable!("handoff refs point at objects"),
            Change::Delete { expected, .. } => match expected {
                PreviousValue::MustExistAndMatch(Target::Object(old))
                | PreviousValue::ExistingMustMatch(Target::Object(old)) => {
                    format!("delete {name} {old}")
                }
                _ => format!("delete {name}"),
            },
        };
        input.push_str(&line);
        input.push('\n');
    }
    input
}

/// Whether a ref of `edits` no longer holds the value its edit expects
/// (another writer moved, created or removed it).
pub fn lost(repo: &gix::Repository, edits: &[RefEdit]) -> bool {
    edits.iter().any(|edit| {
        let expected = match &edit.change {
            Change::Update { expected, .. } | Change::Delete { expected, .. } => expected,
        };
        let Ok(current) = crate::git::refdb::id(repo, &edit.name.as_bstr().to_string()) else {
            return false;
        };
        match expected {
            PreviousValue::MustExistAndMatch(Target::Object(id)) => current != Some(*id),
            PreviousValue::ExistingMustMatch(Target::Object(id)) => {
                current.is_some_and(|now| now != *id)
            }
            PreviousValue::MustNotExist => current.is_some(),
            _ => false,
        }
    })
}

fn full_name(name: &str) -> anyhow::Result<FullName> {
    name.try_into()
        .map_err(|_| anyhow::anyhow!("'{name}' is not a valid ref name"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_update_without_an_old_value_must_create() {
        let id = ObjectId::empty_blob(gix::hash::Kind::Sha1);
        let edit = update("refs/handoffs/k", id, None, "m");
        match edit.change {
            Change::Update { expected, new, .. } => {
                assert_eq!(expected, PreviousValue::MustNotExist);
                assert_eq!(new, Target::Object(id));
            }
            Change::Delete { .. } => panic!("an update"),
        }
        let edit = delete("refs/handoffs/k", id);
        assert!(matches!(
            edit.change,
            Change::Delete { expected: PreviousValue::MustExistAndMatch(Target::Object(o)), .. } if o == id
        ));
        let err = set("refs/handoffs/a..b", PreviousValue::Any, id, "m").unwrap_err();
        assert_eq!(
            err.to_string(),
            "'refs/handoffs/a..b' is not a valid ref name"
        );
    }
}
