//! Push: plan each key's send (lease, gate), build the `git push` command
//! lines (one unless the argument list would overflow), run them, and apply
//! the remote's answers to the local bases; the notes history goes with the
//! first batch and is merged and retried when another pusher moved it.
//! A push is tried optimistically first, with no fetch
//! (`super::optimistic`); it fetches first ([`fetch_first`]) when that
//! cannot decide, and after it when a lease failed.

use std::collections::{BTreeSet, HashMap};

use anyhow::{Context, Result};
use gix::ObjectId;
use gix::refs::transaction::{PreviousValue, RefEdit};
use serde::Serialize;

use super::fetch::{Staged, fetch_sides, git_fetch, publish_remote_notes, staged_notes};
use super::git::{GitRun, accepted, git, git_failure, git_reason, porcelain, stale_git_lock};
use super::notes::{NOTES_RETRIES, merge_notes};
use super::outgoing;
use super::reconcile::{Plan, plan};
use super::refs::{Newer, Sides, delete, is_brief, mirror, previous, set, transaction};
use super::{FetchOptions, FetchReport, NotesMerge, hex_opt};
use crate::brief::redact;
use crate::store::history;
use crate::store::lineage::{Graph, Relation};
use crate::store::remotes::{self, base_ref, tip_ref};
use crate::store::{self, NOTES_REF};

/// How many bytes of arguments one `git push` carries at most (without
/// `--atomic`): every key goes in one push unless the command line would
/// overflow (Linux allows 2 MiB of arguments and environment).
pub const PUSH_ARG_BYTES: usize = 1 << 20;

/// The check every brief (and every version of the history) passes before
/// it leaves the machine: it must hold no secret the redaction rules find
/// (`crate::brief::redact`, with `handoff.redactEmails`). JSON is checked string
/// by string, the `key` field and object keys included; other text as
/// text. A brief that fails is not pushed; what was found is named by
/// kind and count, never the secret itself.
pub fn secrets_in(brief: &[u8], options: redact::Options) -> Option<Held> {
    let counts = redact::find_in_line(brief, options);
    let total: usize = counts.values().sum();
    (total > 0).then(|| Held::Secrets {
        total,
        kinds: counts.iter().map(|(k, n)| format!("{n} {k}")).collect(),
    })
}

/// Why a key was not pushed: the fact. `cli::hints` words it, with what
/// to run next, into [`PushedKey::reason`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Held {
    /// Deleted on the remote since the last fetch; kept here.
    DeletedThere,
    /// Both sides changed since they last agreed.
    Diverged,
    /// Dropped here, unchanged on the remote (deleted there only with prune).
    DroppedHere,
    /// Only on the remote.
    NotHere,
    /// Only on the remote, and what it holds there (this id) is not a
    /// valid brief of the key: `push --prune` names the key to delete it.
    NotABrief(ObjectId),
    /// `push --prune` named it, but the remote holds a valid brief that
    /// was not dropped here: not junk, so not deleted.
    ValidThere,
    /// The key holds a secret (the rule) and would become a ref name.
    SecretKey(String),
    /// After `redact --history` here: the remote's brief holds a secret
    /// (these rules), so the key is held; named, the brief here replaces
    /// it there (`here`: there is one), or `--prune` deletes it.
    SecretThere {
        /// The rules that matched.
        rules: Vec<String>,
        /// Whether a brief of the key exists here.
        here: bool,
    },
    /// The brief holds secrets: how many, and how many of each kind.
    Secrets {
        /// Secrets found.
        total: usize,
        /// "<count> <kind>" per kind.
        kinds: Vec<String>,
    },
    /// The remote changed it since the last fetch: the lease failed.
    Stale,
    /// The remote holds a brief a newer git-handoff wrote (this schema
    /// version): never replaced or deleted from here.
    Newer(String),
    /// Another ref of this atomic push was refused.
    AtomicSibling,
    /// The remote refused it, with git's summary.
    Refused(String),
    /// `git push` did not report it, with git's reason.
    Unreported(String),
}

/// Why a push sent nothing. The message states the fact; the command
/// layer adds what to run next (`cli::hints`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PushError {
    /// A key named on the command line exists neither here nor there.
    #[error("no brief '{key}' here or on '{remote}'")]
    UnknownKey {
        /// The key.
        key: String,
        /// The remote.
        remote: String,
    },
}

/// What `push` was asked to do.
#[derive(Debug, Clone, Default)]
pub struct PushOptions {
    /// Push only these keys (all when empty).
    pub keys: Vec<String>,
    /// Delete remotely the keys dropped here.
    pub prune: bool,
    /// Show what would go; change nothing, here or there.
    pub dry_run: bool,
    /// All refs in one `git push --atomic`: all or none.
    pub atomic: bool,
}

/// One key's result of a push.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Sent (with `--dry-run`: would be sent).
    Pushed,
    /// Deleted remotely (with `--dry-run`: would be).
    Deleted,
    /// The remote refused: it moved since the last fetch, or a hook said no.
    Rejected,
    /// Not pushed: both sides changed.
    Diverged,
    /// Not pushed: the pre-push check found something that must not leave.
    Refused,
    /// Not pushed, by design (deleted remotely, dropped here without
    /// `--prune`, or not reconciled yet).
    Skipped,
}

