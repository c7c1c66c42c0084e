//! Remotes and the refs that remember what each remote holds.
//!
//! | ref | what it holds |
//! |---|---|
//! | `refs/handoff-remotes/<remote>/briefs/<key>` | the **base**: the last version both sides agreed on |
//! | `refs/handoff-remotes/<remote>/notes` | the remote's notes history as of the last fetch, once validated |
//! | `refs/handoff-fetch/<remote>/briefs/<key>` | the remote's value as of the last fetch (the staging namespace `git fetch` writes into) |
//! | `refs/handoff-fetch/<remote>/notes/handoffs` | the remote's notes history as of the last fetch, as fetched |
//!
//! None of these is under `refs/remotes/`, which belongs to git's
//! remote-tracking branches (a teammate's branch `handoffs/<key>` would
//! land there). Versions before this one kept the bases under
//! `refs/remotes/<remote>/handoffs/` and the history under
//! `refs/notes/remotes/<remote>/handoffs`; [`migrate`] moves them.

use std::collections::BTreeMap;

use anyhow::{Context, Result, anyhow, bail};
use gix::ObjectId;
use gix::bstr::ByteSlice;

use crate::git::refdb;
use crate::store::{Stored, refs};

/// The staging namespace fetches write into.
pub const STAGING_PREFIX: &str = "refs/handoff-fetch/";

/// The namespace that remembers what each remote holds.
pub const REMOTES_PREFIX: &str = "refs/handoff-remotes/";

/// The namespace a push pins the briefs it creates in, while `git push`
/// runs: `refs/handoff-push/<pid>/<key>`.
pub const OUTGOING_PREFIX: &str = "refs/handoff-push/";

/// The one ref component a remote's bookkeeping refs sit under: its name
/// with `%` and `/` escaped (`%25`, `%2F`), so that every remote has a
/// namespace of its own — `origin` and `origin/briefs` would otherwise
/// share `…/origin/briefs/`, and fetching one would prune the other's.
/// A name with neither character is its own component, as before.
pub fn remote_dir(remote: &str) -> std::borrow::Cow<'_, str> {
    if !remote.contains(['%', '/']) {
        return std::borrow::Cow::Borrowed(remote);
    }
    std::borrow::Cow::Owned(remote.replace('%', "%25").replace('/', "%2F"))
}

/// The remote whose [`remote_dir`] is `dir`, if `dir` is one.
pub fn remote_of_dir(dir: &str) -> Option<String> {
    if dir.contains('/') {
        return None;
    }
    if !dir.contains('%') {
        return Some(dir.to_string());
    }
    let out = dir.replace("%2F", "/").replace("%25", "%");
    (remote_dir(&out) == dir).then_some(out)
}

/// The base of `key` with `remote`: the last version both sides agreed on.
pub fn base_ref(remote: &str, key: &str) -> String {
    format!("{}{key}", base_prefix(remote))
}

/// The namespace of the bases of `remote`. The bases sit one level below
/// the remote (`briefs/`), so that no key (`notes` included) can collide
/// with the notes ref beside them.
pub fn base_prefix(remote: &str) -> String {
    format!("{REMOTES_PREFIX}{}/briefs/", remote_dir(remote))
}

/// `remote`'s value of `key` as of the last fetch.
pub fn tip_ref(remote: &str, key: &str) -> String {
    format!("{}{key}", tip_prefix(remote))
}

/// The namespace of `remote`'s fetched briefs.
pub fn tip_prefix(remote: &str) -> String {
    format!("{}briefs/", staging_prefix(remote))
}

/// Everything a fetch from `remote` stages sits below this.
pub fn staging_prefix(remote: &str) -> String {
    format!("{STAGING_PREFIX}{}/", remote_dir(remote))
}

/// Where `git fetch` puts `remote`'s notes history.
pub fn staged_notes_ref(remote: &str) -> String {
    format!("{}notes/handoffs", staging_prefix(remote))
}

