//! Fetch: the remote's values into the staging namespace (nothing when
//! `git ls-remote` lists exactly what the last fetch staged; else their
//! objects fetched by id and the staging refs moved in one transaction,
//! or `git fetch` with the refspecs where that cannot be), validation of the
//! remote's notes history before it is published (only the commits the
//! known histories lack), the notes merge, then the three-way
//! reconciliation of every key (one transaction per key), and the fetch
//! report.

use std::collections::BTreeMap;

use anyhow::Result;
use gix::ObjectId;
use gix::refs::transaction::RefEdit;
use serde::Serialize;

use super::notes::merge_notes;
use super::reconcile::{Action, classify};
use super::refs::{
    Sides, Stamps, delete, is_brief, mirror, newer_version, previous, set, transaction,
};
use super::{VersionInfo, hex};
use crate::brief::redact;
use crate::store::history;
use crate::store::remotes::{self, base_ref, tip_prefix};
use crate::store::{self, NOTES_REF, REF_PREFIX};

/// Where one key stands with a remote after a fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Both sides hold the same version.
    UpToDate,
    /// The key was new here: created from the remote.
    Created,
    /// The local version was the agreed one: moved to the remote's.
    FastForwarded,
    /// Dropped here, but changed on the remote since: the remote's version
    /// was restored.
    Restored,
    /// The local version is newer; `push` sends it.
    Ahead,
    /// The key exists only here; `push` sends it.
    LocalOnly,
    /// Both sides changed since they last agreed; neither is replaced.
    Diverged,
    /// Dropped here, unchanged on the remote; `push --prune` deletes it there.
    DroppedHere,
    /// Deleted on the remote; kept here.
    DeletedRemotely,
    /// Deleted on both sides; the base was removed.
    Gone,
    /// The local brief changed while fetching; left as it was.
    Conflict,
    /// The remote's value is not a valid brief; nothing was taken from it.
    Invalid,
    /// The remote's value is a brief a newer git-handoff wrote (a schema
    /// version or a field this one does not know): carried verbatim, never
    /// taken, replaced or deleted here.
    Newer,
    /// The remote holds an older version of this key, one already in the
    /// local history (a stale clone's plain push rolled it back): the
    /// local brief is kept and the next push repairs the remote.
    RolledBack,
    /// The remote's key holds a secret: nothing was taken (the key shown
    /// is redacted).
    SecretKey,
    /// After `redact --history` here: the remote's brief of this key holds
    /// a secret, so the key is held alone (nothing taken, the rest
    /// reconciled; `secret` says which rules).
    HeldSecret,
}

/// One key's result of a fetch.
#[derive(Debug, Clone, Serialize)]
pub struct KeyReport {
    /// The key.
    pub key: String,
    /// Where it stands.
    pub status: Status,
    /// The local version after the fetch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local: Option<VersionInfo>,
    /// The remote's version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote: Option<VersionInfo>,
    /// The local version before the fetch, when the fetch replaced it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replaced: Option<VersionInfo>,
    /// Why the key is held ([`Status::HeldSecret`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<super::held::HeldKey>,
    /// The schema version of a brief a newer git-handoff wrote
    /// ([`Status::Newer`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
}