/// One key in a push report.
#[derive(Debug, Clone, Serialize)]
pub struct PushedKey {
    /// The key.
    pub key: String,
    /// What happened.
    pub outcome: Outcome,
    /// The value the remote had to hold (the lease); `None`: must not exist.
    #[serde(serialize_with = "hex_opt")]
    pub lease: Option<ObjectId>,
    /// The value sent (`None` for a deletion or a key not sent).
    #[serde(serialize_with = "hex_opt")]
    pub new: Option<ObjectId>,
    /// Why, when it was not pushed (the fact).
    #[serde(skip)]
    pub held: Option<Held>,
    /// Why, in words, when it was not pushed: filled by the command layer
    /// from `held` (`cli::hints::push_reasons`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// What happened to the notes history in a push.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "result", content = "detail")]
pub enum HistoryPush {
    /// No local history.
    None,
    /// The remote already has it.
    UpToDate,
    /// Sent (with `--dry-run`: would be).
    Pushed(String),
    /// Refused by the remote.
    Rejected(String),
    /// Not sent: versions not yet on the remote hold secrets (which, by
    /// key, version and rule; the command layer adds what removes them).
    Refused(String),
    /// Dry run: the remote's history moved since the last fetch; a real
    /// push merges it first, then sends the result.
    WouldMerge,
    /// Not sent: the remote's notes ref holds this object, which is not a
    /// notes history (fetch took nothing from it); it goes once that ref
    /// is replaced with this history.
    NotNotes(#[serde(serialize_with = "super::hex")] ObjectId),
    /// Not sent: after `redact --history` here, the remote's history
    /// (this commit) holds secrets this one left out, so this one does not
    /// contain it; it goes once the remote's is replaced.
    Held(String),
}

/// How a push learned where the remote stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Route {
    /// A dry run: planned from the last fetch; nothing fetched.
    LastFetch,
    /// Nothing fetched: planned from the values last agreed with the
    /// remote, every send leased on them, and every lease held.
    Optimistic,
    /// Fetched first: the plan needed the remote's current state.
    FetchFirst,
    /// Sent as with [`Route::Optimistic`], but a lease failed (the remote
    /// moved since the last fetch): fetched, reconciled, and the rest sent
    /// again after the fetch.
    Retried,
}

/// The result of a push.
#[derive(Debug, Clone, Serialize)]
pub struct PushReport {
    /// The remote.
    pub remote: String,
    /// Whether this was a dry run.
    pub dry_run: bool,
    /// How it learned where the remote stands.
    pub route: Route,
    /// The fetch that ran (none with `--dry-run`, nor when every lease of
    /// an optimistic push held).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fetch: Option<FetchReport>,
    /// Every key considered that is not already up to date.
    pub keys: Vec<PushedKey>,
    /// The notes history.
    pub history: HistoryPush,
    /// A lock file the remote could not create because it exists (a git
    /// process killed there earlier may have left it), when a ref was
    /// refused for that reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale_lock: Option<String>,
}

impl HistoryPush {
    /// Whether the history was not sent for a reason that makes the push
    /// fail (exit 1): rejected, refused by the gate, or the remote's ref
    /// holds no notes history.
    pub fn refused(&self) -> bool {
        matches!(
            self,
            HistoryPush::Rejected(_) | HistoryPush::Refused(_) | HistoryPush::NotNotes(_)
        )
    }
}

impl PushReport {
    /// Whether any key (or the history) was refused: exit 1.
    pub fn refused(&self) -> bool {
        self.history.refused()
            || self.keys.iter().any(|k| {
                matches!(
                    k.outcome,
                    Outcome::Rejected | Outcome::Diverged | Outcome::Refused
                )
            })
    }
}

/// What a push does to one ref.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RefOp {
    /// Set it to `new` if the remote holds `lease` (`None`: nothing).
    Update {
        lease: Option<ObjectId>,
        new: ObjectId,
    },
    /// Delete it if the remote holds `lease`.
    Delete { lease: ObjectId },
}

impl RefOp {
    fn lease(self) -> Option<ObjectId> {
        match self {
            RefOp::Update { lease, .. } => lease,
            RefOp::Delete { lease } => Some(lease),
        }
    }

    fn new_value(self) -> Option<ObjectId> {
        match self {
            RefOp::Update { new, .. } => Some(new),
            RefOp::Delete { .. } => None,
        }
    }

    /// The `git push` arguments of this op on `name`. A create needs no
    /// lease: a refspec without `+` only creates (git refuses to replace an
    /// existing ref holding a blob without force, and the remote's update
    /// expects the ref absent), and git matches every lease against every
    /// ref pushed, so 10,000 leases cost it minutes.
    fn args(self, name: &str) -> Vec<String> {
        let refspec = match self.new_value() {
            Some(new) => format!("{new}:{name}"),
            None => format!(":{name}"),
        };
        match self.lease() {
            None if self.new_value().is_some() => vec![refspec],
            lease => {
                let lease = lease.map(|l| l.to_string()).unwrap_or_default();
                vec![format!("--force-with-lease={name}:{lease}"), refspec]
            }
        }
    }
}