/// `remote`'s notes history as of the last fetch.
pub fn notes_ref(remote: &str) -> String {
    format!("{REMOTES_PREFIX}{}/notes", remote_dir(remote))
}

/// The remote whose notes ref `name` is (see [`notes_ref`]), if it is one.
pub fn notes_ref_remote(name: &str) -> Option<String> {
    remote_of_dir(name.strip_prefix(REMOTES_PREFIX)?.strip_suffix("/notes")?)
}

/// The remote and key of the base ref `name` (see [`base_ref`]), if it is one.
pub fn base_ref_parts(name: &str) -> Option<(String, &str)> {
    let (dir, key) = name.strip_prefix(REMOTES_PREFIX)?.split_once("/briefs/")?;
    (!key.contains('/')).then_some((remote_of_dir(dir)?, key))
}

/// Whether `name` is a configured remote.
pub fn is_remote(repo: &gix::Repository, name: &str) -> bool {
    !name.is_empty()
        && repo
            .remote_names()
            .iter()
            .any(|n| n.as_bstr() == name.as_bytes())
}

/// `name` if it is a configured remote whose name fits in a ref name.
pub fn checked_remote(repo: &gix::Repository, name: &str) -> Result<String> {
    if !is_remote(repo, name) {
        crate::refuse!(
            "'{name}' is not a remote of this repository; `git remote -v` lists them, `git remote add {name} URL` adds one"
        );
    }
    gix::refs::FullName::try_from(base_ref(name, "x")).map_err(|_| {
        anyhow!(
            "remote name '{name}' cannot be part of a ref name; rename it with `git remote rename`"
        )
    })?;
    Ok(name.to_string())
}

/// The remote to use when none is named: `handoff.remote`, else the
/// current branch's upstream remote, else `origin`. It must exist.
pub fn default_remote(repo: &gix::Repository) -> Result<String> {
    let config = repo.config_snapshot();
    if let Some(name) = config.string("handoff.remote") {
        let name = name.to_str_lossy().into_owned();
        if !is_remote(repo, &name) {
            crate::refuse!(
                "handoff.remote is '{name}', which is not a remote; fix it with `git config handoff.remote NAME`"
            );
        }
        return checked_remote(repo, &name);
    }
    if let Ok(head) = crate::git::refdb::head(repo)
        && let Some(branch) = head
            .branch
            .as_deref()
            .and_then(|b| b.strip_prefix("refs/heads/"))
        && let Some(remote) = repo.branch_remote_name(branch, gix::remote::Direction::Fetch)
        && let Some(name) = remote.as_symbol()
        && is_remote(repo, name)
    {
        return checked_remote(repo, name);
    }
    if is_remote(repo, "origin") {
        return checked_remote(repo, "origin");
    }
    Err(NoRemote.into())
}

/// No remote was named and none can be chosen: no `handoff.remote`, no
/// upstream of the branch, no `origin`. The command layer says how to
/// name one (`cli::hints`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("no remote to share with: there is no 'origin'")]
pub struct NoRemote;

/// A ref of the old layout could not be moved to `refs/handoff-remotes/`.
/// The command layer adds that the next fetch rebuilds it (`cli::hints`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "cannot move {name} to the refs/handoff-remotes/ namespace: {reason}; `git update-ref -d {name}` removes it"
)]
pub struct CannotMigrate {
    /// The old ref.
    pub name: String,
    /// Why the ref transaction failed.
    pub reason: String,
}

/// Every ref below `prefix` that points at an object, by the rest of its
/// name.
pub fn ids_under(repo: &gix::Repository, prefix: &str) -> Result<BTreeMap<String, ObjectId>> {
    crate::git::refdb::ids_under(repo, prefix)
}

fn per_remote(
    repo: &gix::Repository,
    name: impl Fn(&str) -> String,
) -> Result<BTreeMap<String, ObjectId>> {
    migrate(repo)?;
    let mut out = BTreeMap::new();
    for remote in repo.remote_names() {
        let remote = remote.to_str_lossy().into_owned();
        let full = name(&remote);
        if gix::refs::FullName::try_from(full.as_str()).is_err() {
            continue;
        }
        if let Some(id) = crate::git::refdb::id(repo, &full)? {
            out.insert(remote, id);
        }
    }
    Ok(out)
}

