//! The one place ref edits are built: compare-and-swap updates and deletes
//! with their reflog entries, as `gix` transactions take them. Callers name
//! the ref and the value they expect; what "expect" means (must match, must
//! not exist) is decided here, so no edit is ever unconditional.

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
    RefEdit {
        change: Change::Update {
            log: LogChange {
                mode: RefLog::AndReference,
                force_create_reflog: false,
                message: message.into(),
            },
            expected: expect(old),
            new: Target::Object(new),
        },
        name: full_name(name.as_ref()),
        deref: false,
    }
}

/// Delete `name` if it still holds `old`.
pub fn delete(name: impl AsRef<str>, old: ObjectId) -> RefEdit {
    RefEdit {
        change: Change::Delete {
            expected: expect(Some(old)),
            log: RefLog::AndReference,
        },
        name: full_name(name.as_ref()),
        deref: false,
    }
}

fn full_name(name: &str) -> FullName {
    name.try_into()
        .unwrap_or_else(|err| panic!("the crate built an invalid ref name {name:?}: {err}"))
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
    }
}
