//! Local ref edits of the sync layer (compare-and-swap transactions, with
//! retries of lost lock races) and the three sides of every key: local
//! brief, base (the last value both sides agreed on) and the remote's
//! fetched value.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use anyhow::{Result, anyhow};
use gix::ObjectId;
use gix::refs::transaction::{PreviousValue, RefEdit};
use serde::Deserialize;

use super::VersionInfo;
use super::reconcile::Action;
use crate::brief::{Brief, redact};
use crate::store::remotes::{self, base_prefix, base_ref, tip_prefix};
use crate::store::{self, REF_PREFIX, packed};
use crate::store::{history, listcache};

pub(super) use crate::store::refs::{expect as previous, remove as delete, set};

/// Apply edits as one transaction; `Ok(false)` when a compare-and-swap lost.
/// A batch of many edits, or a few of refs that live packed in a small
/// file ([`packed::lives_packed`]), is one rewrite of `packed-refs` where
/// it can be ([`packed::edit`]), loose refs otherwise. A lock file left by a killed
/// process is named, with the command that clears it.
pub(super) fn transaction(repo: &gix::Repository, edits: Vec<RefEdit>) -> Result<bool> {
    if edits.is_empty() {
        return Ok(true);
    }
    let names: Vec<String> = edits.iter().map(|e| e.name.as_bstr().to_string()).collect();
    if edits.len() >= packed::PACKED_AT || packed::lives_packed(repo, &edits) {
        match packed::edit(repo, &edits) {
            Ok(packed::Outcome::Applied) => return Ok(true),
            Ok(packed::Outcome::Lost) => return Ok(false),
            Ok(packed::Outcome::Loose) => {}
            Err(err) => {
                return Err(match store::lock_error(repo, names) {
                    Some(locked) => locked.into(),
                    None => err,
                });
            }
        }
    }
    let mut attempt = 0;
    loop {
        attempt += 1;
        match crate::store::refs::commit(repo, edits.clone()) {
            Ok(()) => return Ok(true),
            Err(err) if err.is_conflict() => return Ok(false),
            // A ref moved, vanished or was locked by a concurrent writer
            // while this transaction locked it: retried, then a lost
            // compare-and-swap like any other.
            Err(_) if attempt < RACE_RETRIES => {
                std::thread::sleep(std::time::Duration::from_millis(attempt as u64 * 5));
            }
            Err(err) => {
                if let Some(locked) = store::lock_error(repo, names) {
                    return Err(locked.into());
                }
                if crate::store::refs::lost(repo, &edits) {
                    return Ok(false);
                }
                return Err(anyhow!("cannot update the handoff refs: {err}"));
            }
        }
    }
}

/// How often a ref transaction that failed for a reason other than a lost
/// compare-and-swap is tried again.
pub(super) const RACE_RETRIES: usize = 5;

/// Point `name` at `id` (or delete it), whatever it held.
pub(super) fn mirror(
    repo: &gix::Repository,
    name: &str,
    id: Option<ObjectId>,
    message: &str,
) -> Result<()> {
    let current = history::peel(repo, name)?;
    if current == id {
        return Ok(());
    }
    let edit = match id {
        Some(id) => set(name, PreviousValue::Any, id, message)?,
        None => delete(name, PreviousValue::Any)?,
    };
    transaction(repo, vec![edit])?;
    Ok(())
}

/// Whether `id` is a blob holding a valid brief of `key`.
pub(super) fn is_brief(repo: &gix::Repository, id: Option<ObjectId>, key: &str) -> bool {
    id.and_then(|id| repo.find_object(id).ok())
        .is_some_and(|o| {
            o.kind == gix::object::Kind::Blob
                && crate::brief::Brief::from_slice(&o.data).is_ok_and(|b| b.key == key)
        })
}

/// [`newer_version`] of many values, each blob read at most once: a blob
/// the list cache holds (content-addressed by blob id; only briefs this
/// build reads go in) is not read at all, and a brief read here goes into
/// it, so the next push of 1,000 up-to-date keys reads no brief.
pub(super) struct Newer<'r> {
    repo: &'r gix::Repository,
    cache: Option<listcache::Cache>,
}