/// The remotes whose briefs this repository has never fetched: configured
/// remotes with nothing of theirs here (no history, no base, no staged
/// value). A fresh clone's `origin` is one: `git clone` does not bring
/// `refs/handoffs/*`.
pub fn never_fetched(repo: &gix::Repository) -> Result<Vec<String>> {
    let fetched = fetched_remotes(repo);
    let mut out = Vec::new();
    for remote in repo.remote_names() {
        let remote = remote.to_str_lossy().into_owned();
        if gix::refs::FullName::try_from(notes_ref(&remote)).is_err() {
            continue;
        }
        let known = fetched.contains(&remote)
            || crate::git::refdb::id(repo, &notes_ref(&remote))?.is_some()
            || !ids_under(repo, &staging_prefix(&remote))?.is_empty()
            || !ids_under(repo, &base_prefix(&remote))?.is_empty();
        if !known {
            out.push(remote);
        }
    }
    out.sort();
    Ok(out)
}

/// The file that names the remotes a fetch has reached (one per line),
/// even those that had no brief: a remote with nothing to share is not
/// "never fetched".
fn fetched_file(repo: &gix::Repository) -> std::path::PathBuf {
    repo.common_dir().join("handoff-fetched")
}

fn fetched_remotes(repo: &gix::Repository) -> Vec<String> {
    std::fs::read_to_string(fetched_file(repo))
        .map(|t| t.lines().map(str::to_string).collect())
        .unwrap_or_default()
}

/// Whether a fetch from `remote` ever went through here (so that bases
/// record what both sides last agreed on).
pub fn was_fetched(repo: &gix::Repository, remote: &str) -> bool {
    fetched_remotes(repo).iter().any(|r| r == remote)
}

/// Remember that a fetch from `remote` went through (best effort: it only
/// words a hint).
pub fn record_fetched(repo: &gix::Repository, remote: &str) {
    let mut known = fetched_remotes(repo);
    if known.iter().any(|r| r == remote) {
        return;
    }
    known.push(remote.to_string());
    known.sort();
    let text: String = known.iter().map(|r| format!("{r}\n")).collect();
    let _ = crate::support::atomic::write_unless_locked(&fetched_file(repo), text.as_bytes());
}

/// The file that keeps the divergences the last fetch of each remote
/// found (and writes on a diverged key moved on): one JSON array
/// `[remote, key, local id, remote id]` a line. What `list` and the
/// overview mark; the fetch report stays the authority.
fn diverged_file(repo: &gix::Repository) -> std::path::PathBuf {
    repo.common_dir().join("handoff-diverged")
}

/// One divergence: `key`'s local value `local` and `remote`'s `theirs`,
/// neither written on top of the other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    /// The remote.
    pub remote: String,
    /// The key.
    pub key: String,
    /// The local value when it was found.
    pub local: ObjectId,
    /// The remote's value.
    pub theirs: ObjectId,
}

fn read_divergences(repo: &gix::Repository) -> Vec<Divergence> {
    let Ok(text) = std::fs::read_to_string(diverged_file(repo)) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|line| {
            let (remote, key, local, theirs): (String, String, String, String) =
                serde_json::from_str(line).ok()?;
            Some(Divergence {
                remote,
                key,
                local: ObjectId::from_hex(local.as_bytes()).ok()?,
                theirs: ObjectId::from_hex(theirs.as_bytes()).ok()?,
            })
        })
        .collect()
}

fn save_divergences(repo: &gix::Repository, all: &[Divergence]) -> Result<()> {
    let mut text = String::new();
    for d in all {
        let line = (&d.remote, &d.key, d.local.to_string(), d.theirs.to_string());
        text.push_str(&serde_json::to_string(&line)?);
        text.push('\n');
    }
    crate::support::atomic::write(&diverged_file(repo), text.as_bytes())
}