/// One key a push sends (or deletes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Send {
    key: String,
    op: RefOp,
    /// Sent through the outgoing namespace's glob, not its own refspec.
    pinned: bool,
}

impl Send {
    fn new(key: String, op: RefOp) -> Send {
        Send {
            key,
            op,
            pinned: false,
        }
    }
}

/// Split off the creates to send through the outgoing namespace: all of
/// them when the repository holds many refs (see
/// [`outgoing::PIN_AT_REFS`]), none otherwise or in a dry run (which
/// writes nothing, not even for a moment).
pub(super) fn pinned_creates(
    sides: &Sides,
    sends: Vec<Send>,
    dry_run: bool,
) -> (Vec<Send>, Vec<Send>) {
    let refs = sides.local.len() + sides.base.len() + sides.remote.len();
    if dry_run || refs < outgoing::PIN_AT_REFS {
        return (Vec::new(), sends);
    }
    let (mut pinned, rest): (Vec<Send>, Vec<Send>) = sends
        .into_iter()
        .partition(|s| matches!(s.op, RefOp::Update { lease: None, .. }));
    for send in &mut pinned {
        send.pinned = true;
    }
    (pinned, rest)
}

/// The `git push` batches of `sends`, the pinned creates (if any) first in
/// the first batch, and their outgoing namespace; one empty batch when
/// only the history goes.
fn plan_batches<'r>(
    repo: &'r gix::Repository,
    sides: &Sides,
    sends: Vec<Send>,
    options: &PushOptions,
    history: bool,
) -> Result<(Option<outgoing::Pinned<'r>>, Vec<Vec<Send>>)> {
    let (pinned_sends, sends) = pinned_creates(sides, sends, options.dry_run);
    let pinned = match pinned_sends.as_slice() {
        [] => None,
        creates => {
            let values: Vec<_> = creates
                .iter()
                .filter_map(|s| Some((s.key.clone(), s.op.new_value()?)))
                .collect();
            Some(outgoing::Pinned::pin(repo, &values)?)
        }
    };
    let mut batches: Vec<Vec<Send>> = batches(&sends, options.atomic)
        .into_iter()
        .map(<[Send]>::to_vec)
        .collect();
    if batches.is_empty() && (history || pinned.is_some()) {
        batches.push(Vec::new());
    }
    if let Some(first) = batches.first_mut() {
        first.splice(0..0, pinned_sends);
    }
    Ok((pinned, batches))
}

/// Each selected key's plan: sent (or deleted), or held with a reason.
/// A remote value that is not a brief of the key is replaced; a key or a
/// brief holding a secret is refused (a brief the gate saw clean before,
/// by blob id, is not scanned again).
pub(super) fn plan_keys(
    repo: &gix::Repository,
    sides: &Sides,
    selected: Vec<String>,
    options: &PushOptions,
) -> Result<(Vec<PushedKey>, Vec<Send>)> {
    let redact_options = redact::Options::from_repo(repo);
    let mut cache = crate::sync::gate_cache::GateCache::load(repo, redact_options);
    let mut keys = Vec::new();
    let mut sends = Vec::new();
    let mut graph = None;
    let mut newer = Newer::new(repo);
    for key in selected {
        let p = match sides.get(&key) {
            (l, _, Some(r)) if let Some(held) = sides.held.get(&key) => {
                super::held::plan(&key, held, (l, r), options)
            }
            // A brief a newer git-handoff wrote is carried verbatim: never
            // replaced, nor deleted.
            (_, _, Some(r)) if let Some(schema) = newer.version(r, &key) => {
                Plan::Hold(Outcome::Skipped, Held::Newer(schema))
            }
            // The remote holds something that is not a brief of this key
            // (fetch reported it as ignored): the local brief replaces it,
            // with a lease on exactly that value.
            (Some(l), _, Some(r)) if l != r && !is_brief(repo, Some(r), &key) => Plan::Send {
                lease: Some(r),
                new: l,
            },
            (None, b, Some(r)) if b != Some(r) => only_there(repo, &key, r, options),
            sides_of_key => {
                let relation = relation(repo, &mut graph, &key, sides_of_key)?;
                plan(
                    sides_of_key,
                    relation,
                    !options.keys.is_empty(),
                    options.prune,
                )
            }
        };
        let refused = |lease, held| PushedKey {
            key: crate::sync::gate::redacted_key(&key, redact_options),
            outcome: Outcome::Refused,
            lease,
            new: None,
            held: Some(held),
            reason: None,
        };
        match p {
            Plan::UpToDate => {}
            Plan::Hold(outcome, held) => keys.push(PushedKey {
                lease: sides.remote.get(&key).copied(),
                key,
                outcome,
                new: None,
                held: Some(held),
                reason: None,
            }),
            Plan::Send { lease, .. } if let Some(rule) = redact::key_rule(&key, redact_options) => {
                keys.push(refused(lease, Held::SecretKey(rule.to_string())))
            }
            Plan::Send { lease, new } => {
                let data = repo
                    .find_blob(new)
                    .map(|b| b.detach().data)
                    .with_context(|| format!("cannot read brief '{key}'"))?;
                if cache.is_clean(&new, &data) {
                    sends.push(Send::new(key, RefOp::Update { lease, new }));
                    continue;
                }
                match secrets_in(&data, redact_options) {
                    None => {
                        cache.record_clean(&data);
                        sends.push(Send::new(key, RefOp::Update { lease, new }))
                    }
                    Some(held) => keys.push(refused(lease, held)),
                }
            }
            Plan::Delete { lease } => sends.push(Send::new(key, RefOp::Delete { lease })),
        }
    }
    cache.save();
    newer.save();
    Ok((keys, sends))
}

