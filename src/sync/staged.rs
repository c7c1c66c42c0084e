//! Taking what a plain `git fetch` staged. `git handoff init` adds to each
//! remote the refspecs of [`refspecs`], so that `git fetch` / `git pull`
//! bring the remote's briefs and notes history into the staging namespace
//! (`refs/handoff-fetch/<remote>/`), exactly where `fetch` puts them. The
//! next git-handoff command takes them with the local part of `fetch`
//! (validation, the secret gate, the notes merge, the three-way
//! reconciliation), never the network.
//!
//! Whether something new was staged is decided cheaply: every
//! reconciliation records, per remote, a digest of the staged values it
//! read and a stamp of the files a ref update touches (the staging
//! folders, `packed-refs`, the reftable list). While the stamp is
//! unchanged, nothing is read; when it changed, the staged refs are
//! listed and compared with the digest. A stamp taken within
//! [`RACY`] of a change is not trusted (a folder's time stamp can miss a
//! second update within one clock tick), as git does with its index.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Result;
use gix::ObjectId;
use serde::{Deserialize, Serialize};

use super::fetch::{FetchOptions, FetchReport, Status, fetch_refspecs, reconcile_staged};
use crate::store::remotes;

/// How close to the time it was taken a stamp's newest file time may be
/// and still be trusted without listing the refs again.
const RACY: Duration = Duration::from_secs(2);

/// The fetch refspecs that make a plain `git fetch REMOTE` bring
/// `remote`'s briefs and notes history into the staging namespace, as
/// `git handoff init` writes them to `remote.<remote>.fetch`.
pub fn refspecs(remote: &str) -> Vec<String> {
    fetch_refspecs(remote, true)
}

/// What the last reconciliation with one remote read from the staging
/// namespace.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Seen {
    /// The stamp of the files a ref update touches ([`file_stamp`]).
    files: String,
    /// When the stamp was taken, in nanoseconds since the epoch.
    at: u128,
    /// The newest file time in the stamp, in nanoseconds since the epoch.
    newest: u128,
    /// The digest of the staged values ([`digest`]).
    digest: String,
    /// The digest of the staged briefs that differ from their bases
    /// ([`unsettled_digest`]; empty in a record an older release wrote).
    #[serde(default)]
    tips: String,
}

/// What a reconciliation read from the staging namespace, recorded once
/// it is done ([`Reading::record`]).
pub(super) struct Reading {
    seen: Seen,
    /// The digest of the staged values read ([`staged_digest`]).
    staged: String,
    /// The staged briefs read.
    tips: BTreeMap<String, ObjectId>,
}

impl Reading {
    /// Start reading `remote`'s staged values `tips` (briefs by key): the
    /// stamp is taken now, so that a ref written after the values were
    /// listed is within [`RACY`] of it, or changes it.
    pub(super) fn start(
        repo: &gix::Repository,
        remote: &str,
        tips: &BTreeMap<String, ObjectId>,
    ) -> Reading {
        Reading {
            seen: stamped(repo, remote),
            staged: staged_digest(repo, tips, staged_notes_id(repo, remote)),
            tips: tips.clone(),
        }
    }

    /// Record that what [`Reading::start`] read was reconciled (best
    /// effort: a lost record costs one more reconciliation, never a lost
    /// value).
    pub(super) fn record(self, repo: &gix::Repository, remote: &str) {
        let mut seen = self.seen;
        seen.digest = digest(repo, remote, &self.staged);
        // Against the bases as the reconciliation left them, but of the
        // values it read: one `git fetch` staged meanwhile stays news.
        seen.tips = unsettled_digest(repo, remote, &self.tips);
        let mut all = load(repo);
        all.insert(remote.to_string(), seen);
        save(repo, &all);
    }
}

/// A [`Seen`] with the stamp of `remote`'s staging files taken now, and
/// no digest yet.
fn stamped(repo: &gix::Repository, remote: &str) -> Seen {
    let at = nanos(SystemTime::now());
    let (files, newest) = file_stamp(repo, remote);
    Seen {
        files,
        at,
        newest,
        digest: String::new(),
        tips: String::new(),
    }
}

/// The staged notes ref's value.
fn staged_notes_id(repo: &gix::Repository, remote: &str) -> Option<ObjectId> {
    crate::git::refdb::id(repo, &remotes::staged_notes_ref(remote))
        .ok()
        .flatten()
}