/// Keep `found` as every divergence with `remote` (a fetch's verdicts
/// replace that remote's earlier ones).
pub fn record_divergences(
    repo: &gix::Repository,
    remote: &str,
    found: &[(String, ObjectId, ObjectId)],
) -> Result<()> {
    let mut all: Vec<Divergence> = read_divergences(repo)
        .into_iter()
        .filter(|d| d.remote != remote)
        .collect();
    if all.is_empty() && found.is_empty() && !diverged_file(repo).exists() {
        return Ok(());
    }
    all.extend(found.iter().map(|(key, local, theirs)| Divergence {
        remote: remote.to_string(),
        key: key.clone(),
        local: *local,
        theirs: *theirs,
    }));
    save_divergences(repo, &all)
}

/// The divergences of `key` whose local value was `previous`: after a
/// write moved the key from `previous` to `now`, they still hold (the new
/// version is written on top of the local line, not the remote's), and
/// are kept for `now`. The remotes, sorted.
pub fn carry_divergences(
    repo: &gix::Repository,
    key: &str,
    previous: ObjectId,
    now: ObjectId,
) -> Result<Vec<String>> {
    let mut all = read_divergences(repo);
    let mut remotes = Vec::new();
    for d in all
        .iter_mut()
        .filter(|d| d.key == key && d.local == previous)
    {
        d.local = now;
        remotes.push(d.remote.clone());
    }
    if !remotes.is_empty() {
        save_divergences(repo, &all)?;
    }
    remotes.sort();
    Ok(remotes)
}

/// After `key`'s local value moved from `from` to `to` by taking `by`'s
/// value (a fetch's fast-forward, a plain `git fetch` taken, a resolve
/// that took the remote's): the divergences with every other remote found
/// on `from` still hold unless the version graph places `to` on the same
/// line as that remote's value, and are kept for `to`. A divergence from
/// one remote is ended only by that remote (or by a version that descends
/// from its value), whatever another remote does. The moves are
/// `(key, from, to)`.
pub fn carry_taken(
    repo: &gix::Repository,
    by: &str,
    moves: &[(String, ObjectId, ObjectId)],
) -> Result<()> {
    use crate::store::lineage::{Graph, Relation};
    let mut all = read_divergences(repo);
    let touched = |d: &Divergence| {
        d.remote != by
            && moves
                .iter()
                .any(|(key, from, _)| d.key == *key && d.local == *from)
    };
    if !all.iter().any(touched) {
        return Ok(());
    }
    let mut graph = Graph::of_repo(repo, &[])?;
    let mut kept = Vec::with_capacity(all.len());
    for mut d in all.drain(..) {
        let moved = moves
            .iter()
            .find(|(key, from, _)| d.remote != by && d.key == *key && d.local == *from);
        if let Some((key, _, to)) = moved {
            match graph.relation(key, *to, d.theirs)? {
                // `to` holds the remote's value, or the remote's value
                // holds `to`: one line, no divergence.
                Relation::Same | Relation::Ahead | Relation::Behind => continue,
                Relation::Diverged => d.local = *to,
            }
        }
        kept.push(d);
    }
    save_divergences(repo, &kept)
}

/// Forget the divergence of `key` with `remote` (a resolve ended it).
pub fn forget_divergence(repo: &gix::Repository, remote: &str, key: &str) -> Result<()> {
    let all = read_divergences(repo);
    let kept: Vec<Divergence> = all
        .iter()
        .filter(|d| !(d.remote == remote && d.key == key))
        .cloned()
        .collect();
    if kept.len() != all.len() {
        save_divergences(repo, &kept)?;
    }
    Ok(())
}