/// How the local value of `key` stands to the remote's in the version
/// graph (every history here and the remote's as last fetched), when both
/// exist and differ; the graph is read once per push, when first needed.
fn relation(
    repo: &gix::Repository,
    graph: &mut Option<Graph>,
    key: &str,
    (l, _, r): (Option<ObjectId>, Option<ObjectId>, Option<ObjectId>),
) -> Result<Option<Relation>> {
    let (Some(l), Some(r)) = (l, r) else {
        return Ok(None);
    };
    if l == r {
        return Ok(None);
    }
    if graph.is_none() {
        // The checked histories only: the local one and the remote's as
        // fetch validated it (`notes_tips`), never the staged copy.
        *graph = Some(Graph::of_repo(repo, &[])?);
    }
    let graph = graph.as_mut().expect("just made");
    Ok(Some(graph.relation(key, l, r)?))
}

/// The plan of a key only the remote holds (`r`), not dropped here. What
/// is not a valid brief of the key (fetch ignored it) is deleted when
/// `push --prune` names the key, with a lease on exactly that value, and
/// held otherwise; a valid brief is never deleted this way (`push --prune`
/// deletes one only when it was dropped here).
fn only_there(repo: &gix::Repository, key: &str, r: ObjectId, options: &PushOptions) -> Plan {
    let named = options.keys.iter().any(|k| k == key);
    match (is_brief(repo, Some(r), key), named && options.prune) {
        (false, true) => Plan::Delete { lease: r },
        (false, false) => Plan::Hold(Outcome::Skipped, Held::NotABrief(r)),
        (true, true) => Plan::Hold(Outcome::Skipped, Held::ValidThere),
        (true, false) => Plan::Hold(Outcome::Skipped, Held::NotHere),
    }
}

/// The keys `push` considers: all of them, or the named ones (each must
/// exist here or on the remote).
pub(super) fn selected_keys(
    sides: &Sides,
    remote: &str,
    options: &PushOptions,
) -> Result<Vec<String>> {
    let all = sides.keys();
    if options.keys.is_empty() {
        return Ok(all.into_iter().collect());
    }
    for key in &options.keys {
        if !all.contains(key) {
            return Err(PushError::UnknownKey {
                key: key.clone(),
                remote: remote.to_string(),
            }
            .into());
        }
    }
    Ok(options.keys.clone())
}

/// The notes tip to send, if the remote lacks it and the gate lets it go,
/// and what the report says about the history until the push answers.
pub(super) fn plan_history(
    repo: &gix::Repository,
    remote: &str,
) -> Result<(Option<ObjectId>, HistoryPush)> {
    let local_notes = history::peel(repo, NOTES_REF)?;
    let remote_notes = history::peel(repo, &remotes::notes_ref(remote))?;
    let Some(ours) = local_notes else {
        return Ok((None, HistoryPush::None));
    };
    if Some(ours) == remote_notes {
        return Ok((None, HistoryPush::UpToDate));
    }
    Ok(match unpushable_history(repo, ours, remote_notes)? {
        Some(why) => (None, HistoryPush::Refused(why)),
        None => (Some(ours), HistoryPush::Rejected("not pushed".into())),
    })
}

/// The sends in batches, one `git push` each: all in one, unless the
/// command line would overflow (never split with `--atomic`).
pub(super) fn batches(sends: &[Send], atomic: bool) -> Vec<&[Send]> {
    let mut out = Vec::new();
    let mut rest = sends;
    while !rest.is_empty() {
        let mut bytes = 0;
        let mut n = 0;
        while n < rest.len() && (atomic || n == 0 || bytes < PUSH_ARG_BYTES) {
            bytes += 2 * store::ref_name(&rest[n].key).len() + 2 * 41 + 40;
            n += 1;
        }
        let (now, later) = rest.split_at(n);
        out.push(now);
        rest = later;
    }
    out
}

/// The history a `git push` sends: its tip, and the lease it carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct NotesSend {
    /// The local notes tip.
    pub(super) tip: ObjectId,
    /// `None`: no lease, git's fast-forward rule alone (after a fetch
    /// merged the remote's history). `Some(expected)`: the remote must
    /// hold exactly `expected` (`Some(None)`: no history at all), an
    /// ancestor of `tip` checked here, so that the update is a
    /// fast-forward of that tip only and what leaves is exactly what the
    /// gate checked.
    pub(super) lease: Option<Option<ObjectId>>,
}

