//! Sharing briefs and their history through an ordinary git remote: fetch
//! (into a staging namespace, then three-way reconciliation and a union
//! merge of the notes history), push (each key with a lease) and resolve.
//!
//! Network operations run the `git` binary, so credentials, ssh config and
//! `insteadOf` work as for the user's own fetches and pushes; everything
//! local goes through gix. Functions here take a repository and return
//! data; the commands render it.
//!
//! The `sync` layer also holds the one secret gate for what leaves and
//! enters ([`gate`]).

pub mod gate;
pub mod gate_cache;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::process::Command;

use anyhow::{Context, Result, anyhow};
use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::refs::Target;
use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
use serde::{Deserialize, Serialize};

use crate::brief::redact;
use crate::store::history;
use crate::store::remotes::{self, base_prefix, base_ref, tip_prefix, tip_ref};
use crate::store::{self, NOTES_REF, REF_PREFIX};

/// How many bytes of arguments one `git push` carries at most (without
/// `--atomic`): every key goes in one push unless the command line would
/// overflow (Linux allows 2 MiB of arguments and environment).
pub const PUSH_ARG_BYTES: usize = 1 << 20;

/// How often a notes merge or a notes push is retried after another
/// writer moved the history.
const NOTES_RETRIES: usize = 5;

/// The check every brief (and every version of the history) passes before
/// it leaves the machine: it must hold no secret the redaction rules find
/// (`crate::brief::redact`, with `handoff.redactEmails`). JSON is checked string
/// by string, the `key` field and object keys included; other text as
/// text. A brief that fails is not pushed and the
/// error names what was found, never the secret itself.
pub fn check_pushable(brief: &[u8], options: redact::Options) -> Result<()> {
    let counts = redact::find_in_line(brief, options);
    let total: usize = counts.values().sum();
    if total == 0 {
        return Ok(());
    }
    let kinds: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
    crate::refuse!(
        "holds {total} secret{} ({}); `git handoff redact` removes {}",
        if total == 1 { "" } else { "s" },
        kinds.join(", "),
        if total == 1 { "it" } else { "them" }
    )
}

// ---------------------------------------------------------------------------
// Reports

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
    /// The remote holds an older version of this key, one already in the
    /// local history (a stale clone's plain push rolled it back): the
    /// local brief is kept and the next push repairs the remote.
    RolledBack,
    /// The remote's key holds a secret: nothing was taken (the key shown
    /// is redacted).
    SecretKey,
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

// ---------------------------------------------------------------------------
// Three-way reconciliation

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

// ---------------------------------------------------------------------------
// Running git

struct GitRun {
    ok: bool,
    stdout: String,
    stderr: String,
}

