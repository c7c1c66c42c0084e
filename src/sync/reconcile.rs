//! The pure decision tables of sharing: how a fetch reconciles one key
//! three-way ([`classify`]), what a push does with one key ([`plan`]), and
//! whether a remote value is a rollback to an older local version. No I/O.

use anyhow::Result;
use gix::ObjectId;

use super::{Held, Outcome, Status};
use crate::store::lineage::Relation;

/// What a fetch does to one key's refs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Nothing.
    Nothing,
    /// Move the base to this id.
    SetBase(ObjectId),
    /// Set the local brief and the base to the remote's value.
    TakeRemote,
    /// Remove the base.
    DeleteBase,
}

/// Whether the versions appear in the other side's history: `(local in
/// the remote's, remote in the local's)`; asked only on the first fetch of
/// a key whose two sides differ.
pub type Histories<'a> = &'a mut dyn FnMut() -> Result<(bool, bool)>;

/// Decide one key three-way, the way git treats remote-tracking branches:
/// `local` = `refs/handoffs/<key>`, `base` = the last version both sides
/// agreed on, `remote` = the value just fetched.
pub fn classify(
    local: Option<ObjectId>,
    base: Option<ObjectId>,
    remote: Option<ObjectId>,
    histories: Histories<'_>,
) -> Result<(Status, Action)> {
    let set_base = |r: ObjectId| {
        if base == Some(r) {
            Action::Nothing
        } else {
            Action::SetBase(r)
        }
    };
    Ok(match (local, base, remote) {
        (Some(l), _, Some(r)) if l == r => (Status::UpToDate, set_base(r)),
        (None, None, Some(_)) => (Status::Created, Action::TakeRemote),
        (None, Some(b), Some(r)) if b == r => (Status::DroppedHere, Action::Nothing),
        (None, Some(_), Some(_)) => (Status::Restored, Action::TakeRemote),
        (Some(l), Some(b), Some(_)) if b == l => (Status::FastForwarded, Action::TakeRemote),
        (Some(_), Some(b), Some(r)) if b == r => (Status::Ahead, Action::Nothing),
        (Some(_), None, Some(r)) => match histories()? {
            (true, _) => (Status::FastForwarded, Action::TakeRemote),
            (false, true) => (Status::Ahead, Action::SetBase(r)),
            (false, false) => (Status::Diverged, Action::Nothing),
        },
        (Some(_), Some(_), Some(_)) => (Status::Diverged, Action::Nothing),
        (None, None, None) => (Status::Gone, Action::Nothing),
        (None, Some(_), None) => (Status::Gone, Action::DeleteBase),
        (Some(_), None, None) => (Status::LocalOnly, Action::Nothing),
        (Some(_), Some(_), None) => (Status::DeletedRemotely, Action::Nothing),
    })
}

/// What to do with one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Plan {
    UpToDate,
    Send {
        lease: Option<ObjectId>,
        new: ObjectId,
    },
    Delete {
        lease: ObjectId,
    },
    Hold(Outcome, Held),
}