/// Key → the remotes it has diverged with, as the last fetch found it
/// and only while both values are still the ones it saw.
pub fn diverged_keys(repo: &gix::Repository) -> Result<BTreeMap<String, Vec<String>>> {
    // What only marks a key never fails a read: the next fetch or push
    // settles the remotes again, and says why it cannot.
    let _ = settle(repo);
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for d in read_divergences(repo) {
        let local = crate::store::current_id(repo, &d.key)?;
        let theirs = refdb::id(repo, &tip_ref(&d.remote, &d.key))?;
        if local == Some(d.local) && theirs == Some(d.theirs) {
            out.entry(d.key).or_default().push(d.remote);
        }
    }
    Ok(out)
}

/// Remote name → that remote's value of `key` as of its last fetch.
pub fn remote_values(repo: &gix::Repository, key: &str) -> Result<BTreeMap<String, ObjectId>> {
    per_remote(repo, |r| tip_ref(r, key))
}

/// Remote name → the base of `key` with that remote.
pub fn base_values(repo: &gix::Repository, key: &str) -> Result<BTreeMap<String, ObjectId>> {
    per_remote(repo, |r| base_ref(r, key))
}

/// `remote`'s version of `key` as of the last fetch (or, when the fetched
/// value is gone, the last version agreed with it): what `show KEY@REMOTE`
/// and `resume KEY@REMOTE` read.
pub fn remote_brief(repo: &gix::Repository, remote: &str, key: &str) -> Result<Option<Stored>> {
    migrate(repo)?;
    for name in [tip_ref(remote, key), base_ref(remote, key)] {
        let Some(id) = crate::git::refdb::id(repo, &name)? else {
            continue;
        };
        let object = repo
            .find_object(id)
            .with_context(|| format!("{name} points at {id}, which is missing"))?;
        if object.kind != gix::object::Kind::Blob {
            bail!("{name} points at a {}, not a blob", object.kind);
        }
        return Ok(Some(Stored {
            key: key.to_string(),
            id,
            data: object.detach().data,
        }));
    }
    Ok(None)
}

/// The file that records the URL each configured remote had when
/// git-handoff last saw it (one JSON array `[remote, url]` a line): the
/// bookkeeping of a remote (its staging refs, bases, history, recorded
/// divergences) belongs to the repository at that URL, not to the name.
fn urls_file(repo: &gix::Repository) -> std::path::PathBuf {
    repo.common_dir().join("handoff-remote-urls")
}

/// Remote name → its URL (`remote.<name>.url` as configured, empty when
/// it has none), for every configured remote.
fn configured_urls(repo: &gix::Repository) -> BTreeMap<String, String> {
    let config = repo.config_snapshot();
    repo.remote_names()
        .iter()
        .map(|name| {
            let name = name.to_str_lossy().into_owned();
            let url = config
                .string(format!("remote.{name}.url").as_str())
                .map(|u| u.to_str_lossy().into_owned())
                .unwrap_or_default();
            (name, url)
        })
        .collect()
}

fn recorded_urls(repo: &gix::Repository) -> BTreeMap<String, String> {
    let Ok(text) = std::fs::read_to_string(urls_file(repo)) else {
        return BTreeMap::new();
    };
    text.lines()
        .filter_map(|line| serde_json::from_str::<(String, String)>(line).ok())
        .collect()
}

fn save_urls(repo: &gix::Repository, urls: &BTreeMap<String, String>) -> Result<()> {
    let mut text = String::new();
    for pair in urls {
        text.push_str(&serde_json::to_string(&pair)?);
        text.push('\n');
    }
    crate::support::atomic::write(&urls_file(repo), text.as_bytes())
}

/// Every bookkeeping ref of `remote` (staging refs, bases, the remote's
/// history), by full name.
fn bookkeeping_refs(repo: &gix::Repository, remote: &str) -> Result<Vec<(String, ObjectId)>> {
    let mut out = Vec::new();
    let dir = format!("{REMOTES_PREFIX}{}/", remote_dir(remote));
    for prefix in [staging_prefix(remote), dir] {
        for (rest, id) in ids_under(repo, &prefix)? {
            out.push((format!("{prefix}{rest}"), id));
        }
    }
    Ok(out)
}