fn git(repo: &gix::Repository, args: &[String]) -> Result<GitRun> {
    let mut cmd = Command::new("git");
    cmd.arg("--git-dir").arg(repo.git_dir());
    if let Some(dir) = repo.workdir() {
        cmd.current_dir(dir);
    }
    cmd.args(args);
    let out = cmd
        .output()
        .context("cannot run git; is it installed and on PATH?")?;
    Ok(GitRun {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

/// The most telling line of git's stderr: the last `fatal:` or `error:`
/// line, else the last line.
fn git_reason(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines
        .iter()
        .rev()
        .find(|l| l.starts_with("fatal:"))
        .or_else(|| lines.iter().rev().find(|l| l.starts_with("error:")))
        .or(lines.last())
        .map(|l| l.to_string())
        .unwrap_or_else(|| "git exited with an error".into())
}

fn fetch_refspecs(remote: &str, briefs: bool) -> Vec<String> {
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

/// `git fetch` the remote's briefs and notes into the staging namespace
/// (pruned there, never anywhere else).
fn git_fetch(repo: &gix::Repository, remote: &str, briefs: bool) -> Result<()> {
    let mut args: Vec<String> = [
        "fetch",
        "--quiet",
        "--no-tags",
        "--no-write-fetch-head",
        "--recurse-submodules=no",
        "--prune",
        remote,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(fetch_refspecs(remote, briefs));
    let run = git(repo, &args)?;
    if !run.ok {
        return Err(git_failure(
            &format!("fetch from '{remote}'"),
            &run.stderr,
            &format!("check the remote with `git remote -v` and `git fetch {remote}`"),
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Refs

fn log_change(message: &str) -> LogChange {
    LogChange {
        mode: RefLog::AndReference,
        force_create_reflog: false,
        message: message.into(),
    }
}

fn previous(id: Option<ObjectId>) -> PreviousValue {
    match id {
        Some(id) => PreviousValue::MustExistAndMatch(Target::Object(id)),
        None => PreviousValue::MustNotExist,
    }
}

fn set(name: &str, expected: PreviousValue, new: ObjectId, message: &str) -> Result<RefEdit> {
    Ok(RefEdit {
        change: Change::Update {
            log: log_change(message),
            expected,
            new: Target::Object(new),
        },
        name: name
            .try_into()
            .map_err(|_| anyhow!("'{name}' is not a valid ref name"))?,
        deref: false,
    })
}

fn delete(name: &str, expected: PreviousValue) -> Result<RefEdit> {
    Ok(RefEdit {
        change: Change::Delete {
            expected,
            log: RefLog::AndReference,
        },
        name: name
            .try_into()
            .map_err(|_| anyhow!("'{name}' is not a valid ref name"))?,
        deref: false,
    })
}

/// Apply edits as one transaction; `Ok(false)` when a compare-and-swap lost.
/// A lock file left by a killed process is named, with the command that
/// clears it.
fn transaction(repo: &gix::Repository, edits: Vec<RefEdit>) -> Result<bool> {
    if edits.is_empty() {
        return Ok(true);
    }
    let names: Vec<String> = edits.iter().map(|e| e.name.as_bstr().to_string()).collect();
    let mut attempt = 0;
    loop {
        attempt += 1;
        match repo.edit_references(edits.clone()) {
            Ok(_) => return Ok(true),
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
                if store::stale(repo, &edits) {
                    return Ok(false);
                }
                return Err(anyhow!("cannot update the handoff refs: {err}"));
            }
        }
    }
}

/// How often a ref transaction that failed for a reason other than a lost
/// compare-and-swap is tried again.
const RACE_RETRIES: usize = 5;

/// The lock file git could not create because it exists (a git process
/// killed earlier left it), from git's stderr.
fn stale_git_lock(stderr: &str) -> Option<&str> {
    let start = stderr.find("Unable to create '")? + "Unable to create '".len();
    let rest = &stderr[start..];
    let end = rest.find("': File exists")?;
    Some(&rest[..end])
}

/// Why `git ACTION` failed, for one error line: a stale lock is named with
/// the command that clears it; anything else is git's own reason and `hint`.
fn git_failure(action: &str, stderr: &str, hint: &str) -> anyhow::Error {
    match stale_git_lock(stderr) {
        Some(lock) => anyhow!(
            "git {action} failed: '{lock}' exists; another git process may be running. If none is, remove it: rm '{lock}'"
        ),
        None => anyhow!("git {action} failed: {}; {hint}", git_reason(stderr)),
    }
}

/// Point `name` at `id` (or delete it), whatever it held.
fn mirror(repo: &gix::Repository, name: &str, id: Option<ObjectId>, message: &str) -> Result<()> {
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
fn is_brief(repo: &gix::Repository, id: Option<ObjectId>, key: &str) -> bool {
    id.and_then(|id| repo.find_object(id).ok())
        .is_some_and(|o| {
            o.kind == gix::object::Kind::Blob
                && crate::brief::Brief::from_slice(&o.data).is_ok_and(|b| b.key == key)
        })
}

#[derive(Deserialize)]
struct Stamp {
    timestamp: Option<String>,
}

fn info(repo: &gix::Repository, id: Option<ObjectId>) -> Option<VersionInfo> {
    let id = id?;
    let timestamp = repo
        .find_blob(id)
        .ok()
        .and_then(|b| serde_json::from_slice::<Stamp>(&b.data).ok())
        .and_then(|s| s.timestamp);
    Some(VersionInfo { id, timestamp })
}

/// The three values of every key known here or on `remote`.
struct Sides {
    local: BTreeMap<String, ObjectId>,
    base: BTreeMap<String, ObjectId>,
    remote: BTreeMap<String, ObjectId>,
    /// The remote's keys that hold a secret, redacted: never taken.
    secret_keys: Vec<String>,
}

impl Sides {
    /// Read the three namespaces; names that are not valid keys (a ref
    /// nested deeper, say) are not briefs and are left alone.
    fn read(repo: &gix::Repository, remote: &str) -> Result<Sides> {
        let keys_under = |prefix: &str| -> Result<BTreeMap<String, ObjectId>> {
            let mut ids = remotes::ids_under(repo, prefix)?;
            ids.retain(|key, _| crate::brief::keys::validate(key).is_ok());
            Ok(ids)
        };
        let options = redact::Options::from_repo(repo);
        let mut theirs = keys_under(&tip_prefix(remote))?;
        let mut secret_keys = Vec::new();
        theirs.retain(|key, _| {
            let secret = redact::key_rule(key, options).is_some();
            if secret {
                secret_keys.push(crate::sync::gate::shown_key(key, options));
            }
            !secret
        });
        Ok(Sides {
            local: keys_under(REF_PREFIX)?,
            base: keys_under(&base_prefix(remote))?,
            remote: theirs,
            secret_keys,
        })
    }

    fn keys(&self) -> BTreeSet<String> {
        self.local
            .keys()
            .chain(self.base.keys())
            .chain(self.remote.keys())
            .cloned()
            .collect()
    }

    fn get(&self, key: &str) -> (Option<ObjectId>, Option<ObjectId>, Option<ObjectId>) {
        (
            self.local.get(key).copied(),
            self.base.get(key).copied(),
            self.remote.get(key).copied(),
        )
    }
}

// ---------------------------------------------------------------------------
// Fetch

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
pub fn fetch(repo: &gix::Repository, remote: &str) -> Result<FetchReport> {
    fetch_with(repo, remote, FetchOptions::default())
}

/// [`fetch`], with options.
pub fn fetch_with(
    repo: &gix::Repository,
    remote: &str,
    options: FetchOptions,
) -> Result<FetchReport> {
    remotes::migrate(repo)?;
    let local_notes_before = history::peel(repo, NOTES_REF)?;
    git_fetch(repo, remote, true)?;
    crate::support::failpoint::reach("fetch-staged");
    let staged = staged_notes(repo, remote)?;
    if !options.allow_secrets
        && crate::sync::gate::history_redacted(repo)
        && let Err(refused) = crate::sync::gate::refuse_returning_secrets(
            repo,
            remote,
            staged.valid(),
            local_notes_before,
        )
    {
        remotes::forget_staged(repo, remote)?;
        return Err(refused);
    }
    let remote_notes = publish_remote_notes(repo, remote, staged)?;
    // The history first: every version a brief ref is about to take from
    // the remote is then already in the local history, so that a fetch
    // killed between two keys never leaves a brief whose version `log`
    // cannot show. The three-way rules read the pre-merge histories.
    let history = match staged {
        Staged::Invalid(id) => NotesMerge::Ignored(id),
        Staged::Valid(_) => merge_notes(repo, remote, remote_notes)?,
    };
    crate::support::failpoint::reach("fetch-history-merged");

    let sides = Sides::read(repo, remote)?;
    let mut local_history: Option<BTreeMap<String, Vec<ObjectId>>> = None;
    let mut remote_history: Option<HashMap<String, HashSet<ObjectId>>> = None;
    let message = format!("handoff: fetch {remote}");
    let mut keys = secret_key_reports(&sides);
    let redact_options = redact::Options::from_repo(repo);
    for key in sides.keys() {
        let (l, b, r) = sides.get(&key);
        // The histories are read only for the keys whose answer needs them
        // (never for a key that is only ahead here).
        let mut histories = || -> Result<(bool, bool)> {
            if local_history.is_none() {
                local_history = Some(versions_by_key(repo, local_notes_before)?);
            }
            if remote_history.is_none() {
                remote_history = Some(history::ids_by_key(repo, remote_notes)?);
            }
            let local = local_history.as_ref().and_then(|h| h.get(&key));
            let in_remote = l
                .zip(remote_history.as_ref().and_then(|h| h.get(&key)))
                .is_some_and(|(id, ids)| ids.contains(&id));
            let in_local = r.zip(local).is_some_and(|(id, ids)| ids.contains(&id));
            Ok((in_remote, in_local))
        };
        let (mut status, action) = classify(l, b, r, &mut histories)?;
        if action == Action::TakeRemote && l.is_some() && r.is_some() && local_history.is_none() {
            local_history = Some(versions_by_key(repo, local_notes_before)?);
        }
        let local_versions = local_history.as_ref().and_then(|h| h.get(&key));
        let (status_now, action) =
            check_remote_value(repo, &key, (l, r), local_versions, (status, action));
        status = status_now;
        let edits = reconcile_edits(&key, remote, (l, b, r), action, &message)?;
        let changes = !edits.is_empty();
        if !transaction(repo, edits)? {
            status = Status::Conflict;
        }
        if changes {
            crate::support::failpoint::reach("fetch-key-reconciled");
        }
        let took = action == Action::TakeRemote && status != Status::Conflict;
        if status == Status::Gone && action == Action::Nothing {
            continue;
        }
        keys.push(KeyReport {
            key: crate::sync::gate::redacted_key(&key, redact_options),
            status,
            local: info(repo, if took { r } else { l }),
            remote: info(repo, r),
            replaced: if took { info(repo, l) } else { None },
        });
    }
    keys.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(FetchReport {
        remote: remote.to_string(),
        keys,
        history,
    })
}

/// The report rows of the keys that hold a secret (never fetched, shown
/// redacted).
fn secret_key_reports(sides: &Sides) -> Vec<KeyReport> {
    sides
        .secret_keys
        .iter()
        .map(|shown| KeyReport {
            key: shown.clone(),
            status: Status::SecretKey,
            local: None,
            remote: None,
            replaced: None,
        })
        .collect()
}

/// The remote's value checked before it is taken: an older version of
/// the key already in the local history is a rollback (keep local, move
/// the base so that push repairs the remote); a value that is not a brief
/// of the key is ignored, never taken and never called diverged.
fn check_remote_value(
    repo: &gix::Repository,
    key: &str,
    (l, r): (Option<ObjectId>, Option<ObjectId>),
    local_versions: Option<&Vec<ObjectId>>,
    (status, action): (Status, Action),
) -> (Status, Action) {
    if action == Action::TakeRemote
        && let (Some(l), Some(r)) = (l, r)
        && older_version(local_versions, l, r)
    {
        return (Status::RolledBack, Action::SetBase(r));
    }
    if (action == Action::TakeRemote || status == Status::Diverged) && !is_brief(repo, r, key) {
        return (Status::Invalid, Action::Nothing);
    }
    (status, action)
}

/// The ref edits of one key's reconciliation.
fn reconcile_edits(
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

/// Each key's versions in the notes history reachable from `tip`, newest
/// first.
fn versions_by_key(
    repo: &gix::Repository,
    tip: Option<ObjectId>,
) -> Result<BTreeMap<String, Vec<ObjectId>>> {
    history::ids_newest_first(repo, tip)
}

/// Whether `remote` is an older version than `local` in this key's local
/// history (newest first): the remote was rolled back, not moved on.
fn older_version(history: Option<&Vec<ObjectId>>, local: ObjectId, remote: ObjectId) -> bool {
    let Some(history) = history else {
        return false;
    };
    match (
        history.iter().position(|id| *id == local),
        history.iter().position(|id| *id == remote),
    ) {
        (Some(l), Some(r)) => r > l,
        (None, Some(_)) => true,
        _ => false,
    }
}

/// The remote's notes tip as fetched into the staging namespace.
#[derive(Debug, Clone, Copy)]
enum Staged {
    /// A notes history (or none at all).
    Valid(Option<ObjectId>),
    /// Something else: never published, never merged.
    Invalid(ObjectId),
}

impl Staged {
    fn valid(self) -> Option<ObjectId> {
        match self {
            Staged::Valid(id) => id,
            Staged::Invalid(_) => None,
        }
    }
}

/// Read and validate the staged notes tip: a chain of commits whose trees
/// hold only notes. What was already validated (the published remote
/// notes, the local history) is not walked again.
fn staged_notes(repo: &gix::Repository, remote: &str) -> Result<Staged> {
    let Some(tip) = history::peel(repo, &remotes::staged_notes_ref(remote))? else {
        return Ok(Staged::Valid(None));
    };
    let mut walk = crate::sync::gate::NotesWalk::default();
    for known in [
        history::peel(repo, &remotes::notes_ref(remote))?,
        history::peel(repo, NOTES_REF)?,
    ]
    .into_iter()
    .flatten()
    {
        walk.mark_known(repo, known);
    }
    Ok(match walk.add(repo, tip)? {
        Ok(()) => Staged::Valid(Some(tip)),
        Err(_) => Staged::Invalid(tip),
    })
}

/// Copy a validated staged notes tip to `refs/handoff-remotes/<remote>/notes`;
/// an invalid one is left where `git fetch` put it.
fn publish_remote_notes(
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
        &format!("handoff: fetch {remote}"),
    )?;
    Ok(staged)
}

// ---------------------------------------------------------------------------
// Notes merge

fn is_ancestor(repo: &gix::Repository, ancestor: ObjectId, of: ObjectId) -> Result<bool> {
    let mut seen = HashSet::new();
    let mut queue = vec![of];
    while let Some(id) = queue.pop() {
        if id == ancestor {
            return Ok(true);
        }
        if !seen.insert(id) {
            continue;
        }
        let commit = repo
            .find_commit(id)
            .with_context(|| format!("cannot read notes commit {id}"))?;
        queue.extend(commit.parent_ids().map(|p| p.detach()));
    }
    Ok(false)
}

/// Every note of a notes tree: annotated object → note blob, whatever the
/// fanout.
fn notes_of(repo: &gix::Repository, tree: ObjectId) -> Result<BTreeMap<ObjectId, ObjectId>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![(tree, String::new())];
    while let Some((id, prefix)) = stack.pop() {
        let tree = repo
            .find_tree(id)
            .with_context(|| format!("cannot read notes tree {id}"))?;
        let decoded = tree
            .decode()
            .with_context(|| format!("cannot read notes tree {id}"))?;
        for entry in &decoded.entries {
            let path = format!("{prefix}{}", entry.filename.to_str_lossy());
            if entry.mode.is_tree() {
                stack.push((entry.oid.to_owned(), path));
            } else if entry.mode.is_blob()
                && let Ok(annotated) = ObjectId::from_hex(path.as_bytes())
            {
                out.insert(annotated, entry.oid.to_owned());
            }
        }
    }
    Ok(out)
}

/// `cat_sort_uniq`: the lines of both notes, sorted, without duplicates or
/// empty lines.
pub fn cat_sort_uniq(ours: &[u8], theirs: &[u8]) -> Vec<u8> {
    let lines: BTreeSet<&[u8]> = ours
        .lines()
        .chain(theirs.lines())
        .filter(|l| !l.trim().is_empty())
        .collect();
    let mut out = Vec::new();
    for line in lines {
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    out
}

fn signature(
    repo: &gix::Repository,
) -> Result<(gix::actor::SignatureRef<'_>, gix::actor::SignatureRef<'_>)> {
    let committer = repo
        .committer()
        .ok_or_else(|| anyhow!("no committer identity; set one with `git config user.name` and `git config user.email`"))?
        .context("cannot read the committer identity")?;
    let author = match repo.author() {
        Some(author) => author.context("cannot read the author identity")?,
        None => committer,
    };
    Ok((committer, author))
}

/// Merge `theirs` (a remote's notes history) into `refs/notes/handoffs`:
/// fast-forward when one contains the other, else a merge commit whose
/// parents are both tips and whose notes are the union of both sides'
/// lines (`cat_sort_uniq`), so no version is ever lost and `git log`
/// reaches all of them.
pub fn merge_notes(
    repo: &gix::Repository,
    remote: &str,
    theirs: Option<ObjectId>,
) -> Result<NotesMerge> {
    let Some(theirs) = theirs else {
        return Ok(NotesMerge::NoRemoteHistory);
    };
    let message = format!("handoff: merge notes from {remote}");
    for _ in 0..NOTES_RETRIES * 4 {
        let ours = history::peel(repo, NOTES_REF)?;
        let (result, new) = match ours {
            None => (NotesMerge::Created(theirs), theirs),
            Some(o) if o == theirs || is_ancestor(repo, theirs, o)? => {
                return Ok(NotesMerge::UpToDate);
            }
            Some(o) if is_ancestor(repo, o, theirs)? => (NotesMerge::FastForwarded(theirs), theirs),
            Some(o) => {
                let commit = merge_commit(repo, remote, o, theirs)?;
                (NotesMerge::Merged(commit), commit)
            }
        };
        if transaction(repo, vec![set(NOTES_REF, previous(ours), new, &message)?])? {
            return Ok(result);
        }
    }
    crate::refuse!(
        "{NOTES_REF} kept changing while merging the history from '{remote}'; fetch again"
    )
}

fn merge_commit(
    repo: &gix::Repository,
    remote: &str,
    ours: ObjectId,
    theirs: ObjectId,
) -> Result<ObjectId> {
    let tree_of = |id: ObjectId| -> Result<ObjectId> {
        Ok(repo
            .find_commit(id)
            .with_context(|| format!("cannot read notes commit {id}"))?
            .tree_id()
            .context("cannot read a notes tree")?
            .detach())
    };
    let (our_tree, their_tree) = (tree_of(ours)?, tree_of(theirs)?);
    let our_notes = notes_of(repo, our_tree)?;
    let their_notes = notes_of(repo, their_tree)?;
    let mut state =
        gix::note::plumbing::State::new(our_tree, repo).context("cannot read the notes tree")?;
    for (annotated, their_blob) in their_notes {
        let merged = match our_notes.get(&annotated) {
            Some(our_blob) if *our_blob == their_blob => continue,
            None => their_blob,
            Some(our_blob) => {
                let read = |id: &ObjectId| -> Result<Vec<u8>> {
                    Ok(repo
                        .find_blob(*id)
                        .with_context(|| format!("cannot read note {id}"))?
                        .detach()
                        .data)
                };
                let data = cat_sort_uniq(&read(our_blob)?, &read(&their_blob)?);
                repo.write_blob(&data)
                    .context("cannot write a merged note")?
                    .detach()
            }
        };
        state
            .edit(annotated, Some(merged), repo)
            .context("cannot edit the notes tree")?;
    }
    let tree = state.write(repo).context("cannot write the notes tree")?;
    let (committer, author) = signature(repo)?;
    Ok(repo
        .new_commit_as(
            committer,
            author,
            format!("Notes merged from '{remote}' by 'git handoff' (cat_sort_uniq)\n"),
            tree,
            [ours, theirs],
        )
        .context("cannot write the notes merge commit")?
        .id)
}

// ---------------------------------------------------------------------------
// Push

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
    /// Why, when it was not pushed.
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
    /// Not sent: versions not yet on the remote hold secrets.
    Refused(String),
    /// Dry run: the remote's history moved since the last fetch; a real
    /// push merges it first, then sends the result.
    WouldMerge,
}

/// The result of a push.
#[derive(Debug, Clone, Serialize)]
pub struct PushReport {
    /// The remote.
    pub remote: String,
    /// Whether this was a dry run.
    pub dry_run: bool,
    /// The fetch that ran first (none with `--dry-run`).
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

impl PushReport {
    /// Whether any key (or the history) was refused: exit 1.
    pub fn refused(&self) -> bool {
        matches!(
            self.history,
            HistoryPush::Rejected(_) | HistoryPush::Refused(_)
        ) || self.keys.iter().any(|k| {
            matches!(
                k.outcome,
                Outcome::Rejected | Outcome::Diverged | Outcome::Refused
            )
        })
    }
}

/// What to do with one key.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Plan {
    UpToDate,
    Send {
        lease: Option<ObjectId>,
        new: ObjectId,
    },
    Delete {
        lease: ObjectId,
    },
    Hold(Outcome, String),
}

fn plan(
    key: &str,
    remote: &str,
    (l, b, r): (Option<ObjectId>, Option<ObjectId>, Option<ObjectId>),
    named: bool,
    prune: bool,
) -> Plan {
    match (l, b, r) {
        (Some(l), _, Some(r)) if l == r => Plan::UpToDate,
        (Some(l), b, r) if b == r => Plan::Send { lease: r, new: l },
        (Some(l), Some(_), None) if named => Plan::Send {
            lease: None,
            new: l,
        },
        (Some(_), Some(_), None) => Plan::Hold(
            Outcome::Skipped,
            format!(
                "deleted on '{remote}'; `git handoff push {remote} {key}` restores it there, `git handoff drop {key}` drops it here"
            ),
        ),
        (Some(_), _, Some(_)) => Plan::Hold(
            Outcome::Diverged,
            format!(
                "both sides changed; `git handoff diff {key} @{remote}` compares, `git handoff resolve {key} --keep-local` or `--take-remote` ends it"
            ),
        ),
        (None, Some(b), Some(r)) if b == r && prune => Plan::Delete { lease: r },
        (None, Some(b), Some(r)) if b == r => Plan::Hold(
            Outcome::Skipped,
            format!("dropped here; `git handoff push --prune` deletes it on '{remote}'"),
        ),
        (None, _, Some(_)) => Plan::Hold(
            Outcome::Skipped,
            format!("not here; `git handoff fetch {remote}` brings it"),
        ),
        (None, _, None) => Plan::UpToDate,
        (Some(l), None, None) => Plan::Send {
            lease: None,
            new: l,
        },
    }
}

/// One line of `git push --porcelain`: the flag and the summary, by
/// destination ref.
fn porcelain(stdout: &str) -> HashMap<String, (char, String)> {
    let mut out = HashMap::new();
    for line in stdout.lines() {
        let mut parts = line.splitn(3, '\t');
        let (Some(flag), Some(refs), Some(summary)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let mut flag_chars = flag.chars();
        let (Some(flag), None) = (flag_chars.next(), flag_chars.next()) else {
            continue;
        };
        if let Some((_, dst)) = refs.rsplit_once(':') {
            out.insert(dst.to_string(), (flag, summary.trim().to_string()));
        }
    }
    out
}

fn accepted(flag: char) -> bool {
    matches!(flag, ' ' | '+' | '-' | '*' | '=')
}

/// What a push does to one ref.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RefOp {
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

    /// The `git push` arguments of this op on `name`.
    fn args(self, name: &str) -> [String; 2] {
        let lease = self.lease().map(|l| l.to_string()).unwrap_or_default();
        let refspec = match self.new_value() {
            Some(new) => format!("{new}:{name}"),
            None => format!(":{name}"),
        };
        [format!("--force-with-lease={name}:{lease}"), refspec]
    }
}

/// One key a push sends (or deletes).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Send {
    key: String,
    op: RefOp,
}

/// Each selected key's plan: sent (or deleted), or held with a reason.
/// A remote value that is not a brief of the key is replaced; a key or a
/// brief holding a secret is refused (a brief the gate saw clean before,
/// by blob id, is not scanned again).
fn plan_keys(
    repo: &gix::Repository,
    remote: &str,
    sides: &Sides,
    selected: Vec<String>,
    options: &PushOptions,
) -> Result<(Vec<PushedKey>, Vec<Send>)> {
    let redact_options = redact::Options::from_repo(repo);
    let mut cache = crate::sync::gate_cache::GateCache::load(repo, redact_options);
    let mut keys = Vec::new();
    let mut sends = Vec::new();
    for key in selected {
        let p = match sides.get(&key) {
            // The remote holds something that is not a brief of this key
            // (fetch reported it as ignored): the local brief replaces it,
            // with a lease on exactly that value.
            (Some(l), _, Some(r)) if l != r && !is_brief(repo, Some(r), &key) => Plan::Send {
                lease: Some(r),
                new: l,
            },
            sides_of_key => plan(
                &key,
                remote,
                sides_of_key,
                !options.keys.is_empty(),
                options.prune,
            ),
        };
        let refused = |lease, reason: String| PushedKey {
            key: crate::sync::gate::redacted_key(&key, redact_options),
            outcome: Outcome::Refused,
            lease,
            new: None,
            reason: Some(reason),
        };
        match p {
            Plan::UpToDate => {}
            Plan::Hold(outcome, reason) => keys.push(PushedKey {
                lease: sides.remote.get(&key).copied(),
                key,
                outcome,
                new: None,
                reason: Some(reason),
            }),
            Plan::Send { lease, .. } if let Some(rule) = redact::key_rule(&key, redact_options) => {
                keys.push(refused(lease, format!(
                    "the key holds a secret ({rule}) and would become a ref name on '{remote}'; `git handoff drop` it and write the brief under another key"
                )))
            }
            Plan::Send { lease, new } => {
                let data = repo
                    .find_blob(new)
                    .map(|b| b.detach().data)
                    .with_context(|| format!("cannot read brief '{key}'"))?;
                if cache.is_clean(&new, &data) {
                    sends.push(Send { key, op: RefOp::Update { lease, new } });
                    continue;
                }
                match check_pushable(&data, redact_options) {
                    Ok(()) => {
                        cache.record_clean(&data);
                        sends.push(Send { key, op: RefOp::Update { lease, new } })
                    }
                    Err(err) => keys.push(refused(lease, format!("{err:#}"))),
                }
            }
            Plan::Delete { lease } => sends.push(Send {
                key,
                op: RefOp::Delete { lease },
            }),
        }
    }
    cache.save();
    Ok((keys, sends))
}

/// The keys `push` considers: all of them, or the named ones (each must
/// exist here or on the remote).
fn selected_keys(sides: &Sides, remote: &str, options: &PushOptions) -> Result<Vec<String>> {
    let all = sides.keys();
    if options.keys.is_empty() {
        return Ok(all.into_iter().collect());
    }
    for key in &options.keys {
        if !all.contains(key) {
            crate::refuse!(
                "no brief '{key}' here or on '{remote}'; `git handoff list` shows the keys; nothing was pushed"
            );
        }
    }
    Ok(options.keys.clone())
}

/// The notes tip to send, if the remote lacks it and the gate lets it go,
/// and what the report says about the history until the push answers.
fn plan_history(repo: &gix::Repository, remote: &str) -> Result<(Option<ObjectId>, HistoryPush)> {
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
fn batches(sends: &[Send], atomic: bool) -> Vec<&[Send]> {
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

/// The `git push` command line of one batch (and the history, if given).
fn push_args(
    remote: &str,
    options: &PushOptions,
    batch: &[Send],
    notes: Option<ObjectId>,
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
    for send in batch {
        args.extend(send.op.args(&store::ref_name(&send.key)));
    }
    if let Some(n) = notes {
        args.push(format!("{n}:{NOTES_REF}"));
    }
    args
}

/// A `git push` run and its porcelain results by destination ref.
type PushAnswer = (GitRun, HashMap<String, (char, String)>);

/// Run one `git push`; its porcelain results by destination ref.
fn run_push(
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
/// its base and remote value here (not in a dry run).
fn apply_results(
    repo: &gix::Repository,
    remote: &str,
    sides: &Sides,
    options: &PushOptions,
    batch: &[Send],
    (run, results): &PushAnswer,
) -> Result<Vec<PushedKey>> {
    let message = format!("handoff: push {remote}");
    let mut keys = Vec::new();
    for Send { key, op } in batch {
        let (outcome, reason) = match results.get(&store::ref_name(key)) {
            Some((flag, _)) if accepted(*flag) => match op {
                RefOp::Update { .. } => (Outcome::Pushed, None),
                RefOp::Delete { .. } => (Outcome::Deleted, None),
            },
            Some((_, summary)) => (Outcome::Rejected, Some(rejection(remote, key, summary))),
            None => (
                Outcome::Rejected,
                Some(format!(
                    "git push did not report it: {}",
                    git_reason(&run.stderr)
                )),
            ),
        };
        if !options.dry_run && reason.is_none() {
            let base_name = base_ref(remote, key);
            let base = sides.base.get(key).copied();
            let edits = match op.new_value() {
                Some(new) => vec![
                    set(&base_name, previous(base), new, &message)?,
                    set(&tip_ref(remote, key), PreviousValue::Any, new, &message)?,
                ],
                None => {
                    let mut e = vec![delete(&tip_ref(remote, key), PreviousValue::Any)?];
                    if base.is_some() {
                        e.push(delete(&base_name, previous(base))?);
                    }
                    e
                }
            };
            // A lost race here only means another fetch moved the base
            // meanwhile; the next fetch recomputes it.
            transaction(repo, edits)?;
        }
        keys.push(PushedKey {
            key: key.clone(),
            outcome,
            lease: op.lease(),
            new: op.new_value(),
            reason,
        });
    }
    Ok(keys)
}

/// What happened to the history sent as `notes` in a push.
fn history_result(
    repo: &gix::Repository,
    remote: &str,
    options: &PushOptions,
    notes: ObjectId,
    (run, results): &PushAnswer,
) -> Result<HistoryPush> {
    Ok(match results.get(NOTES_REF) {
        Some((flag, summary)) if accepted(*flag) => {
            if !options.dry_run {
                pushed_notes(repo, remote, notes)?;
            }
            HistoryPush::Pushed(summary.clone())
        }
        Some(_) if options.dry_run && !options.atomic => HistoryPush::WouldMerge,
        Some((_, summary)) if options.atomic || options.dry_run => {
            HistoryPush::Rejected(summary.clone())
        }
        Some(_) => retry_notes(repo, remote)?,
        None => HistoryPush::Rejected(git_reason(&run.stderr)),
    })
}

/// Push: fetch first (so leases are current), then send each key that is
/// ahead with `--force-with-lease=refs/handoffs/<key>:<base>`, never a
/// diverged one, delete dropped keys with `prune`, and push the merged
/// notes history (fast-forward only), all in one `git push` unless the
/// command line would overflow. With `dry_run` nothing is fetched or
/// changed: the plan comes from the last fetch and `git push --dry-run`
/// checks the leases.
pub fn push(repo: &gix::Repository, remote: &str, options: &PushOptions) -> Result<PushReport> {
    remotes::migrate(repo)?;
    let fetch_report = if options.dry_run {
        None
    } else {
        Some(fetch(repo, remote)?)
    };
    let sides = Sides::read(repo, remote)?;
    let selected = selected_keys(&sides, remote, options)?;
    let (mut keys, sends) = plan_keys(repo, remote, &sides, selected, options)?;
    let (mut notes_to_push, mut history) = plan_history(repo, remote)?;
    let mut batches = batches(&sends, options.atomic);
    if batches.is_empty() && notes_to_push.is_some() {
        batches.push(&[]);
    }
    let mut stale_lock = None;
    for batch in batches {
        let notes = notes_to_push.take();
        let args = push_args(remote, options, batch, notes);
        let answer = run_push(repo, remote, options, &args)?;
        if stale_lock.is_none() {
            stale_lock = stale_git_lock(&answer.0.stderr).map(str::to_string);
        }
        keys.extend(apply_results(
            repo, remote, &sides, options, batch, &answer,
        )?);
        if let Some(n) = notes {
            history = history_result(repo, remote, options, n, &answer)?;
        }
    }
    keys.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(PushReport {
        remote: remote.to_string(),
        dry_run: options.dry_run,
        fetch: fetch_report,
        keys,
        history,
        stale_lock,
    })
}

/// Why the history in `ours` that `theirs` lacks may not be pushed, if
/// any line of it (a brief or not) or any commit message holds a secret.
fn unpushable_history(
    repo: &gix::Repository,
    ours: ObjectId,
    theirs: Option<ObjectId>,
) -> Result<Option<String>> {
    let found = crate::sync::gate::outgoing_history(repo, ours, theirs)?;
    Ok((!found.is_empty()).then(|| {
        format!(
            "{} history line{} hold{} secrets: {}; `git handoff redact --history` removes them",
            found.len(),
            if found.len() == 1 { "" } else { "s" },
            if found.len() == 1 { "s" } else { "" },
            crate::sync::gate::list(&found),
        )
    }))
}

fn rejection(remote: &str, key: &str, summary: &str) -> String {
    if summary.contains("stale info") {
        format!(
            "'{remote}' changed it since the last fetch; `git handoff fetch {remote}` shows the new version, then push again"
        )
    } else if summary.contains("atomic") {
        "not pushed: another ref of this atomic push was refused".to_string()
    } else {
        format!(
            "'{remote}' refused it: {summary}; if someone pushed '{key}' meanwhile, `git handoff fetch {remote}` shows it, then push again"
        )
    }
}

fn pushed_notes(repo: &gix::Repository, remote: &str, id: ObjectId) -> Result<()> {
    let message = format!("handoff: push {remote}");
    mirror(repo, &remotes::notes_ref(remote), Some(id), &message)?;
    mirror(repo, &remotes::staged_notes_ref(remote), Some(id), &message)
}

/// The history push lost a race with another pusher: fetch the remote's
/// history, merge it and push again, a few times.
fn retry_notes(repo: &gix::Repository, remote: &str) -> Result<HistoryPush> {
    let mut last = String::new();
    for _ in 0..NOTES_RETRIES {
        git_fetch(repo, remote, false)?;
        let staged = staged_notes(repo, remote)?;
        if let Staged::Invalid(id) = staged {
            return Ok(HistoryPush::Rejected(format!(
                "'{remote}' holds {} at {NOTES_REF}, which is not a notes history",
                id.to_hex_with_len(7)
            )));
        }
        let theirs = publish_remote_notes(repo, remote, staged)?;
        merge_notes(repo, remote, theirs)?;
        let Some(ours) = history::peel(repo, NOTES_REF)? else {
            return Ok(HistoryPush::None);
        };
        if Some(ours) == theirs {
            return Ok(HistoryPush::UpToDate);
        }
        let run = git(
            repo,
            &[
                "push".into(),
                "--porcelain".into(),
                "--no-follow-tags".into(),
                "--recurse-submodules=no".into(),
                remote.into(),
                format!("{ours}:{NOTES_REF}"),
            ],
        )?;
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

// ---------------------------------------------------------------------------
// Resolve

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
    let sides = Sides::read(repo, remote)?;
    let (l, b, r) = sides.get(key);
    let diverged = match (l, b, r) {
        (Some(l), Some(b), Some(r)) => l != r && b != l && b != r,
        (Some(l), None, Some(r)) => l != r,
        _ => false,
    };
    if !diverged {
        return Err(ResolveError::NotDiverged {
            key: key.to_string(),
            remote: remote.to_string(),
        }
        .into());
    }
    let (l, r) = (l.expect("diverged"), r.expect("diverged"));
    if resolution == Resolution::TakeRemote && !is_brief(repo, Some(r), key) {
        return Err(ResolveError::NotABrief {
            key: key.to_string(),
            remote: remote.to_string(),
            id: r.to_hex_with_len(7).to_string(),
        }
        .into());
    }
    let message = format!("handoff: resolve {key} with {remote}");
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
    Ok(Resolved {
        key: key.to_string(),
        remote: remote.to_string(),
        resolution,
        local: info(repo, Some(l)).expect("id given"),
        theirs: info(repo, Some(r)).expect("id given"),
    })
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
        let p = |l, b, r, named, prune| plan("k", "origin", (l, b, r), named, prune);
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
    fn a_stale_git_lock_is_named_with_its_fix() {
        let stderr = "error: cannot lock ref 'refs/handoff-fetch/o/briefs/k': Unable to create '/r/.git/refs/handoff-fetch/o/briefs/k.lock': File exists.\n\nAnother git process seems to be running in this repository\n";
        assert_eq!(
            stale_git_lock(stderr),
            Some("/r/.git/refs/handoff-fetch/o/briefs/k.lock")
        );
        let err = git_failure("fetch from 'o'", stderr, "hint").to_string();
        assert!(
            err.ends_with("rm '/r/.git/refs/handoff-fetch/o/briefs/k.lock'"),
            "{err}"
        );
        let other = git_failure("fetch from 'o'", "fatal: no such remote\n", "hint").to_string();
        assert_eq!(
            other,
            "git fetch from 'o' failed: fatal: no such remote; hint"
        );
    }

    #[test]
    fn cat_sort_uniq_unions_lines() {
        assert_eq!(cat_sort_uniq(b"b\na\n", b"c\na\n\n"), b"a\nb\nc\n".to_vec());
        assert_eq!(cat_sort_uniq(b"", b"x"), b"x\n".to_vec());
    }

    #[test]
    fn porcelain_lines_are_read_by_destination() {
        let out = "To file:///r\n*\tabc:refs/handoffs/a\t[new reference]\n!\tdef:refs/handoffs/b\t[rejected] (stale info)\n-\t:refs/handoffs/c\t[deleted]\nDone\n";
        let r = porcelain(out);
        assert_eq!(r["refs/handoffs/a"].0, '*');
        assert_eq!(
            r["refs/handoffs/b"],
            ('!', "[rejected] (stale info)".to_string())
        );
        assert_eq!(r["refs/handoffs/c"].0, '-');
    }
}
