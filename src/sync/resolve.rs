//! Resolve: end one key's divergence with a remote, keeping the local
//! version or taking the remote's.

use anyhow::Result;
use serde::Serialize;

use super::VersionInfo;
use super::refs::{Sides, info, is_brief, previous, set, transaction};
use crate::store;
use crate::store::lineage::{self, Graph, Relation};
use crate::store::remotes::{self, base_ref};

/// How to end a divergence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Resolution {
    /// Keep the local version; the next push replaces the remote's.
    KeepLocal,
    /// Take the remote's version; the local one stays in the history.
    TakeRemote,
}

/// The result of `resolve`.
#[derive(Debug, Clone, Serialize)]
pub struct Resolved {
    /// The key.
    pub key: String,
    /// The remote.
    pub remote: String,
    /// The choice.
    pub resolution: Resolution,
    /// The local version before.
    pub local: VersionInfo,
    /// The remote's version.
    pub theirs: VersionInfo,
}

/// Why `resolve` changed nothing. The messages state the fact; the
/// command layer adds what to run next (`cli::hints`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// The key has not diverged (as of the last fetch).
    #[error("'{key}' has not diverged from '{remote}'; nothing to resolve")]
    NotDiverged {
        /// The brief's key.
        key: String,
        /// The remote.
        remote: String,
    },
    /// `--take-remote` when the remote's blob is not a valid brief of the key.
    #[error(
        "'{remote}' holds {id} for '{key}', which is not a valid brief of this key; nothing was changed"
    )]
    NotABrief {
        /// The brief's key.
        key: String,
        /// The remote.
        remote: String,
        /// The remote's blob, abbreviated.
        id: String,
    },
}

/// The local and remote values of `key` when the version graph (`graph`,
/// of the checked histories only: the local one, the remote's as fetch
/// validated it, never the staged copy as such) says they diverged; else
/// [`ResolveError::NotDiverged`].
pub(super) fn diverged_sides(
    graph: &mut Graph,
    sides: &Sides,
    remote: &str,
    key: &str,
) -> Result<(gix::ObjectId, gix::ObjectId)> {
    match sides.get(key) {
        (Some(l), _, Some(r)) if l != r && graph.relation(key, l, r)? == Relation::Diverged => {
            Ok((l, r))
        }
        _ => Err(ResolveError::NotDiverged {
            key: key.to_string(),
            remote: remote.to_string(),
        }
        .into()),
    }
}

/// End the divergence of `key` with `remote` (as of the last fetch):
/// keep-local moves the base to the remote's value so the next push may
/// replace it; take-remote sets the local brief (and the base) to it.
pub fn resolve(
    repo: &gix::Repository,
    remote: &str,
    key: &str,
    resolution: Resolution,
) -> Result<Resolved> {
    remotes::migrate(repo)?;
    let _lock = super::lock::hold(repo, remote)?;
    let sides = Sides::read(repo, remote)?;
    let (_, b, _) = sides.get(key);
    // Checks every history's tip first (`notes_tips`): a damaged one stops
    // here with its repair.
    let mut graph = Graph::of_repo(repo, &[])?;
    let (l, r) = diverged_sides(&mut graph, &sides, remote, key)?;
    if resolution == Resolution::TakeRemote && !is_brief(repo, Some(r), key) {
        return Err(ResolveError::NotABrief {
            key: key.to_string(),
            remote: remote.to_string(),
            id: r.to_hex_with_len(7).to_string(),
        }
        .into());
    }
    let message = format!("handoff: resolve {key} with {remote}");
    // Keeping the local version records a merge of both sides holding it,
    // first, so that the other side fast-forwards to it (a resolve killed
    // after this line is settled by the next fetch or push the same way).
    // Taking the remote's makes the local brief that very version, as
    // `git reset` to the upstream does: the remote's next version, written
    // on top of it, fast-forwards here; the local one stays in the history.
    if resolution == Resolution::KeepLocal
        && let Some(head) = lineage::head_of(repo, l)
    {
        let mut parents = graph.versions_of(key, l)?;
        parents.extend(graph.versions_of(key, r)?);
        store::record_version(repo, key, (l, head), &parents, &message)?;
    }
    let base_name = base_ref(remote, key);
    // The brief before the base (refs are committed in order): a resolve
    // killed between the two leaves local = remote, which the next fetch
    // reads as up to date, never a base that says the local version is
    // ahead of the remote's.
    let mut edits = Vec::new();
    if resolution == Resolution::TakeRemote {
        edits.push(set(&store::ref_name(key), previous(Some(l)), r, &message)?);
    }
    edits.push(set(&base_name, previous(b), r, &message)?);
    if !transaction(repo, edits)? {
        crate::refuse!("brief '{key}' changed while resolving; nothing was changed, run again");
    }
    remotes::forget_divergence(repo, remote, key)?;
    if resolution == Resolution::TakeRemote {
        remotes::carry_taken(repo, remote, &[(key.to_string(), l, r)])?;
    }
    Ok(Resolved {
        key: key.to_string(),
        remote: remote.to_string(),
        resolution,
        local: info(repo, Some(l)).expect("id given"),
        theirs: info(repo, Some(r)).expect("id given"),
    })
}