/// The `git push` command line of one batch (its pinned creates sent by
/// `glob`), and the history, if given.
pub(super) fn push_args(
    remote: &str,
    options: &PushOptions,
    batch: &[Send],
    glob: Option<&str>,
    notes: Option<NotesSend>,
) -> Vec<String> {
    let mut args: Vec<String> = vec![
        "push".into(),
        "--porcelain".into(),
        "--no-follow-tags".into(),
        "--recurse-submodules=no".into(),
    ];
    if options.dry_run {
        args.push("--dry-run".into());
    }
    if options.atomic {
        args.push("--atomic".into());
    }
    args.push(remote.to_string());
    for send in batch.iter().filter(|s| !s.pinned) {
        args.extend(send.op.args(&store::ref_name(&send.key)));
    }
    args.extend(glob.map(str::to_string));
    if let Some(NotesSend { tip, lease }) = notes {
        if let Some(expected) = lease {
            let expected = expected.map(|e| e.to_string()).unwrap_or_default();
            args.push(format!("--force-with-lease={NOTES_REF}:{expected}"));
        }
        args.push(format!("{tip}:{NOTES_REF}"));
    }
    args
}

/// A `git push` run and its porcelain results by destination ref.
pub(super) type PushAnswer = (GitRun, HashMap<String, (char, String)>);

/// Run one `git push`; its porcelain results by destination ref.
pub(super) fn run_push(
    repo: &gix::Repository,
    remote: &str,
    options: &PushOptions,
    args: &[String],
) -> Result<PushAnswer> {
    if !options.dry_run {
        crate::support::failpoint::reach("before-git-push");
    }
    let run = git(repo, args)?;
    if !options.dry_run {
        crate::support::failpoint::reach("after-git-push");
    }
    let results = porcelain(&run.stdout);
    if !run.ok && results.is_empty() {
        return Err(git_failure(
            &format!("push to '{remote}'"),
            &run.stderr,
            "nothing was pushed in this batch; check the remote with `git remote -v`",
        ));
    }
    Ok((run, results))
}

/// Each key of a batch as the remote answered; what was accepted moves
/// its base and remote value here (not in a dry run), and so does the
/// history `notes` the batch carried when the remote took it.
pub(super) fn apply_results(
    repo: &gix::Repository,
    remote: &str,
    sides: &Sides,
    options: &PushOptions,
    (batch, notes): (&[Send], Option<ObjectId>),
    (run, results): &PushAnswer,
) -> Result<Vec<PushedKey>> {
    let message = format!("handoff: push {remote}");
    let mut keys = Vec::new();
    let mut moves = Vec::new();
    for Send { key, op, .. } in batch {
        let (outcome, held) = match results.get(&store::ref_name(key)) {
            Some((flag, _)) if accepted(*flag) => match op {
                RefOp::Update { .. } => (Outcome::Pushed, None),
                RefOp::Delete { .. } => (Outcome::Deleted, None),
            },
            Some((_, summary)) => (Outcome::Rejected, Some(rejection(summary))),
            None => (
                Outcome::Rejected,
                Some(Held::Unreported(git_reason(&run.stderr))),
            ),
        };
        if !options.dry_run && held.is_none() {
            let base = sides.base.get(key).copied();
            moves.push(accepted_edits(remote, key, *op, base, &message)?);
        }
        keys.push(PushedKey {
            key: key.clone(),
            outcome,
            lease: op.lease(),
            new: op.new_value(),
            held,
            reason: None,
        });
    }
    // The history the remote took in the same push moves with the keys:
    // one transaction for all the bookkeeping of a push.
    if !options.dry_run
        && let Some(tip) = notes
        && results
            .get(NOTES_REF)
            .is_some_and(|(flag, _)| accepted(*flag))
    {
        moves.push(pushed_notes_edits(repo, remote, tip)?);
    }
    // One transaction for every accepted key. A lost race only means
    // another fetch moved a base meanwhile: then each key on its own, and
    // what still loses is recomputed by the next fetch.
    if !transaction(repo, moves.concat())? {
        for edits in moves {
            transaction(repo, edits)?;
        }
    }
    Ok(keys)
}

/// What the remote taking `op` on `key` moves here: the base and the
/// staged value (both to the new value, or both deleted).
fn accepted_edits(
    remote: &str,
    key: &str,
    op: RefOp,
    base: Option<ObjectId>,
    message: &str,
) -> Result<Vec<RefEdit>> {
    let base_name = base_ref(remote, key);
    Ok(match op.new_value() {
        Some(new) => vec![
            set(&base_name, previous(base), new, message)?,
            set(&tip_ref(remote, key), PreviousValue::Any, new, message)?,
        ],
        None => {
            let mut e = vec![delete(&tip_ref(remote, key), PreviousValue::Any)?];
            if base.is_some() {
                e.push(delete(&base_name, previous(base))?);
            }
            e
        }
    })
}