/// What happened to the notes history in a fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "result", content = "commit")]
pub enum NotesMerge {
    /// The remote has no history yet.
    NoRemoteHistory,
    /// The local history already contains the remote's.
    UpToDate,
    /// There was no local history: it is now the remote's.
    Created(#[serde(serialize_with = "hex")] ObjectId),
    /// The remote's history contains the local one: moved to it.
    FastForwarded(#[serde(serialize_with = "hex")] ObjectId),
    /// Both had new versions: a merge commit with both as parents.
    Merged(#[serde(serialize_with = "hex")] ObjectId),
    /// The remote's notes ref is not a notes history (not a commit, or a
    /// tree holding more than notes): nothing was taken from it.
    Ignored(#[serde(serialize_with = "hex")] ObjectId),
    /// The remote's history (this commit) lacks versions the local one
    /// holds: `push` sends them.
    Behind(#[serde(serialize_with = "hex")] ObjectId),
    /// The remote's history went back: it lacks commits it held at the
    /// last fetch or push (a forced or stale push). Nothing was lost here;
    /// `push` repairs it.
    /// After `redact --history` here: the remote's history (at `theirs`)
    /// holds secrets; its other lines were merged without them (`commit`,
    /// none when nothing else was new), on top of the local history alone.
    /// The remote keeps them until its history is replaced with this one.
    Held {
        /// The merge commit, if one was made.
        #[serde(serialize_with = "super::hex_opt")]
        commit: Option<ObjectId>,
        /// The remote's history.
        #[serde(serialize_with = "hex")]
        theirs: ObjectId,
        /// How many distinct lines were left out.
        left_out: usize,
    },
    RolledBack {
        /// The remote's tip now.
        #[serde(serialize_with = "hex")]
        now: ObjectId,
        /// The tip it held before, which contains `now`.
        #[serde(serialize_with = "hex")]
        was: ObjectId,
    },
}

/// The result of a fetch.
#[derive(Debug, Clone, Serialize)]
pub struct FetchReport {
    /// The remote fetched from.
    pub remote: String,
    /// Every key known on either side, sorted.
    pub keys: Vec<KeyReport>,
    /// The notes merge.
    pub history: NotesMerge,
    /// With [`NotesMerge::Held`]: what holds the secrets left out (key,
    /// version and rule, never the secret).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
    /// The remote's refs under git-handoff's own bookkeeping namespaces
    /// (`refs/handoff-fetch/`, `refs/handoff-remotes/`,
    /// `refs/handoff-push/`): a plain `git push --mirror` copied them
    /// there, where nothing reads them. Empty when there are none (or the
    /// remote could not be listed).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub bookkeeping: Vec<String>,
}

impl FetchReport {
    /// The keys that diverged.
    pub fn diverged(&self) -> impl Iterator<Item = &KeyReport> {
        self.keys.iter().filter(|k| k.status == Status::Diverged)
    }

    /// Whether something needs the user: a diverged key or a conflict.
    pub fn has_conflicts(&self) -> bool {
        self.keys
            .iter()
            .any(|k| matches!(k.status, Status::Diverged | Status::Conflict))
    }
}

pub(super) fn fetch_refspecs(remote: &str, briefs: bool) -> Vec<String> {
    let mut specs = Vec::new();
    if briefs {
        specs.push(format!("+{REF_PREFIX}*:{}*", tip_prefix(remote)));
    }
    // A glob, so that a remote without history is not an error.
    specs.push(format!(
        "+{NOTES_REF}*:{}*",
        remotes::staged_notes_ref(remote)
    ));
    specs
}

/// Bring the staging namespace up to date with `remote`: `git ls-remote`
/// first, and only when what the remote lists differs from what the last
/// fetch staged, the listed values staged ([`stage_listed`]), or `git
/// fetch` with the refspecs where that cannot be: a fetch with nothing
/// new is one ref listing. When the listing fails, `git fetch` runs and
/// says why.
/// Returns the remote's brief values as staged, by key, and the names of
/// its refs under git-handoff's bookkeeping namespaces (as listed).
fn refresh_staging(
    repo: &gix::Repository,
    remote: &str,
) -> Result<(BTreeMap<String, ObjectId>, Vec<String>)> {
    let staging = remotes::staging_prefix(remote);
    let mut staged = remotes::ids_under(repo, &staging)?;
    let listing = super::git::ls_remote(repo, remote);
    // A remote key that holds a secret is never stored here, not even
    // staged (a `git push --mirror` would copy the name on): left out of
    // the staging, kept in memory for the report.
    let options = redact::Options::from_repo(repo);
    // Each key's verdict comes from the gate cache, as `Sides` reads it:
    // the rules run once per key, not on every fetch.
    let mut cache = crate::sync::gate_cache::GateCache::load(repo, options);
    let mut holds_secret = |key: &str| {
        if cache.is_clean_key(key) {
            return false;
        }
        let secret = redact::key_rule(key, options).is_some();
        if !secret {
            cache.record_clean_key(key);
        }
        secret
    };
    let (listing, secret) = match listing {
        Ok((listed, names)) => {
            let (secret, listed) = split_secret_keys(listed, &mut holds_secret);
            (Ok((listed, names)), secret)
        }
        Err(e) => (Err(e), BTreeMap::new()),
    };
    let current = listing
        .as_ref()
        .is_ok_and(|(listed, _)| *listed == by_remote_name(&staged));
    if !current {
        let staged_here = match &listing {
            Ok((listed, _)) => stage_listed(repo, remote, listed, &staged)?,
            Err(_) => false,
        };
        if !staged_here {
            git_fetch_leaving_out(repo, remote, true, secret.keys())?;
        }
        staged = remotes::ids_under(repo, &staging)?;
    }
    // What a plain `git fetch` (init's refspecs) staged of such a key goes.
    staged = forget_secret_keys(repo, &staging, staged, &mut holds_secret)?;
    cache.save();
    let bookkeeping = listing.map(|(_, names)| names).unwrap_or_default();
    // A name with a `/` below `refs/handoffs/` is no key (a key is one
    // ref component): never taken, never pushed over.
    let mut tips: BTreeMap<String, ObjectId> = staged
        .into_iter()
        .filter_map(|(rest, id)| Some((rest.strip_prefix("briefs/")?.to_string(), id)))
        .filter(|(key, _)| !key.contains('/'))
        .collect();
    tips.extend(secret);
    Ok((tips, bookkeeping))
}

/// The listed refs split: the keys that hold a secret (by key, with
/// their values), and the rest (by the remote's names).
fn split_secret_keys(
    listed: BTreeMap<String, ObjectId>,
    holds_secret: &mut dyn FnMut(&str) -> bool,
) -> (BTreeMap<String, ObjectId>, BTreeMap<String, ObjectId>) {
    let mut secret = BTreeMap::new();
    let mut rest = BTreeMap::new();
    for (name, id) in listed {
        match name.strip_prefix(REF_PREFIX) {
            Some(key) if holds_secret(key) => {
                secret.insert(key.to_string(), id);
            }
            _ => {
                rest.insert(name, id);
            }
        }
    }
    (secret, rest)
}

/// Delete the staged refs (`staged`, below `staging`) of keys that hold a
/// secret; the rest.
fn forget_secret_keys(
    repo: &gix::Repository,
    staging: &str,
    mut staged: BTreeMap<String, ObjectId>,
    holds_secret: &mut dyn FnMut(&str) -> bool,
) -> Result<BTreeMap<String, ObjectId>> {
    let secret: Vec<(String, ObjectId)> = staged
        .iter()
        .filter(|(rest, _)| rest.strip_prefix("briefs/").is_some_and(&mut *holds_secret))
        .map(|(rest, id)| (rest.clone(), *id))
        .collect();
    if secret.is_empty() {
        return Ok(staged);
    }
    let mut edits = Vec::new();
    for (rest, id) in &secret {
        edits.push(delete(&format!("{staging}{rest}"), previous(Some(*id)))?);
        staged.remove(rest);
    }
    transaction(repo, edits)?;
    Ok(staged)
}

/// The refs a fetch staged (by the rest of their names below the staging
/// prefix), by their names on the remote (what the refspecs of
/// [`fetch_refspecs`] map back to).
fn by_remote_name(staged: &BTreeMap<String, ObjectId>) -> BTreeMap<String, ObjectId> {
    staged
        .iter()
        .filter_map(|(rest, id)| Some((remote_name(rest)?, *id)))
        .collect()
}

/// The remote's name of the ref staged as `rest` (below the remote's
/// staging prefix), when the refspecs of [`fetch_refspecs`] map one
/// there; the inverse of [`staged_name`].
fn remote_name(rest: &str) -> Option<String> {
    if let Some(key) = rest.strip_prefix("briefs/") {
        return Some(format!("{REF_PREFIX}{key}"));
    }
    let tail = rest.strip_prefix(NOTES_REF.trim_start_matches("refs/"))?;
    Some(format!("{NOTES_REF}{tail}"))
}

/// The reflog message of every ref a fetch from `remote` moves.
pub(super) fn fetch_reflog(remote: &str) -> String {
    format!("handoff: fetch {remote}")
}

/// Stage what `git ls-remote` listed (`listed`, by the remote's names)
/// without a ref file per key: `git fetch` the objects of the values that
/// changed by their ids (no ref is written by git), then move the staging
/// refs in one compare-and-swap transaction against `staged` (what they
/// held before the listing; one rewrite of `packed-refs` when many, see
/// [`transaction`]) — the values, and the pruning, that `git fetch` with
/// the refspecs of [`fetch_refspecs`] gives. A fresh clone's first fetch
/// of a team's thousand keys then creates no thousand ref files, and
/// every later command reads them packed.
///
/// `Ok(false)` when this cannot stage them, and nothing was written: a
/// name git would not take, an id the remote no longer serves (it moved
/// since the listing), a staging ref another process moved meanwhile.
/// The caller runs `git fetch` with the refspecs then, as it always did.
fn stage_listed(
    repo: &gix::Repository,
    remote: &str,
    listed: &BTreeMap<String, ObjectId>,
    staged: &BTreeMap<String, ObjectId>,
) -> Result<bool> {
    let staging = remotes::staging_prefix(remote);
    let mut want: BTreeMap<String, ObjectId> = BTreeMap::new();
    for (name, id) in listed {
        match staged_name(name) {
            Some(rest) => want.insert(rest, *id),
            None => return Ok(false),
        };
    }
    let mut edits = Vec::new();
    let mut fetch: Vec<ObjectId> = Vec::new();
    let message = fetch_reflog(remote);
    for (rest, id) in &want {
        let before = staged.get(rest).copied();
        if before != Some(*id) {
            let name = format!("{staging}{rest}");
            let Ok(edit) = set(&name, previous(before), *id, &message) else {
                return Ok(false);
            };
            edits.push(edit);
            fetch.push(*id);
        }
    }
    // Pruned as `git fetch --prune` prunes: what the refspecs map to, only.
    for (rest, id) in staged {
        if remote_name(rest).is_some() && !want.contains_key(rest) {
            edits.push(delete(&format!("{staging}{rest}"), previous(Some(*id)))?);
        }
    }
    if !fetch_ids(repo, remote, &fetch)? {
        return Ok(false);
    }
    // A transaction git's files backend cannot take (a key the remote
    // turned into a folder, `a` → `a/b`, or the reverse) is left to `git
    // fetch`, which prunes before it updates.
    Ok(transaction(repo, edits).unwrap_or(false))
}

/// The name below a remote's staging prefix that the refspecs of
/// [`fetch_refspecs`] map the remote's ref `name` to; the inverse of
/// [`remote_name`].
fn staged_name(name: &str) -> Option<String> {
    if let Some(key) = name.strip_prefix(REF_PREFIX) {
        return Some(format!("briefs/{key}"));
    }
    let tail = name.strip_prefix(NOTES_REF)?;
    Some(format!("{}{tail}", NOTES_REF.trim_start_matches("refs/")))
}

/// `git fetch` the objects `ids` (values `git ls-remote` listed) from
/// `remote`, writing no ref; git skips the network when they are here
/// already, whole. Whether every one of them is here afterwards.
fn fetch_ids(repo: &gix::Repository, remote: &str, ids: &[ObjectId]) -> Result<bool> {
    if ids.is_empty() {
        return Ok(true);
    }
    let mut args: Vec<&str> = FETCH_FLAGS.to_vec();
    args.extend(["--refmap=", "--stdin", remote]);
    let input: String = ids.iter().map(|id| format!("{id}\n")).collect();
    let run = crate::git::cmd::run(repo, &args, Some(input.as_bytes()))?;
    Ok(run.ok && ids.iter().all(|id| repo.has_object(id)))
}

/// What every `git fetch` of the remote's briefs and history runs with:
/// no tags, no `FETCH_HEAD`, no submodules, and, in a partial clone, no
/// filter (the remote's would leave the briefs' blobs and the notes trees
/// behind: they come whole).
const FETCH_FLAGS: [&str; 6] = [
    "fetch",
    "--quiet",
    "--no-tags",
    "--no-write-fetch-head",
    "--recurse-submodules=no",
    "--no-filter",
];

/// `git fetch` the remote's briefs and notes into the staging namespace
/// (pruned there, never anywhere else).
pub(super) fn git_fetch(repo: &gix::Repository, remote: &str, briefs: bool) -> Result<()> {
    git_fetch_leaving_out(repo, remote, briefs, std::iter::empty())
}

/// [`git_fetch`], leaving out the remote's `keys` (negative refspecs), so
/// that git stores no ref of theirs.
fn git_fetch_leaving_out<'k>(
    repo: &gix::Repository,
    remote: &str,
    briefs: bool,
    keys: impl Iterator<Item = &'k String>,
) -> Result<()> {
    let mut args: Vec<String> = FETCH_FLAGS.iter().map(|s| s.to_string()).collect();
    args.extend(["--prune".to_string(), remote.to_string()]);
    args.extend(fetch_refspecs(remote, briefs));
    args.extend(keys.map(|key| format!("^{REF_PREFIX}{key}")));
    let run = super::git::git_retrying_local_races(repo, &args)?;
    if !run.ok {
        return Err(super::git::fetch_failure(remote, &run.stderr));
    }
    Ok(())
}

/// What `fetch` was asked to do.
#[derive(Debug, Clone, Copy, Default)]
pub struct FetchOptions {
    /// Take history lines and briefs that carry a secret even after
    /// `redact --history` was run here.
    pub allow_secrets: bool,
}

/// Fetch `remote`'s briefs into the staging namespace and its notes into
/// `refs/handoff-remotes/<remote>/notes` (once validated), merge the notes
/// history (union of lines), then reconcile every key three-way, each key
/// in its own transaction (brief and base together). Never deletes a local
/// brief.
pub fn fetch_with(
    repo: &gix::Repository,
    remote: &str,
    options: FetchOptions,
) -> Result<FetchReport> {
    let _lock = super::lock::hold(repo, remote)?;
    Ok(fetch_sides(repo, remote, options)?.0)
}

/// [`fetch_with`], and the three sides of every key after it (so that a
/// push plans from them without reading every ref again).
pub(super) fn fetch_sides(
    repo: &gix::Repository,
    remote: &str,
    options: FetchOptions,
) -> Result<(FetchReport, Sides)> {
    remotes::migrate(repo)?;
    history::check_tip(repo, NOTES_REF)?;
    let (tips, bookkeeping) = refresh_staging(repo, remote)?;
    crate::support::failpoint::reach("fetch-staged");
    let (mut report, sides) = reconcile_staged(repo, remote, tips, options)?;
    report.bookkeeping = bookkeeping;
    Ok((report, sides))
}

/// The local part of a fetch, no network: validate what the staging
/// namespace holds from `remote` (`tips`: its brief values by key), pass it
/// through the secret gate, merge the notes history and reconcile every
/// key three-way. What [`fetch_sides`] runs after `git fetch`, and what
/// takes the values a plain `git fetch` staged (`super::staged`).
pub(super) fn reconcile_staged(
    repo: &gix::Repository,
    remote: &str,
    tips: BTreeMap<String, ObjectId>,
    options: FetchOptions,
) -> Result<(FetchReport, Sides)> {
    let reading = super::staged::Reading::start(repo, remote, &tips);
    let local_notes_before = history::peel(repo, NOTES_REF)?;
    // What the last reconcile published of the remote's history (`git
    // fetch` stages, it never moves this ref).
    let published_before = history::peel(repo, &remotes::notes_ref(remote))?;
    let staged = staged_notes(repo, remote)?;
    let returning = match !options.allow_secrets && crate::sync::gate::history_redacted(repo) {
        true => super::held::returning(repo, remote, staged.valid(), local_notes_before)?,
        false => Default::default(),
    };
    let left_out: Vec<String> = returning.in_history.iter().map(|f| f.to_string()).collect();
    // The history first: every version a brief ref is about to take from
    // the remote is then already in the local history, so that a fetch
    // killed between two keys never leaves a brief whose version `log`
    // cannot show. The three-way rules read the pre-merge histories.
    let (remote_notes, history) = match (staged.valid(), left_out.is_empty()) {
        (Some(theirs), false) => {
            // Never published: the rules read the remote's history as
            // of the last fetch.
            let merge = super::held::merge_clean(repo, remote, theirs, &returning.lines)?;
            (published_before, merge)
        }
        _ => {
            let remote_notes = publish_remote_notes(repo, remote, staged)?;
            let history = match staged {
                Staged::Invalid(id) => NotesMerge::Ignored(id),
                Staged::Valid(_) => merge_notes(repo, remote, remote_notes)?,
            };
            let history = super::notes::behind(repo, history, remote_notes, published_before)?;
            (remote_notes, history)
        }
    };
    crate::support::failpoint::reach("fetch-history-merged");

    let mut sides = Sides::with_tips(repo, remote, tips)?;
    sides.held = returning
        .keys
        .into_iter()
        .filter(|(_, h)| h.in_brief)
        .collect();
    // What holds a secret is not kept here, not even staged (`log` and
    // `show KEY@REMOTE` read the staged values).
    let held_history = staged.valid().filter(|_| !left_out.is_empty());
    super::held::forget(repo, remote, &sides, held_history)?;
    let mut keys = reconcile_keys(repo, remote, &mut sides, (local_notes_before, remote_notes))?;
    remotes::record_fetched(repo, remote);
    if history::peel(repo, NOTES_REF)? != local_notes_before || remote_notes != published_before {
        index_arrived_history(repo);
    }
    keys.sort_by(|a, b| a.key.cmp(&b.key));
    let report = FetchReport {
        remote: remote.to_string(),
        keys,
        history,
        left_out,
        bookkeeping: Vec::new(),
    };
    if super::staged::settled(&report) {
        reading.record(repo, remote);
    }
    Ok((report, sides))
}

/// Extend (or build) the history index to the notes tips as they are now,
/// where the remote's history arrived: the first `log KEY` after a fetch
/// then reads only that key's lines. The index is a cache: when it cannot
/// be built here, `log` builds it (and says why it cannot).
fn index_arrived_history(repo: &gix::Repository) {
    if let Ok(tips) = history::notes_tips(repo) {
        let _ = crate::store::history_index::prepare(repo, &tips);
    }
}

/// Reconcile every key three-way — all in one transaction when they are
/// many, each in its own otherwise ([`apply_keys`]) — and keep `sides` as
/// the refs now are; the report rows. `notes` are the local
/// history before the merge and the remote's.
fn reconcile_keys(
    repo: &gix::Repository,
    remote: &str,
    sides: &mut Sides,
    notes: (Option<ObjectId>, Option<ObjectId>),
) -> Result<Vec<KeyReport>> {
    let message = fetch_reflog(remote);
    let mut keys = secret_key_reports(sides);
    let redact_options = redact::Options::from_repo(repo);
    let mut stamps = Stamps::new(repo);
    keys.extend(super::held::key_reports(repo, sides, &mut stamps));
    let mut graph = None;
    let mut pending = Vec::new();
    for key in sides.keys() {
        if sides.held.contains_key(&key) {
            continue;
        }
        pending.push(plan_key(
            repo, remote, sides, key, notes, &mut graph, &message,
        )?);
    }
    apply_keys(repo, remote, sides, &mut pending)?;
    let diverged: Vec<(String, ObjectId, ObjectId)> = pending
        .iter()
        .filter(|p| p.status == Status::Diverged)
        .filter_map(|p| Some((p.key.clone(), p.l?, p.r?)))
        .collect();
    remotes::record_divergences(repo, remote, &diverged)?;
    let taken: Vec<(String, ObjectId, ObjectId)> = pending
        .iter()
        .filter(|p| p.action == Action::TakeRemote && p.status != Status::Conflict)
        .filter_map(|p| Some((p.key.clone(), p.l?, p.r?)))
        .collect();
    remotes::carry_taken(repo, remote, &taken)?;
    for p in pending {
        let took = p.action == Action::TakeRemote && p.status != Status::Conflict;
        if p.status == Status::Gone && p.action == Action::Nothing {
            continue;
        }
        keys.push(KeyReport {
            key: crate::sync::gate::redacted_key(&p.key, redact_options),
            status: p.status,
            local: stamps.info(if took { p.r } else { p.l }),
            remote: stamps.info(p.r),
            replaced: if took { stamps.info(p.l) } else { None },
            secret: None,
            schema: (p.status == Status::Newer)
                .then(|| p.r.and_then(|r| newer_version(repo, Some(r), &p.key)))
                .flatten(),
        });
    }
    stamps.save();
    Ok(keys)
}

/// One key's answer before its refs move: where it stands, what to do and
/// the ref edits that do it.
struct Pending {
    key: String,
    status: Status,
    action: Action,
    l: Option<ObjectId>,
    r: Option<ObjectId>,
    edits: Vec<RefEdit>,
}

/// Classify `key` from its three sides and the version graph, and plan
/// its edits (nothing is written). Two different values are placed by
/// the graph alone ([`by_graph`]); the bases decide the rest (the same
/// value on both sides, or a value on one side only: [`classify`]). The
/// graph is read once, for the first key that needs it (never for a
/// fetch whose keys are only ahead here).
fn plan_key(
    repo: &gix::Repository,
    remote: &str,
    sides: &Sides,
    key: String,
    notes: (Option<ObjectId>, Option<ObjectId>),
    graph: &mut Option<crate::store::lineage::Graph>,
    message: &str,
) -> Result<Pending> {
    let (l, b, r) = sides.get(&key);
    let answer = match (l, r) {
        (Some(l), Some(r)) if l != r => by_graph(repo, graph, &key, (l, b, r), notes)?,
        _ => classify(l, b, r, &mut || Ok((false, false)))?,
    };
    let (status, action) = not_a_brief(repo, &key, r, answer);
    let edits = reconcile_edits(&key, remote, (l, b, r), action, message)?;
    Ok(Pending {
        key,
        status,
        action,
        l,
        r,
        edits,
    })
}

/// Two different values placed by the version graph: the remote's a
/// descendant of the local one (fast-forward), an ancestor of it (ahead
/// here; a rollback when the remote held the local value before), or
/// neither (diverged, whatever the bases say). Two different blobs never
/// stand for the same version (a version id binds its blob), so the graph
/// always answers.
fn by_graph(
    repo: &gix::Repository,
    graph: &mut Option<crate::store::lineage::Graph>,
    key: &str,
    (l, b, r): (ObjectId, Option<ObjectId>, ObjectId),
    (local_before, remote_notes): (Option<ObjectId>, Option<ObjectId>),
) -> Result<(Status, Action)> {
    use crate::store::lineage::{Graph, Relation};
    if graph.is_none() {
        let extra: Vec<ObjectId> = local_before.into_iter().chain(remote_notes).collect();
        *graph = Some(Graph::of_repo(repo, &extra)?);
    }
    let graph = graph.as_mut().expect("just made");
    Ok(match graph.relation(key, l, r)? {
        Relation::Behind => (Status::FastForwarded, Action::TakeRemote),
        Relation::Ahead if b == Some(r) => (Status::Ahead, Action::Nothing),
        Relation::Ahead if b == Some(l) => (Status::RolledBack, Action::SetBase(r)),
        Relation::Ahead => (Status::Ahead, Action::SetBase(r)),
        Relation::Diverged | Relation::Same => (Status::Diverged, Action::Nothing),
    })
}

/// A remote value about to be taken, or called diverged, that this
/// version cannot read: a newer git-handoff's brief (carried verbatim,
/// never taken) or no brief at all (ignored).
fn not_a_brief(
    repo: &gix::Repository,
    key: &str,
    r: Option<ObjectId>,
    (status, action): (Status, Action),
) -> (Status, Action) {
    if (action == Action::TakeRemote || status == Status::Diverged) && !is_brief(repo, r, key) {
        return match newer_version(repo, r, key) {
            Some(_) => (Status::Newer, Action::Nothing),
            None => (Status::Invalid, Action::Nothing),
        };
    }
    (status, action)
}

/// Move the refs of every planned key: all in one transaction when they
/// are many (one rewrite of `packed-refs`, not a lock file per ref: a
/// fresh clone's first fetch creates a brief and a base per key), key by
/// key otherwise or when that transaction lost a compare-and-swap (then
/// nothing of it was written). A key whose own transaction lost is a
/// conflict, its sides read again.
fn apply_keys(
    repo: &gix::Repository,
    remote: &str,
    sides: &mut Sides,
    pending: &mut [Pending],
) -> Result<()> {
    let count: usize = pending.iter().map(|p| p.edits.len()).sum();
    if count >= crate::store::packed::PACKED_AT
        && transaction(repo, pending.iter().flat_map(|p| p.edits.clone()).collect())?
    {
        for p in pending.iter() {
            sides.apply(&p.key, p.action, p.r);
        }
        crate::support::failpoint::reach("fetch-key-reconciled");
        return Ok(());
    }
    for p in pending.iter_mut() {
        let changes = !p.edits.is_empty();
        if transaction(repo, std::mem::take(&mut p.edits))? {
            sides.apply(&p.key, p.action, p.r);
        } else {
            p.status = Status::Conflict;
            sides.reread(repo, remote, &p.key)?;
        }
        if changes {
            crate::support::failpoint::reach("fetch-key-reconciled");
        }
    }
    Ok(())
}

/// The report rows of the keys that hold a secret (never fetched, shown
/// redacted).
pub(super) fn secret_key_reports(sides: &Sides) -> Vec<KeyReport> {
    sides
        .secret_keys
        .iter()
        .map(|shown| KeyReport {
            key: shown.clone(),
            status: Status::SecretKey,
            local: None,
            remote: None,
            replaced: None,
            secret: None,
            schema: None,
        })
        .collect()
}

/// The ref edits of one key's reconciliation.
pub(super) fn reconcile_edits(
    key: &str,
    remote: &str,
    (l, b, r): (Option<ObjectId>, Option<ObjectId>, Option<ObjectId>),
    action: Action,
    message: &str,
) -> Result<Vec<RefEdit>> {
    let base_name = base_ref(remote, key);
    Ok(match action {
        Action::Nothing => vec![],
        Action::SetBase(id) => vec![set(&base_name, previous(b), id, message)?],
        Action::DeleteBase => vec![delete(&base_name, previous(b))?],
        Action::TakeRemote => {
            let r = r.expect("taking the remote's value needs one");
            // The brief before the base (refs are committed in order):
            // killed between the two, the next fetch finds local = remote
            // (up to date), never a base ahead of the brief.
            vec![
                set(&store::ref_name(key), previous(l), r, message)?,
                set(&base_name, previous(b), r, message)?,
            ]
        }
    })
}

/// The remote's notes tip as fetched into the staging namespace.
#[derive(Debug, Clone, Copy)]
pub(super) enum Staged {
    /// A notes history (or none at all).
    Valid(Option<ObjectId>),
    /// Something else: never published, never merged.
    Invalid(ObjectId),
}

impl Staged {
    pub(super) fn valid(self) -> Option<ObjectId> {
        match self {
            Staged::Valid(id) => id,
            Staged::Invalid(_) => None,
        }
    }
}

/// Read and validate the staged notes tip: a chain of commits whose trees
/// hold only notes. What was already validated (the published remote
/// notes, the local history) is not walked again. Checked where the
/// history index is extended to it
/// ([`crate::store::history_index::check`]: one walk for both), else (or
/// when that walk does not show it) by the secret gate's walk, whose
/// verdict stands.
pub(super) fn staged_notes(repo: &gix::Repository, remote: &str) -> Result<Staged> {
    let Some(tip) = history::peel(repo, &remotes::staged_notes_ref(remote))? else {
        return Ok(Staged::Valid(None));
    };
    let local = history::peel(repo, NOTES_REF)?;
    let known: Vec<ObjectId> = [history::peel(repo, &remotes::notes_ref(remote))?, local]
        .into_iter()
        .flatten()
        .collect();
    if known.contains(&tip) {
        return Ok(Staged::Valid(Some(tip)));
    }
    // One walk both checks the new commits and indexes their lines for
    // `log` — unless a secret may come back with them (after `redact
    // --history` here), which must not land in an index file.
    if !crate::sync::gate::history_redacted(repo)
        && crate::store::history_index::check(repo, &Vec::from_iter(local), tip)
    {
        return Ok(Staged::Valid(Some(tip)));
    }
    let mut walk = crate::sync::gate::NotesWalk::default();
    walk.mark_known_from(repo, &known, tip);
    Ok(match walk.add(repo, tip)? {
        Ok(()) => Staged::Valid(Some(tip)),
        Err(_) => Staged::Invalid(tip),
    })
}

/// Copy a validated staged notes tip to `refs/handoff-remotes/<remote>/notes`;
/// an invalid one is left where `git fetch` put it.
pub(super) fn publish_remote_notes(
    repo: &gix::Repository,
    remote: &str,
    staged: Staged,
) -> Result<Option<ObjectId>> {
    let Staged::Valid(staged) = staged else {
        return history::peel(repo, &remotes::notes_ref(remote));
    };
    mirror(
        repo,
        &remotes::notes_ref(remote),
        staged,
        &fetch_reflog(remote),
    )?;
    Ok(staged)
}