/// The remotes whose staging namespace holds values that no
/// reconciliation read yet (a plain `git fetch` brought them), sorted.
/// Costs a few file stats per remote when nothing changed.
pub fn pending(repo: &gix::Repository) -> Result<Vec<String>> {
    let mut all = load(repo);
    let mut rerecorded = false;
    let mut out = Vec::new();
    for remote in repo.remote_names() {
        let remote = remote.to_string();
        if gix::refs::FullName::try_from(remotes::tip_ref(&remote, "x")).is_err() {
            continue;
        }
        let mut now = stamped(repo, &remote);
        let seen = all.get(&remote);
        if seen.is_some_and(|s| s.files == now.files && s.newest + RACY.as_nanos() < s.at) {
            continue;
        }
        let (tips, notes) = staged(repo, &remote)?;
        now.digest = digest(repo, &remote, &staged_digest(repo, &tips, notes));
        // Staged values forgotten (a refused fetch, `redact --history`)
        // leave nothing to take: no remote deletes every key and its
        // history at once.
        let nothing = tips.is_empty() && notes.is_none();
        now.tips = unsettled_digest(repo, &remote, &tips);
        // The same staged briefs unlike their bases (a push moves a key's
        // base and staged value together), and a history this one holds
        // and the remote's known history is: this process's own push moved
        // the staging (a diverged key is not reported again for it).
        let own_history = seen.is_some_and(|s| !s.tips.is_empty() && s.tips == now.tips)
            && notes.is_some_and(|n| history_taken(repo, &remote, n));
        if nothing || own_history || seen.is_some_and(|s| s.digest == now.digest) {
            all.insert(remote, now);
            rerecorded = true;
        } else {
            out.push(remote);
        }
    }
    if rerecorded {
        save(repo, &all);
    }
    out.sort();
    Ok(out)
}

/// Take what a plain `git fetch` staged from `remote`, no network: the
/// local part of `fetch`, with its rules and its report. `None` when
/// nothing is staged, or when a fetch, push or resolve with `remote` is
/// running (it takes what is staged itself).
pub fn take(repo: &gix::Repository, remote: &str) -> Result<Option<FetchReport>> {
    remotes::migrate(repo)?;
    // Under the remote's sync lock, as fetch decides; a fetch or push
    // running meanwhile takes what is staged itself.
    let Some(_lock) = super::lock::try_hold(repo, remote)? else {
        return Ok(None);
    };
    let (tips, notes) = staged(repo, remote)?;
    if tips.is_empty() && notes.is_none() {
        return Ok(None);
    }
    let (report, _) = reconcile_staged(repo, remote, tips, FetchOptions::default())?;
    Ok(Some(report))
}

/// Whether a reconciliation with this outcome may be recorded as read:
/// not when a key changed meanwhile (the next command takes it again).
pub(super) fn settled(report: &FetchReport) -> bool {
    !report.keys.iter().any(|k| k.status == Status::Conflict)
}

/// The staged brief values by key and the staged notes ref.
fn staged(
    repo: &gix::Repository,
    remote: &str,
) -> Result<(BTreeMap<String, ObjectId>, Option<ObjectId>)> {
    let tips = remotes::ids_under(repo, &remotes::tip_prefix(remote))?;
    Ok((tips, staged_notes_id(repo, remote)))
}

/// The digest a record holds: of the staged values ([`staged_digest`])
/// and of the remote's published notes history, which forgetting what the
/// remotes held (`redact --history`) deletes: the same values staged again
/// are then taken again, through the secret gate.
fn digest(repo: &gix::Repository, remote: &str, staged: &str) -> String {
    let published = crate::git::refdb::id(repo, &remotes::notes_ref(remote))
        .ok()
        .flatten();
    let mut hasher = gix::hash::hasher(repo.object_hash());
    hasher.update(staged.as_bytes());
    if let Some(id) = published {
        hasher.update(id.as_bytes());
    }
    hasher
        .try_finalize()
        .map(|id| id.to_string())
        .unwrap_or_default()
}

/// Whether the staged history `staged` is what the last fetch or push
/// knew of `remote`'s history (the published ref) and the local history
/// holds it: then nothing in it is new here.
fn history_taken(repo: &gix::Repository, remote: &str, staged: ObjectId) -> bool {
    let id = |name: &str| crate::git::refdb::id(repo, name).ok().flatten();
    if id(&remotes::notes_ref(remote)) != Some(staged) {
        return false;
    }
    match id(crate::store::NOTES_REF) {
        Some(ours) if ours == staged => true,
        Some(ours) => super::notes::contains(repo, ours, staged).is_ok_and(|c| c == Some(true)),
        None => false,
    }
}

