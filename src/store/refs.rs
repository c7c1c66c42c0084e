//! The one place ref edits (and the signatures of notes commits) are built: compare-and-swap updates and deletes
//! with their reflog entries, as `gix` transactions take them, for the
//! store and the sync layer alike. Callers name the ref and the value they
//! expect; what "expect" means (must match, must not exist) is decided
//! here.

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