/// What to do with one key on a push. `relation` is how the local value
/// stands to the remote's in the version graph, when both exist and
/// differ: the local value is sent only when the remote's is its
/// ancestor; the bases decide only what the graph cannot place.
pub(super) fn plan(
    (l, b, r): (Option<ObjectId>, Option<ObjectId>, Option<ObjectId>),
    relation: Option<Relation>,
    named: bool,
    prune: bool,
) -> Plan {
    match ((l, b, r), relation) {
        ((Some(l), _, Some(r)), _) if l == r => Plan::UpToDate,
        ((Some(l), _, Some(r)), Some(Relation::Ahead)) => Plan::Send {
            lease: Some(r),
            new: l,
        },
        ((Some(_), _, Some(_)), Some(Relation::Behind)) => {
            Plan::Hold(Outcome::Rejected, Held::Stale)
        }
        ((Some(_), _, Some(_)), Some(Relation::Diverged)) => {
            Plan::Hold(Outcome::Diverged, Held::Diverged)
        }
        ((Some(l), b, r), _) if b == r => Plan::Send { lease: r, new: l },
        ((Some(l), Some(_), None), _) if named => Plan::Send {
            lease: None,
            new: l,
        },
        ((Some(_), Some(_), None), _) => Plan::Hold(Outcome::Skipped, Held::DeletedThere),
        ((Some(_), _, Some(_)), _) => Plan::Hold(Outcome::Diverged, Held::Diverged),
        ((None, Some(b), Some(r)), _) if b == r && prune => Plan::Delete { lease: r },
        ((None, Some(b), Some(r)), _) if b == r => Plan::Hold(Outcome::Skipped, Held::DroppedHere),
        ((None, _, Some(_)), _) => Plan::Hold(Outcome::Skipped, Held::NotHere),
        ((None, _, None), _) => Plan::UpToDate,
        ((Some(l), None, None), _) => Plan::Send {
            lease: None,
            new: l,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> Option<ObjectId> {
        Some(ObjectId::from_bytes_or_panic(&[n; 20]))
    }

    fn run(
        l: Option<ObjectId>,
        b: Option<ObjectId>,
        r: Option<ObjectId>,
        hist: (bool, bool),
    ) -> (Status, Action) {
        classify(l, b, r, &mut || Ok(hist)).unwrap()
    }

    #[test]
    fn the_three_way_rules() {
        let (a, b, c) = (id(1), id(2), id(3));
        let none = (false, false);
        assert_eq!(
            run(a, None, a, none),
            (Status::UpToDate, Action::SetBase(a.unwrap()))
        );
        assert_eq!(run(a, a, a, none), (Status::UpToDate, Action::Nothing));
        assert_eq!(
            run(None, None, a, none),
            (Status::Created, Action::TakeRemote)
        );
        assert_eq!(
            run(a, a, b, none),
            (Status::FastForwarded, Action::TakeRemote)
        );
        assert_eq!(run(b, a, a, none), (Status::Ahead, Action::Nothing));
        assert_eq!(run(b, a, c, none), (Status::Diverged, Action::Nothing));
        assert_eq!(
            run(a, None, None, none),
            (Status::LocalOnly, Action::Nothing)
        );
        assert_eq!(
            run(a, a, None, none),
            (Status::DeletedRemotely, Action::Nothing)
        );
        assert_eq!(
            run(None, a, a, none),
            (Status::DroppedHere, Action::Nothing)
        );
        assert_eq!(
            run(None, a, b, none),
            (Status::Restored, Action::TakeRemote)
        );
        assert_eq!(run(None, a, None, none), (Status::Gone, Action::DeleteBase));
    }

    #[test]
    fn a_first_fetch_decides_from_the_histories() {
        let (a, b) = (id(1), id(2));
        assert_eq!(
            run(a, None, b, (true, false)),
            (Status::FastForwarded, Action::TakeRemote)
        );
        assert_eq!(
            run(a, None, b, (false, true)),
            (Status::Ahead, Action::SetBase(b.unwrap()))
        );
        assert_eq!(
            run(a, None, b, (false, false)),
            (Status::Diverged, Action::Nothing)
        );
        // The histories are not read when the sides agree.
        let mut asked = false;
        classify(a, None, a, &mut || {
            asked = true;
            Ok((false, false))
        })
        .unwrap();
        assert!(!asked);
    }

    #[test]
    fn push_plans_never_send_a_diverged_key() {
        let (a, b, c) = (id(1), id(2), id(3));
        let p = |l, b, r, named, prune| plan((l, b, r), None, named, prune);
        assert_eq!(
            p(b, a, a, false, false),
            Plan::Send {
                lease: a,
                new: b.unwrap()
            }
        );
        assert_eq!(
            p(a, None, None, false, false),
            Plan::Send {
                lease: None,
                new: a.unwrap()
            }
        );
        assert!(matches!(
            p(b, a, c, false, false),
            Plan::Hold(Outcome::Diverged, _)
        ));
        assert!(matches!(
            p(b, None, c, false, false),
            Plan::Hold(Outcome::Diverged, _)
        ));
        assert_eq!(p(a, a, a, false, false), Plan::UpToDate);
        assert!(matches!(
            p(None, a, a, false, false),
            Plan::Hold(Outcome::Skipped, _)
        ));
        assert_eq!(
            p(None, a, a, false, true),
            Plan::Delete { lease: a.unwrap() }
        );
        assert!(matches!(
            p(a, a, None, false, false),
            Plan::Hold(Outcome::Skipped, _)
        ));
        assert_eq!(
            p(a, a, None, true, false),
            Plan::Send {
                lease: None,
                new: a.unwrap()
            }
        );
    }

    #[test]
    fn the_version_graph_overrules_the_bases_on_a_push() {
        let (a, b, c) = (id(1), id(2), id(3));
        let p = |l, b, r, rel| plan((l, b, r), Some(rel), false, false);
        // The remote unchanged since the base, yet not an ancestor of the
        // local value: diverged (a write on top of a diverged key, or a
        // sibling line), never sent.
        assert!(matches!(
            p(b, a, a, Relation::Diverged),
            Plan::Hold(Outcome::Diverged, Held::Diverged)
        ));
        // The remote's value an ancestor of the local one: sent, whatever
        // the base says.
        assert_eq!(
            p(b, c, a, Relation::Ahead),
            Plan::Send {
                lease: a,
                new: b.unwrap()
            }
        );
        assert!(matches!(
            p(b, a, a, Relation::Behind),
            Plan::Hold(_, Held::Stale)
        ));
    }
}