/// A digest of the staged briefs `tips` that differ from their bases (a
/// base without a staged value counts, as a deletion): what a
/// reconciliation could still act on. A key whose staged value is its base
/// has nothing to take, as the three-way rules say (remote unchanged).
/// Empty when the bases cannot be listed (then nothing is trusted).
fn unsettled_digest(
    repo: &gix::Repository,
    remote: &str,
    tips: &BTreeMap<String, ObjectId>,
) -> String {
    let Ok(bases) = remotes::ids_under(repo, &remotes::base_prefix(remote)) else {
        return String::new();
    };
    let unsettled: BTreeMap<String, ObjectId> = tips
        .iter()
        .filter(|(k, id)| bases.get(*k) != Some(*id))
        .map(|(k, id)| (k.clone(), *id))
        .chain(
            bases
                .keys()
                .filter(|k| !tips.contains_key(*k))
                .map(|k| (k.clone(), ObjectId::null(repo.object_hash()))),
        )
        .collect();
    staged_digest(repo, &unsettled, None)
}

/// A digest of the staged values: every brief ref and the notes ref.
fn staged_digest(
    repo: &gix::Repository,
    tips: &BTreeMap<String, ObjectId>,
    notes: Option<ObjectId>,
) -> String {
    let mut hasher = gix::hash::hasher(repo.object_hash());
    for (key, id) in tips {
        hasher.update(key.as_bytes());
        hasher.update(b"\0");
        hasher.update(id.as_bytes());
    }
    hasher.update(b"\0notes\0");
    if let Some(id) = notes {
        hasher.update(id.as_bytes());
    }
    hasher
        .try_finalize()
        .map(|id| id.to_string())
        .unwrap_or_default()
}

/// The stamp of the files a ref update under `remote`'s staging
/// namespace touches (a loose ref is written by lock file and rename,
/// which changes its folder's time; a packed or reftable one rewrites
/// `packed-refs` or `reftable/tables.list`), and the newest time in it.
fn file_stamp(repo: &gix::Repository, remote: &str) -> (String, u128) {
    let common = repo.common_dir();
    let base = common.join(remotes::staging_prefix(remote).trim_end_matches('/'));
    let paths: [PathBuf; 5] = [
        base.clone(),
        base.join("briefs"),
        base.join("notes"),
        common.join("packed-refs"),
        common.join("reftable").join("tables.list"),
    ];
    let mut newest = 0;
    let parts: Vec<String> = paths
        .iter()
        .map(|p| {
            let Some((mtime, size, inode)) = stat(p) else {
                return "-".to_string();
            };
            newest = newest.max(mtime);
            format!("{mtime}.{size}.{inode}")
        })
        .collect();
    (parts.join(" "), newest)
}

/// A file's modification time (ns), size and inode.
fn stat(path: &Path) -> Option<(u128, u64, u64)> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(&meta);
    #[cfg(not(unix))]
    let inode = 0;
    Some((nanos(meta.modified().ok()?), meta.len(), inode))
}

fn nanos(t: SystemTime) -> u128 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos())
}

/// Where the records live: one file per repository.
fn path(repo: &gix::Repository) -> PathBuf {
    repo.common_dir().join("handoff-staged-seen")
}

fn load(repo: &gix::Repository) -> BTreeMap<String, Seen> {
    std::fs::read(path(repo))
        .ok()
        .and_then(|data| serde_json::from_slice(&data).ok())
        .unwrap_or_default()
}

fn save(repo: &gix::Repository, all: &BTreeMap<String, Seen>) {
    if let Ok(data) = serde_json::to_vec(all) {
        let _ = crate::support::atomic::write_unless_locked(&path(repo), &data);
    }
}

#[cfg(test)]
mod tests {
    use super::{Reading, load, pending, staged};
    use crate::support::test_git::git;

    /// A repository with remote `origin` and a staged value of key `k`.
    fn staged_repo(dir: &std::path::Path) {
        git(dir, &["init", "-q"], None);
        git(dir, &["remote", "add", "origin", "/nowhere"], None);
        stage(dir, "one");
    }