impl<'r> Newer<'r> {
    pub(super) fn new(repo: &'r gix::Repository) -> Newer<'r> {
        Newer { repo, cache: None }
    }

    /// What [`newer_version`] says of `id` and `key`.
    pub(super) fn version(&mut self, id: ObjectId, key: &str) -> Option<String> {
        let cache = self
            .cache
            .get_or_insert_with(|| listcache::Cache::load(self.repo));
        if cache.get(&id).is_some() {
            return None;
        }
        let object = self.repo.find_object(id).ok()?;
        if object.kind != gix::object::Kind::Blob {
            return None;
        }
        if let Ok(brief) = Brief::from_slice(&object.data) {
            cache.insert(id, brief);
            return None;
        }
        newer_version(self.repo, Some(id), key)
    }

    /// Keep what was read in the list cache (a cache: a failure to save
    /// costs time only).
    pub(super) fn save(&mut self) {
        if let Some(cache) = &mut self.cache {
            cache.save(|_| true);
        }
    }
}

/// The schema version of `id`, when it is a brief of `key` that a newer
/// git-handoff wrote ([`crate::brief::written_by_newer`]).
pub(super) fn newer_version(
    repo: &gix::Repository,
    id: Option<ObjectId>,
    key: &str,
) -> Option<String> {
    let object = repo.find_object(id?).ok()?;
    if object.kind != gix::object::Kind::Blob {
        return None;
    }
    let version = crate::brief::written_by_newer(&object.data)?;
    let value: serde_json::Value = serde_json::from_slice(&object.data).ok()?;
    (value["key"] == key).then_some(version)
}

#[derive(Deserialize)]
pub(super) struct Stamp {
    timestamp: Option<String>,
}

/// The report's view of versions for many keys: each blob read at most
/// once, and not at all when the list cache (content-addressed by blob id)
/// already holds its timestamp; a brief read here goes into that cache, so
/// the next fetch of 10,000 up-to-date keys reads no brief.
pub(super) struct Stamps<'r> {
    repo: &'r gix::Repository,
    cache: Option<listcache::Cache>,
    seen: HashMap<ObjectId, Option<String>>,
}

impl<'r> Stamps<'r> {
    pub(super) fn new(repo: &'r gix::Repository) -> Stamps<'r> {
        Stamps {
            repo,
            cache: None,
            seen: HashMap::new(),
        }
    }

    /// The version `id` with its timestamp, as [`info`] gives it.
    pub(super) fn info(&mut self, id: Option<ObjectId>) -> Option<VersionInfo> {
        let id = id?;
        if let Some(timestamp) = self.seen.get(&id) {
            return Some(VersionInfo {
                id,
                timestamp: timestamp.clone(),
            });
        }
        let cache = self
            .cache
            .get_or_insert_with(|| listcache::Cache::load(self.repo));
        let timestamp = match cache.get(&id) {
            Some(summary) => Some(summary.timestamp.clone()),
            None => {
                let data = self.repo.find_blob(id).ok().map(|b| b.detach().data);
                match data.as_deref().map(Brief::from_slice) {
                    Some(Ok(brief)) => {
                        let timestamp = brief.timestamp.clone();
                        cache.insert(id, brief);
                        Some(timestamp)
                    }
                    // Not a valid brief: its timestamp, if it has one.
                    Some(Err(_)) => data
                        .as_deref()
                        .and_then(|d| serde_json::from_slice::<Stamp>(d).ok())
                        .and_then(|s| s.timestamp),
                    None => None,
                }
            }
        };
        self.seen.insert(id, timestamp.clone());
        Some(VersionInfo { id, timestamp })
    }

    /// Keep what was read in the list cache (a cache: a failure to save
    /// costs time only).
    pub(super) fn save(&mut self) {
        if let Some(cache) = &mut self.cache {
            cache.save(|_| true);
        }
    }
}

pub(super) fn info(repo: &gix::Repository, id: Option<ObjectId>) -> Option<VersionInfo> {
    let id = id?;
    let timestamp = repo
        .find_blob(id)
        .ok()
        .and_then(|b| serde_json::from_slice::<Stamp>(&b.data).ok())
        .and_then(|s| s.timestamp);
    Some(VersionInfo { id, timestamp })
}

/// The three values of every key known here or on `remote`.
pub(super) struct Sides {
    pub(super) local: BTreeMap<String, ObjectId>,
    pub(super) base: BTreeMap<String, ObjectId>,
    pub(super) remote: BTreeMap<String, ObjectId>,
    /// The remote's keys that hold a secret, redacted: never taken.
    pub(super) secret_keys: Vec<String>,
    /// After `redact --history`: the keys whose remote brief holds a
    /// secret, held alone (never taken; pushed only when named).
    pub(super) held: BTreeMap<String, super::held::HeldKey>,
}

impl Sides {
    /// Read the three namespaces; names that are not valid keys (a ref
    /// nested deeper, say) are not briefs and are left alone.
    pub(super) fn read(repo: &gix::Repository, remote: &str) -> Result<Sides> {
        Sides::with_tips(repo, remote, remotes::ids_under(repo, &tip_prefix(remote))?)
    }