/// Keep each remote's bookkeeping with the repository it was made with,
/// as git keeps a remote's remote-tracking branches with the remote:
/// - a remote whose URL changed (`git remote remove` then `git remote add`
///   of the same name, `git remote set-url`) is a new remote: what was
///   kept for the old one is dropped, so its bases never say a brief was
///   "deleted" on a repository that never held it (the next fetch or push
///   starts afresh, as with any remote never fetched);
/// - a remote renamed (`git remote rename`: its name gone, a new name with
///   its URL and no bookkeeping) has its bookkeeping moved to the new name;
/// - a remote removed keeps its bookkeeping out of the way: nothing reads
///   it unless a remote of that name and URL is added again.
///
/// Costs one small file read while the remotes are as last seen; ran at
/// most once per repository and process.
pub fn settle(repo: &gix::Repository) -> Result<()> {
    static DONE: std::sync::Mutex<Vec<std::path::PathBuf>> = std::sync::Mutex::new(Vec::new());
    let common = repo.common_dir().to_path_buf();
    if DONE.lock().is_ok_and(|d| d.contains(&common)) {
        return Ok(());
    }
    let configured = configured_urls(repo);
    let recorded = recorded_urls(repo);
    if configured != recorded {
        let mut next = recorded.clone();
        for (old, url) in recorded
            .iter()
            .filter(|(r, _)| !configured.contains_key(*r))
        {
            let renamed = configured
                .iter()
                .find(|(name, u)| *u == url && !recorded.contains_key(*name));
            if let Some((new, _)) = renamed
                && bookkeeping_refs(repo, new)?.is_empty()
            {
                move_bookkeeping(repo, old, new)?;
                next.remove(old);
            }
        }
        for (name, url) in &configured {
            if next.get(name).is_some_and(|was| was != url) {
                drop_bookkeeping(repo, name)?;
            }
            next.insert(name.clone(), url.clone());
        }
        // Best effort, as the list of remotes fetched: a record lost (a
        // read-only git dir, where no bookkeeping is written either) is
        // made again by the next command; a read never fails for it.
        if next != recorded {
            let _ = save_urls(repo, &next);
        }
    }
    if let Ok(mut done) = DONE.lock() {
        done.push(common);
    }
    Ok(())
}

/// Forget everything kept for `remote`: its staging refs, bases and
/// history, its recorded divergences, that it was fetched.
fn drop_bookkeeping(repo: &gix::Repository, remote: &str) -> Result<()> {
    let refs = bookkeeping_refs(repo, remote)?;
    delete_refs(repo, refs, &format!("what was kept for '{remote}'"))?;
    let all = read_divergences(repo);
    if all.iter().any(|d| d.remote == remote) {
        let kept: Vec<Divergence> = all.into_iter().filter(|d| d.remote != remote).collect();
        save_divergences(repo, &kept)?;
    }
    rename_fetched(repo, remote, None);
    Ok(())
}

/// Move everything kept for `old` to `new` (a renamed remote): its refs
/// in one transaction (each created under the new name, then the old one
/// deleted), its recorded divergences and that it was fetched.
fn move_bookkeeping(repo: &gix::Repository, old: &str, new: &str) -> Result<()> {
    use gix::refs::transaction::PreviousValue;
    let (old_dirs, new_dirs) = (
        [
            staging_prefix(old),
            format!("{REMOTES_PREFIX}{}/", remote_dir(old)),
        ],
        [
            staging_prefix(new),
            format!("{REMOTES_PREFIX}{}/", remote_dir(new)),
        ],
    );
    let message = format!("handoff: remote '{old}' renamed to '{new}'");
    let mut edits = Vec::new();
    for (name, id) in bookkeeping_refs(repo, old)? {
        let (from, to) = old_dirs
            .iter()
            .zip(&new_dirs)
            .find(|(from, _)| name.starts_with(from.as_str()))
            .expect("listed under one of them");
        let moved = format!("{to}{}", &name[from.len()..]);
        edits.push(refs::set(
            &moved,
            PreviousValue::MustNotExist,
            id,
            &message,
        )?);
        edits.push(refs::remove(&name, refs::expect(Some(id)))?);
    }
    if !edits.is_empty() {
        refs::commit(repo, edits).map_err(|e| {
            anyhow!("cannot move what was kept for '{old}' to '{new}': {e}; run again")
        })?;
    }
    let mut all = read_divergences(repo);
    if all.iter().any(|d| d.remote == old) {
        for d in all.iter_mut().filter(|d| d.remote == old) {
            d.remote = new.to_string();
        }
        save_divergences(repo, &all)?;
    }
    rename_fetched(repo, old, Some(new));
    Ok(())
}

