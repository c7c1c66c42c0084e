//! Sharing briefs and their history through an ordinary git remote: fetch
//! (into a staging namespace, then three-way reconciliation and a union
//! merge of the notes history), push (each key with a lease) and resolve.
//!
//! Network operations run the `git` binary, so credentials, ssh config and
//! `insteadOf` work as for the user's own fetches and pushes; everything
//! local goes through gix. Functions here take a repository and return
//! data (typed reports and errors stating facts); the commands render them
//! and add what to run next (`cli::hints`).
//!
//! | file | owns |
//! |---|---|
//! | `git` | the `git` subprocess and the parsing of its answers |
//! | `refs` | local ref transactions and the three sides of every key |
//! | `reconcile` | the pure decision tables of fetch and push |
//! | `fetch` | fetch: staging (network), then the local reconciliation |
//! | `notes` | the union merge of two notes histories |
//! | `push` | plan sends, build `git push`, run it, apply the answers |
//! | `optimistic` | a push in one round trip, planned from the last agreed values |
//! | `lock` | one lock per remote: fetch, push and resolve never interleave |
//! | `outgoing` | pinning many creates for one glob refspec |
//! | `resolve` | ending a divergence by keeping one side |
//! | `merge` | `resolve --merge`: three ways against the merge base |
//! | `held` | after `redact --history`: what holds a secret, held alone |
//! | `staged` | taking what a plain `git fetch` staged, no network |
//! | `gate`, `gate_cache` | the one secret gate for what leaves and enters |

mod fetch;
pub mod gate;
pub mod gate_cache;
mod git;
mod held;
pub mod lock;
pub mod merge;
mod notes;
mod optimistic;
mod outgoing;
mod push;
mod reconcile;
mod refs;
mod resolve;
pub mod staged;

use gix::ObjectId;
use serde::Serialize;

pub use fetch::{FetchOptions, FetchReport, KeyReport, NotesMerge, Status, fetch_with};
pub use git::bookkeeping_on;
pub use push::{Held, HistoryPush, Outcome, PushError, PushOptions, PushReport, Route, push};
pub use resolve::{Resolution, ResolveError, resolve};

/// A version as reports show it: its id and its timestamp.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VersionInfo {
    /// The version id (blob id).
    #[serde(serialize_with = "hex")]
    pub id: ObjectId,
    /// The brief's timestamp, when readable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
}

fn hex<S: serde::Serializer>(id: &ObjectId, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&id.to_string())
}

fn hex_opt<S: serde::Serializer>(id: &Option<ObjectId>, s: S) -> Result<S::Ok, S::Error> {
    match id {
        Some(id) => s.serialize_str(&id.to_string()),
        None => s.serialize_none(),
    }
}