/// What happened to the history sent in a push (taken: its bookkeeping
/// moved with the keys', in [`apply_results`]).
pub(super) fn history_result(
    repo: &gix::Repository,
    remote: &str,
    options: &PushOptions,
    (run, results): &PushAnswer,
) -> Result<HistoryPush> {
    Ok(match results.get(NOTES_REF) {
        Some((flag, summary)) if accepted(*flag) => HistoryPush::Pushed(summary.clone()),
        Some(_) if options.dry_run && !options.atomic => HistoryPush::WouldMerge,
        Some((_, summary)) if options.atomic || options.dry_run => {
            HistoryPush::Rejected(summary.clone())
        }
        Some(_) => retry_notes(repo, remote)?,
        None => HistoryPush::Rejected(git_reason(&run.stderr)),
    })
}

/// What the batches of a push brought back: each sent key's answer (its
/// base here moved when the remote took it), the answer of the batch that
/// carried the history (if one did), and a stale lock the remote named.
pub(super) struct Sent {
    pub(super) keys: Vec<PushedKey>,
    pub(super) notes: Option<PushAnswer>,
    pub(super) stale_lock: Option<String>,
}

/// Run the `git push` batches of `sends` (the history, if given, with the
/// first), and apply each answer to the bases here.
pub(super) fn send(
    repo: &gix::Repository,
    remote: &str,
    options: &PushOptions,
    sides: &Sides,
    sends: Vec<Send>,
    mut notes: Option<NotesSend>,
) -> Result<Sent> {
    let (pinned, batches) = plan_batches(repo, sides, sends, options, notes.is_some())?;
    let mut glob = pinned.as_ref().map(outgoing::Pinned::refspec);
    let mut sent = Sent {
        keys: Vec::new(),
        notes: None,
        stale_lock: None,
    };
    for batch in &batches {
        let batch_notes = notes.take();
        let args = push_args(remote, options, batch, glob.take().as_deref(), batch_notes);
        let answer = run_push(repo, remote, options, &args)?;
        if sent.stale_lock.is_none() {
            sent.stale_lock = stale_git_lock(&answer.0.stderr).map(str::to_string);
        }
        let carried = batch_notes.map(|n| n.tip);
        sent.keys.extend(apply_results(
            repo,
            remote,
            sides,
            options,
            (batch, carried),
            &answer,
        )?);
        if batch_notes.is_some() {
            sent.notes = Some(answer);
        }
    }
    drop(pinned);
    Ok(sent)
}

/// Push: optimistically first (`super::optimistic`: planned from the
/// values last agreed with the remote, no network, every send leased on
/// them, all in one `git push`); when that plan cannot decide, or when a
/// lease fails because the remote moved, fetch, reconcile and push with
/// the same rules ([`fetch_first`]). Never sends a diverged key; deletes
/// dropped keys with `prune`; the notes history goes fast-forward only.
/// With `dry_run` nothing is fetched or changed: the plan comes from the
/// last fetch and `git push --dry-run` checks the leases.
pub fn push(repo: &gix::Repository, remote: &str, options: &PushOptions) -> Result<PushReport> {
    use super::optimistic::{Attempt, attempt};
    remotes::migrate(repo)?;
    history::check_tip(repo, NOTES_REF)?;
    let _lock = super::lock::hold(repo, remote)?;
    outgoing::sweep(repo)?;
    let first = match options.dry_run {
        true => Attempt::Undecided,
        false => attempt(repo, remote, options)?,
    };
    match first {
        Attempt::Undecided => fetch_first(repo, remote, options, &BTreeSet::new()),
        Attempt::Done(first) => Ok(first.report(remote)),
        Attempt::Retry(first) => {
            let again = fetch_first(repo, remote, options, &first.settled())?;
            Ok(first.then(again))
        }
    }
}

/// Push after a fetch: fetch first (so leases are current; a ref listing
/// when the remote has nothing new since the last fetch), then send each
/// selected key that is ahead — but those in `settled`, which an
/// optimistic push already sent and the remote answered — with
/// `--force-with-lease=refs/handoffs/<key>:<base>`, and the merged notes
/// history (fast-forward only), all in one `git push` unless the command
/// line would overflow. With `dry_run` nothing is fetched.
///
/// The keys were planned on the version graph of the history just
/// fetched: they go with that history's lease, all or none, as an
/// optimistic push sends them; when another clone pushed history in
/// between, nothing was taken and the push fetches and plans again. The
/// last round sends without that lease, as a push always did, so that a
/// busy remote cannot keep a push from landing ([`FETCH_FIRST_ROUNDS`]).
fn fetch_first(
    repo: &gix::Repository,
    remote: &str,
    options: &PushOptions,
    settled: &BTreeSet<String>,
) -> Result<PushReport> {
    let mut earlier: Vec<FetchReport> = Vec::new();
    loop {
        let lease = earlier.len() + 1 < FETCH_FIRST_ROUNDS;
        match fetch_first_once(repo, remote, options, settled, lease)? {
            Round::Done(mut report) => {
                if let Some(fetch) = report.fetch.as_mut() {
                    keep_what_earlier_fetches_took(fetch, earlier);
                }
                return Ok(report);
            }
            Round::Raced(fetch) => earlier.extend(fetch),
        }
    }
}