/// Rename `remote` in the list of remotes fetched (`None`: remove it).
fn rename_fetched(repo: &gix::Repository, remote: &str, new: Option<&str>) {
    let mut known = fetched_remotes(repo);
    if !known.iter().any(|r| r == remote) {
        return;
    }
    known.retain(|r| r != remote);
    known.extend(new.map(str::to_string));
    known.sort();
    known.dedup();
    let text: String = known.iter().map(|r| format!("{r}\n")).collect();
    let _ = crate::support::atomic::write_unless_locked(&fetched_file(repo), text.as_bytes());
}

/// Where versions before this one kept the bases: `refs/remotes/`, shared
/// with git's remote-tracking branches.
const LEGACY_BASES: &str = "refs/remotes/";
/// Where versions before this one kept each remote's notes history.
const LEGACY_NOTES: &str = "refs/notes/remotes/";

/// A ref of the old layout and where it goes.
struct Legacy {
    old: String,
    id: ObjectId,
    /// The new name; `None`: the ref is damaged (a notes ref that is not a
    /// commit, copied there by an earlier version from a hostile remote)
    /// and is removed; the next fetch rebuilds it.
    new: Option<String>,
}

/// The refs of the old layout this repository still holds: bases (blob
/// refs under `refs/remotes/<remote>/handoffs/`; branches there are git's
/// and are left alone) and notes refs.
fn legacy_refs(repo: &gix::Repository) -> Result<Vec<Legacy>> {
    let mut out = Vec::new();
    for prefix in [LEGACY_BASES, LEGACY_NOTES] {
        for (name, value) in crate::git::refdb::list(repo, prefix)? {
            let Some(id) = value.id() else {
                continue;
            };
            let rest = &name[prefix.len()..];
            let kind = || repo.find_header(id).ok().map(|h| h.kind());
            let new = if prefix == LEGACY_NOTES {
                let Some(remote) = rest.strip_suffix("/handoffs") else {
                    continue;
                };
                (kind() == Some(gix::object::Kind::Commit)).then(|| notes_ref(remote))
            } else {
                let Some((remote, key)) = rest.rsplit_once("/handoffs/") else {
                    continue;
                };
                if crate::brief::keys::validate(key).is_err()
                    || kind() != Some(gix::object::Kind::Blob)
                {
                    continue;
                }
                Some(base_ref(remote, key))
            };
            out.push(Legacy { old: name, id, new });
        }
    }
    Ok(out)
}

/// How many refs of the old layout (bases and remote histories under
/// `refs/remotes/` and `refs/notes/remotes/`) this repository still holds.
pub fn legacy_count(repo: &gix::Repository) -> Result<usize> {
    Ok(legacy_refs(repo)?.len())
}