    /// Stage a blob holding `text` as `origin`'s value of `k`.
    fn stage(dir: &std::path::Path, text: &str) {
        let blob = git(dir, &["hash-object", "-w", "--stdin"], Some(text));
        git(
            dir,
            &[
                "update-ref",
                "refs/handoff-fetch/origin/briefs/k",
                blob.trim(),
            ],
            None,
        );
    }

    /// Record the staged values as reconciled, as a fetch does.
    fn reconciled(repo: &gix::Repository) {
        let (tips, _) = staged(repo, "origin").unwrap();
        Reading::start(repo, "origin", &tips).record(repo, "origin");
    }

    #[test]
    fn a_value_staged_at_once_after_a_reconciliation_is_pending() {
        let tmp = tempfile::tempdir().unwrap();
        staged_repo(tmp.path());
        let repo = gix::open(tmp.path()).unwrap();
        assert_eq!(pending(&repo).unwrap(), ["origin"], "never reconciled");
        reconciled(&repo);
        assert!(pending(&repo).unwrap().is_empty());
        // Within the same clock tick as the record: still seen.
        stage(tmp.path(), "two");
        assert_eq!(pending(&repo).unwrap(), ["origin"]);
        reconciled(&repo);
        assert!(pending(&repo).unwrap().is_empty());
    }

    #[test]
    fn an_old_stamp_is_trusted_and_a_moved_one_is_checked() {
        let tmp = tempfile::tempdir().unwrap();
        staged_repo(tmp.path());
        // The staging folders last changed long before the record.
        let staging = tmp.path().join(".git/refs/handoff-fetch/origin");
        for dir in [staging.join("briefs"), staging] {
            let dir = dir.to_str().unwrap().to_string();
            let ok = std::process::Command::new("touch")
                .args(["-d", "2020-01-01T00:00:00", &dir])
                .status()
                .unwrap()
                .success();
            assert!(ok);
        }
        let repo = gix::open(tmp.path()).unwrap();
        reconciled(&repo);
        let trusted = load(&repo)["origin"].clone();
        assert!(pending(&repo).unwrap().is_empty());
        assert_eq!(load(&repo)["origin"], trusted, "nothing was read again");
        stage(tmp.path(), "two");
        assert_eq!(pending(&repo).unwrap(), ["origin"]);
    }

    #[test]
    fn forgotten_staged_values_leave_nothing_to_take() {
        let tmp = tempfile::tempdir().unwrap();
        staged_repo(tmp.path());
        let repo = gix::open(tmp.path()).unwrap();
        reconciled(&repo);
        git(
            tmp.path(),
            &["update-ref", "-d", "refs/handoff-fetch/origin/briefs/k"],
            None,
        );
        assert!(pending(&repo).unwrap().is_empty());
    }

    /// A push moves the staged history to one the local history holds,
    /// and the remote's known one with it: nothing to take again. A staged
    /// history this one lacks is news.
    #[test]
    fn a_staged_history_of_this_ones_own_is_not_news() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        staged_repo(dir);
        git(dir, &["commit", "-q", "--allow-empty", "-m", "c"], None);
        git(
            dir,
            &["notes", "--ref=handoffs", "add", "-m", "l", "HEAD"],
            None,
        );
        let repo = gix::open(dir).unwrap();
        reconciled(&repo);
        let ours = git(dir, &["rev-parse", "refs/notes/handoffs"], None);
        let staged_notes = crate::store::remotes::staged_notes_ref("origin");
        let published = crate::store::remotes::notes_ref("origin");
        for name in [&staged_notes, &published] {
            git(dir, &["update-ref", name, ours.trim()], None);
        }
        assert!(pending(&repo).unwrap().is_empty());
        let empty_tree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
        let theirs = git(dir, &["commit-tree", empty_tree, "-m", "t"], None);
        for name in [&staged_notes, &published] {
            git(dir, &["update-ref", name, theirs.trim()], None);
        }
        assert_eq!(pending(&repo).unwrap(), ["origin"]);
        // Staged only (a plain `git fetch`), even of this one's own: news.
        git(dir, &["update-ref", &published, ours.trim()], None);
        git(dir, &["update-ref", &staged_notes, ours.trim()], None);
        reconciled(&repo);
        git(dir, &["update-ref", "-d", &published], None);
        assert_eq!(pending(&repo).unwrap(), ["origin"]);
    }
}