/// How many rounds a push that fetches first takes at most when another
/// clone keeps moving the history: all but the last with its lease.
const FETCH_FIRST_ROUNDS: usize = 3;

/// What one round of [`fetch_first`] came to.
enum Round {
    /// The push's report.
    Done(PushReport),
    /// The history's lease was lost and nothing was sent: the report of
    /// the fetch, whose changes here stand.
    Raced(Option<FetchReport>),
}

/// A key an earlier round's fetch created or moved here reads as up to
/// date to the next fetch: the report says what the first one did.
fn keep_what_earlier_fetches_took(last: &mut FetchReport, earlier: Vec<FetchReport>) {
    use super::fetch::Status;
    for report in earlier {
        for took in report.keys {
            let changed = matches!(
                took.status,
                Status::Created | Status::FastForwarded | Status::Restored | Status::Gone
            );
            match last.keys.iter_mut().find(|k| k.key == took.key) {
                Some(k) if changed && matches!(k.status, Status::UpToDate | Status::Ahead) => {
                    *k = took;
                }
                None if changed => last.keys.push(took),
                _ => {}
            }
        }
    }
    last.keys.sort_by(|a, b| a.key.cmp(&b.key));
}

/// One round of [`fetch_first`]; [`Round::Raced`] only with `lease`.
fn fetch_first_once(
    repo: &gix::Repository,
    remote: &str,
    options: &PushOptions,
    settled: &BTreeSet<String>,
    lease: bool,
) -> Result<Round> {
    let (fetch_report, sides) = if options.dry_run {
        (None, Sides::read(repo, remote)?)
    } else {
        let (report, sides) = fetch_sides(repo, remote, FetchOptions::default())?;
        (Some(report), sides)
    };
    let mut selected = selected_keys(&sides, remote, options)?;
    selected.retain(|key| !settled.contains(key));
    let (mut keys, sends) = plan_keys(repo, &sides, selected, options)?;
    let (notes_to_push, mut history) = plan_history(repo, remote)?;
    let mut notes = match notes_to_push {
        Some(tip) => Some(NotesSend {
            tip,
            lease: (lease && !options.dry_run)
                .then(|| fetched_history_lease(repo, remote, tip))
                .transpose()?
                .flatten(),
        }),
        None => None,
    };
    if let Some(NotesMerge::Held { theirs, .. }) = fetch_report.as_ref().map(|r| r.history) {
        (notes, history) = (None, HistoryPush::Held(theirs.to_string()));
    }
    let (sent, together) = send_with_history(repo, remote, options, &sides, sends, notes)?;
    if together && lost_history_lease(&sent) {
        return Ok(Round::Raced(fetch_report));
    }
    keys.extend(sent.keys);
    if let Some(answer) = &sent.notes {
        history = history_result(repo, remote, options, answer)?;
    }
    keys.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(Round::Done(PushReport {
        remote: remote.to_string(),
        dry_run: options.dry_run,
        route: match options.dry_run {
            true => Route::LastFetch,
            false => Route::FetchFirst,
        },
        fetch: fetch_report,
        keys,
        history,
        stale_lock: sent.stale_lock,
    }))
}

/// [`send`], the keys with the history's lease all or none when they
/// fit one push and the history goes leased (they were planned on the
/// version graph of that history), unless the caller asked for atomic
/// anyway; whether they went so. A stale lock file on the remote refuses
/// the whole atomic push: sent again ref by ref (nothing was taken), so
/// that all but the locked ref land and the lock is named.
pub(super) fn send_with_history(
    repo: &gix::Repository,
    remote: &str,
    options: &PushOptions,
    sides: &Sides,
    sends: Vec<Send>,
    notes: Option<NotesSend>,
) -> Result<(Sent, bool)> {
    let together = !options.atomic
        && notes.is_some_and(|n| n.lease.is_some())
        && !sends.is_empty()
        && batches(&sends, false).len() <= 1;
    if !together {
        return Ok((send(repo, remote, options, sides, sends, notes)?, false));
    }
    let atomic = PushOptions {
        atomic: true,
        ..options.clone()
    };
    let sent = send(repo, remote, &atomic, sides, sends.clone(), notes)?;
    if sent.stale_lock.is_some() {
        return Ok((send(repo, remote, options, sides, sends, notes)?, false));
    }
    Ok((sent, true))
}

/// The lease for sending history `tip` after a fetch: the remote's
/// history exactly as that fetch staged it (`Some(None)`: none), when
/// `tip` contains it (a fast-forward of it); `None` (no lease) otherwise.
fn fetched_history_lease(
    repo: &gix::Repository,
    remote: &str,
    tip: ObjectId,
) -> Result<Option<Option<ObjectId>>> {
    Ok(match staged_notes(repo, remote)? {
        Staged::Valid(None) => Some(None),
        Staged::Valid(Some(theirs)) if super::notes::contains(repo, tip, theirs)? == Some(true) => {
            Some(Some(theirs))
        }
        _ => None,
    })
}