    /// [`Sides::read`], with the remote's values (by the rest of their
    /// names below the staging prefix) read already.
    pub(super) fn with_tips(
        repo: &gix::Repository,
        remote: &str,
        mut theirs: BTreeMap<String, ObjectId>,
    ) -> Result<Sides> {
        let keys_under = |prefix: &str| -> Result<BTreeMap<String, ObjectId>> {
            let mut ids = remotes::ids_under(repo, prefix)?;
            ids.retain(|key, _| crate::brief::keys::validate(key).is_ok());
            Ok(ids)
        };
        let options = redact::Options::from_repo(repo);
        theirs.retain(|key, _| crate::brief::keys::validate(key).is_ok());
        let mut secret_keys = Vec::new();
        // Each key's verdict is kept in the gate cache: a remote's keys
        // are asked of every push and fetch, and rarely change.
        let mut cache = crate::sync::gate_cache::GateCache::load(repo, options);
        let all_clean = cache.are_clean_keys(theirs.keys().map(String::as_str));
        theirs.retain(|key, _| {
            if all_clean {
                return true;
            }
            if cache.is_clean_key(key) {
                return true;
            }
            let secret = redact::key_rule(key, options).is_some();
            if secret {
                secret_keys.push(crate::sync::gate::shown_key(key, options));
            } else {
                cache.record_clean_key(key);
            }
            !secret
        });
        if !all_clean && secret_keys.is_empty() {
            cache.record_clean_keys(theirs.keys().map(String::as_str));
        }
        cache.save();
        // The bases before the briefs: a write moves a brief on meanwhile,
        // never a base, so no lease is built from a base newer than the
        // brief it goes with.
        let base = keys_under(&base_prefix(remote))?;
        Ok(Sides {
            local: keys_under(REF_PREFIX)?,
            base,
            remote: theirs,
            secret_keys,
            held: BTreeMap::new(),
        })
    }

    /// Record what a reconciliation of `key` committed (`remote`: the
    /// remote's value).
    pub(super) fn apply(&mut self, key: &str, action: Action, remote: Option<ObjectId>) {
        match (action, remote) {
            (Action::Nothing, _) | (Action::TakeRemote, None) => {}
            (Action::SetBase(id), _) => {
                self.base.insert(key.to_string(), id);
            }
            (Action::DeleteBase, _) => {
                self.base.remove(key);
            }
            (Action::TakeRemote, Some(r)) => {
                self.local.insert(key.to_string(), r);
                self.base.insert(key.to_string(), r);
            }
        }
    }

    /// Read `key`'s local brief and base again (after a lost race).
    pub(super) fn reread(&mut self, repo: &gix::Repository, remote: &str, key: &str) -> Result<()> {
        let set = |map: &mut BTreeMap<String, ObjectId>, id: Option<ObjectId>| match id {
            Some(id) => map.insert(key.to_string(), id),
            None => map.remove(key),
        };
        set(&mut self.local, store::current_id(repo, key)?);
        set(&mut self.base, history::peel(repo, &base_ref(remote, key))?);
        Ok(())
    }

    pub(super) fn keys(&self) -> BTreeSet<String> {
        self.local
            .keys()
            .chain(self.base.keys())
            .chain(self.remote.keys())
            .cloned()
            .collect()
    }

    pub(super) fn get(&self, key: &str) -> (Option<ObjectId>, Option<ObjectId>, Option<ObjectId>) {
        (
            self.local.get(key).copied(),
            self.base.get(key).copied(),
            self.remote.get(key).copied(),
        )
    }
}