/// Move the refs of the old layout (`refs/remotes/<remote>/handoffs/<key>`,
/// `refs/notes/remotes/<remote>/handoffs`) into `refs/handoff-remotes/`,
/// once. Crash-safe: each ref is created under its new name before the
/// old one is deleted, in one transaction committed in that order; a run
/// killed in between leaves both, and the next run finds the new one
/// already there and only deletes the old. A damaged notes ref (not a
/// commit) is deleted. Ran at most once per repository and process.
pub fn migrate(repo: &gix::Repository) -> Result<()> {
    use gix::refs::transaction::PreviousValue;
    settle(repo)?;
    static DONE: std::sync::Mutex<Vec<std::path::PathBuf>> = std::sync::Mutex::new(Vec::new());
    let common = repo.common_dir().to_path_buf();
    if DONE.lock().is_ok_and(|d| d.contains(&common)) {
        return Ok(());
    }
    for legacy in legacy_refs(repo)? {
        let must = refs::expect(Some(legacy.id));
        let mut edits = Vec::new();
        if let Some(new) = &legacy.new
            && crate::git::refdb::value(repo, new)?.is_none()
        {
            edits.push(refs::set(
                new,
                PreviousValue::MustNotExist,
                legacy.id,
                &format!("handoff: moved from {}", legacy.old),
            )?);
        }
        edits.push(refs::remove(&legacy.old, must)?);
        match refs::commit(repo, edits) {
            Ok(()) => {}
            // Another process moved it meanwhile: the next run looks again.
            Err(err) if err.is_conflict() => return Ok(()),
            // A lock file a process killed mid-move left (git's rule: it
            // is named, with the `rm` that clears it; the old ref's own
            // `update-ref -d` would fail on it too).
            Err(_) if let Some(locked) = moved_refs_locked(repo, &legacy) => {
                return Err(locked.into());
            }
            Err(err) => {
                return Err(CannotMigrate {
                    name: legacy.old.clone(),
                    reason: err.to_string(),
                }
                .into());
            }
        }
    }
    if let Ok(mut done) = DONE.lock() {
        done.push(common);
    }
    Ok(())
}

/// The lock file that blocks moving `legacy` (its old ref's, its new
/// ref's or `packed-refs`'), if one exists.
fn moved_refs_locked(repo: &gix::Repository, legacy: &Legacy) -> Option<crate::store::StoreError> {
    let names = [Some(legacy.old.clone()), legacy.new.clone()];
    crate::store::lock_error(repo, names.into_iter().flatten())
}

/// Delete these refs (each only if it still holds the id given), in one
/// transaction.
fn delete_refs(repo: &gix::Repository, refs: Vec<(String, ObjectId)>, what: &str) -> Result<()> {
    if refs.is_empty() {
        return Ok(());
    }
    let mut edits = Vec::new();
    for (name, id) in refs {
        edits.push(refs::remove(&name, refs::expect(Some(id)))?);
    }
    refs::commit(repo, edits).map_err(|e| anyhow!("cannot remove {what}: {e}; run again"))?;
    Ok(())
}

/// Forget what `git fetch` staged from `remote` (a fetch refused after
/// staging it): nothing of it is read until the next fetch.
pub fn forget_staged(repo: &gix::Repository, remote: &str) -> Result<()> {
    let prefix = staging_prefix(remote);
    let refs = ids_under(repo, &prefix)?
        .into_iter()
        .map(|(rest, id)| (format!("{prefix}{rest}"), id))
        .collect();
    delete_refs(repo, refs, &format!("what was fetched from '{remote}'"))
}

/// After `redact --history`: forget what the remotes held as of their last
/// fetch (every staged ref and every remote's notes history: they hold the
/// versions just redacted, and `log` reads them) and every base that holds
/// a secret. The next fetch brings them back only through the secret gate.
pub fn forget_remote_secrets(repo: &gix::Repository) -> Result<()> {
    migrate(repo)?;
    let options = crate::brief::redact::Options::from_repo(repo);
    let mut refs: Vec<(String, ObjectId)> = ids_under(repo, STAGING_PREFIX)?
        .into_iter()
        .map(|(rest, id)| (format!("{STAGING_PREFIX}{rest}"), id))
        .collect();
    for (rest, id) in ids_under(repo, REMOTES_PREFIX)? {
        let name = format!("{REMOTES_PREFIX}{rest}");
        let secret = || {
            repo.find_blob(id)
                .is_ok_and(|b| !crate::brief::redact::find_in_line(&b.data, options).is_empty())
        };
        if notes_ref_remote(&name).is_some() || secret() {
            refs.push((name, id));
        }
    }
    delete_refs(repo, refs, "what the remotes held as of their last fetch")
}