/// Whether an atomic push lost a race: its history was refused for a
/// lease (the remote's history moved since the fetch, seen by git before
/// sending) or with the whole transaction (the remote's side failed it,
/// which names no ref), so that nothing was taken.
fn lost_history_lease(sent: &Sent) -> bool {
    sent.notes.as_ref().is_some_and(|(_, results)| {
        results.get(NOTES_REF).is_some_and(|(flag, summary)| {
            !accepted(*flag) && matches!(rejection(summary), Held::Stale | Held::AtomicSibling)
        })
    })
}

/// Why the history in `ours` that `theirs` lacks may not be pushed, if
/// any line of it (a brief or not) or any commit message holds a secret.
pub(super) fn unpushable_history(
    repo: &gix::Repository,
    ours: ObjectId,
    theirs: Option<ObjectId>,
) -> Result<Option<String>> {
    let found = crate::sync::gate::outgoing_history(repo, ours, theirs)?;
    Ok((!found.is_empty()).then(|| {
        format!(
            "{} history line{} hold{} secrets: {}",
            found.len(),
            if found.len() == 1 { "" } else { "s" },
            if found.len() == 1 { "s" } else { "" },
            crate::sync::gate::list(&found),
        )
    }))
}

/// Why the remote refused a ref, from git's porcelain summary.
pub(super) fn rejection(summary: &str) -> Held {
    // A lease that failed, or a create whose ref exists there now, or
    // the remote's own ref update lost to another push after the lease
    // was accepted (`failed to update ref`, `cannot lock ref`): the same
    // lost race, which a fetch and the three-way rules settle.
    if [
        "stale info",
        "fetch first",
        "needs force",
        "already exists",
        "failed to update ref",
        "cannot lock ref",
        "failed to lock",
    ]
    .iter()
    .any(|why| summary.contains(why))
    {
        Held::Stale
    } else if summary.contains("atomic") {
        Held::AtomicSibling
    } else {
        Held::Refused(summary.to_string())
    }
}

/// The remote took history `id`: it is the remote's known history and
/// its staged one, both moved in one transaction.
pub(super) fn pushed_notes(repo: &gix::Repository, remote: &str, id: ObjectId) -> Result<()> {
    transaction(repo, pushed_notes_edits(repo, remote, id)?)?;
    Ok(())
}

/// The edits of [`pushed_notes`]: none for a ref that holds `id` already
/// (the push's own bookkeeping moved it with the keys).
fn pushed_notes_edits(repo: &gix::Repository, remote: &str, id: ObjectId) -> Result<Vec<RefEdit>> {
    let message = format!("handoff: push {remote}");
    let mut edits = Vec::new();
    for name in [
        remotes::notes_ref(remote),
        remotes::staged_notes_ref(remote),
    ] {
        if history::peel(repo, &name)? != Some(id) {
            edits.push(set(&name, PreviousValue::Any, id, &message)?);
        }
    }
    Ok(edits)
}

/// The history push lost a race with another pusher: fetch the remote's
/// history, merge it and push again, a few times.
pub(super) fn retry_notes(repo: &gix::Repository, remote: &str) -> Result<HistoryPush> {
    let mut last = String::new();
    for _ in 0..NOTES_RETRIES {
        git_fetch(repo, remote, false)?;
        let staged = staged_notes(repo, remote)?;
        if let (Some(theirs), true) = (staged.valid(), crate::sync::gate::history_redacted(repo))
            && !super::held::returning(repo, remote, Some(theirs), history::peel(repo, NOTES_REF)?)?
                .in_history
                .is_empty()
        {
            let message = super::fetch::fetch_reflog(remote);
            mirror(repo, &remotes::staged_notes_ref(remote), None, &message)?;
            return Ok(HistoryPush::Held(theirs.to_string()));
        }
        if let Staged::Invalid(id) = staged {
            return Ok(HistoryPush::NotNotes(id));
        }
        let theirs = publish_remote_notes(repo, remote, staged)?;
        merge_notes(repo, remote, theirs)?;
        let Some(ours) = history::peel(repo, NOTES_REF)? else {
            return Ok(HistoryPush::None);
        };
        if Some(ours) == theirs {
            return Ok(HistoryPush::UpToDate);
        }
        let notes = NotesSend {
            tip: ours,
            lease: None,
        };
        let args = push_args(remote, &PushOptions::default(), &[], None, Some(notes));
        let run = git(repo, &args)?;
        match porcelain(&run.stdout).get(NOTES_REF) {
            Some((flag, summary)) if accepted(*flag) => {
                pushed_notes(repo, remote, ours)?;
                return Ok(HistoryPush::Pushed(summary.clone()));
            }
            Some((_, summary)) => last = summary.clone(),
            None => last = git_reason(&run.stderr),
        }
    }
    Ok(HistoryPush::Rejected(last))
}
