//! The brief store: blobs under `refs/handoffs/<key>` in the common git dir,
//! updated in compare-and-swap ref transactions, with every version appended
//! to the notes history `refs/notes/handoffs` in the same transaction.
//!
//! The `store` layer: everything under `refs/` — this module's brief refs
//! and notes, [`history`] (every version), [`remotes`] (what each remote
//! holds), [`listcache`], [`retention`] and [`packed`] (many ref edits as
//! one rewrite of `packed-refs`). Never prints.

pub mod history;
pub mod history_index;
pub mod lineage;
pub mod listcache;
pub mod packed;
pub mod provenance;
pub mod refs;
pub mod remotes;
pub mod retention;

use anyhow::{Context, anyhow};
use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::refs::transaction::RefEdit;

use crate::brief::Brief;
use crate::git::refdb;

/// Where briefs live.
pub const REF_PREFIX: &str = "refs/handoffs/";

/// Where the history of every version lives.
pub const NOTES_REF: &str = "refs/notes/handoffs";

/// How often a write re-reads the notes history after another writer moved
/// it, before giving up.
const NOTES_RETRIES: usize = 50;

/// The full ref name of a key.
pub fn ref_name(key: &str) -> String {
    format!("{REF_PREFIX}{key}")
}

/// A stored brief: its key, blob id and raw bytes.
#[derive(Debug, Clone)]
pub struct Stored {
    /// The key (the ref name below `refs/handoffs/`).
    pub key: String,
    /// The blob id (the version's id).
    pub id: ObjectId,
    /// The blob content, as stored.
    pub data: Vec<u8>,
}

impl Stored {
    /// Parse the stored bytes as a brief. A brief stored under another
    /// key than its own (a hand-made ref, a tampered remote) is refused:
    /// its resume prompt would send the reader to the wrong brief.
    pub fn brief(&self) -> anyhow::Result<Brief> {
        let unreadable = |why: String| {
            anyhow::Error::new(Unreadable {
                key: self.key.clone(),
                short: short(&self.id),
                why,
            })
        };
        if let Some(schema) = crate::brief::written_by_newer(&self.data) {
            return Err(unreadable(format!(
                "written by a newer git-handoff (schema {schema}): upgrade to read it"
            )));
        }
        let brief = Brief::from_slice(&self.data).map_err(|e| unreadable(e.to_string()))?;
        if brief.key != self.key {
            return Err(unreadable(format!(
                "it is the brief of key '{}', stored under another key",
                brief.key.escape_debug()
            )));
        }
        Ok(brief)
    }
}

/// A stored brief that does not read back as a valid brief of its key.
#[derive(Debug, thiserror::Error)]
#[error("brief '{key}' ({short}) is unreadable: {why}")]
pub struct Unreadable {
    /// The key it is stored under.
    pub key: String,
    /// Its version id, 7 hex digits.
    pub short: String,
    /// What is wrong with it.
    pub why: String,
}

/// The first 7 hex digits of an id.
pub fn short(id: &ObjectId) -> String {
    id.to_hex_with_len(7).to_string()
}

/// Why a store update did not happen.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A brief changed between reading and writing (compare-and-swap lost).
    #[error("{}", conflict_message(.0))]
    Conflict(Vec<String>),
    /// A lock file left behind blocks the update.
    #[error(
        "cannot lock {what}: '{path}' exists; another git process may be running. If none is, remove it: rm '{path}'"
    )]
    Locked {
        /// What could not be locked.
        what: String,
        /// The lock file.
        path: String,
    },
    /// A key that a redaction rule matches: keys become ref names and
    /// history lines, so such a key is refused, never redacted.
    #[error(
        "the key holds a secret ({rule}); nothing was written. Keys become ref names and history lines: name the brief with a key without it"
    )]
    SecretKey {
        /// The rule that matched.
        rule: String,
    },
    /// Anything else.
    #[error(transparent)]
    Other(#[from] anyhow::Error),
}

fn conflict_message(keys: &[String]) -> String {
    match keys {
        [key] => format!("brief '{key}' changed while writing; run again"),
        keys => format!(
            "briefs {} changed while writing; nothing was written, run again",
            keys.iter()
                .map(|k| format!("'{k}'"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Read the brief stored under `key`, if any.
pub fn read(repo: &gix::Repository, key: &str) -> anyhow::Result<Option<Stored>> {
    let name = ref_name(key);
    let Some(value) = refdb::value(repo, &name)? else {
        return Ok(None);
    };
    let id = value
        .id()
        .ok_or_else(|| anyhow!("{name} is a symbolic ref; briefs are blobs. Remove it with `git update-ref -d --no-deref {name}`"))?;
    load(repo, &name, key, id).map(Some)
}

/// Read the blob `id` that the ref `name` (for `key`) points at.
pub fn load(repo: &gix::Repository, name: &str, key: &str, id: ObjectId) -> anyhow::Result<Stored> {
    let found = match repo.find_object(id) {
        Ok(object) => Ok(object),
        // A partial clone's plain `git fetch` may have left the blob on
        // the promisor remote: git fetches it.
        Err(_) if crate::git::cmd::fetch_missing(repo, &[id]) => repo.find_object(id),
        Err(err) => Err(err),
    };
    let object = found.with_context(|| {
        format!("{name} points at {id}, which is missing from the object database")
    })?;
    if object.kind != gix::object::Kind::Blob {
        return Err(anyhow!(
            "{name} points at a {}, not a blob; `git update-ref -d {name}` removes it",
            object.kind
        ));
    }
    Ok(Stored {
        key: key.to_string(),
        id,
        data: object.detach().data,
    })
}

/// The current id of `key`'s ref, without reading the blob.
pub fn current_id(repo: &gix::Repository, key: &str) -> anyhow::Result<Option<ObjectId>> {
    refdb::id(repo, &ref_name(key))
}

/// Every stored key and its blob id (or why it has none), sorted by key,
/// without reading any brief.
pub fn ids(repo: &gix::Repository) -> anyhow::Result<Vec<(String, anyhow::Result<ObjectId>)>> {
    Ok(refdb::list(repo, REF_PREFIX)?
        .into_iter()
        .map(|(full, value)| {
            let id = match value {
                refdb::Value::Id(id) => Ok(id),
                refdb::Value::Symbolic(_) => Err(anyhow!("{full} is a symbolic ref")),
                refdb::Value::Broken(why) => Err(anyhow!("{full} is a broken ref: {why}")),
            };
            (full[REF_PREFIX.len()..].to_string(), id)
        })
        .collect())
}

/// The stored keys, sorted, without reading any brief.
pub fn keys(repo: &gix::Repository) -> anyhow::Result<Vec<String>> {
    Ok(ids(repo)?.into_iter().map(|(key, _)| key).collect())
}

/// One entry of [`list`]: a key and its blob, or why it cannot be read.
pub type Listed = (String, anyhow::Result<Stored>);

/// Every stored brief, sorted by key. A ref that cannot be read is listed
/// with its error rather than failing the whole listing.
pub fn list(repo: &gix::Repository) -> anyhow::Result<Vec<Listed>> {
    list_under(repo, REF_PREFIX)
}

fn list_under(repo: &gix::Repository, prefix: &str) -> anyhow::Result<Vec<Listed>> {
    let mut out = Vec::new();
    for (full, value) in refdb::list(repo, prefix)? {
        let key = full[prefix.len()..].to_string();
        let entry = match value.id() {
            Some(id) => load(repo, &full, &key, id),
            None => Err(anyhow!("{full} is a symbolic ref")),
        };
        out.push((key, entry));
    }
    Ok(out)
}

/// One brief to store: the expected current value (compare-and-swap) and
/// the new brief.
#[derive(Debug, Clone)]
pub struct Update {
    /// The blob id read before the write began; `None` if the key was absent.
    pub expected: Option<ObjectId>,
    /// The brief to store under `brief.key`.
    pub brief: Brief,
}

/// What a write stored.
#[derive(Debug, Clone)]
pub struct Written {
    /// Per update, in order: the key and its new blob id.
    pub ids: Vec<(String, ObjectId)>,
    /// Whether the history note was written (not on an unborn branch).
    pub history: bool,
    /// The lines added to the history, each as it is stored.
    pub lines: Vec<String>,
}

/// Store the briefs in one ref transaction, all or none: each
/// `refs/handoffs/<key>` is compare-and-swapped against its `expected`
/// value, and `refs/notes/handoffs` gains one line per brief (on the note of
/// its `head_sha`) in the same transaction. A concurrent history update is
/// retried; a concurrent brief update is a [`StoreError::Conflict`].
pub fn write(
    repo: &gix::Repository,
    updates: &[Update],
    reflog: &str,
) -> Result<Written, StoreError> {
    write_versions(repo, updates, None, reflog)
}

/// Store the merge of a diverged key: `update` replaces the local brief it
/// expects, and its version has the versions of both that brief and
/// `other` (the remote's) as parents, so that both sides fast-forward to
/// it.
pub fn write_merge(
    repo: &gix::Repository,
    update: &Update,
    other: ObjectId,
    reflog: &str,
) -> Result<Written, StoreError> {
    write_versions(repo, std::slice::from_ref(update), Some(other), reflog)
}

fn write_versions(
    repo: &gix::Repository,
    updates: &[Update],
    merged_with: Option<ObjectId>,
    reflog: &str,
) -> Result<Written, StoreError> {
    refuse_unwritable(repo, updates)?;
    history::check_tip(repo, NOTES_REF)?;
    let blobs = write_blobs(repo, updates)?;
    let annotated = annotations(repo, updates, &blobs, merged_with)?;
    let mut attempt = 0;
    loop {
        attempt += 1;
        let mut edits = brief_edits(updates, &blobs, reflog);
        // The history first: the files backend commits a transaction ref by
        // ref (lock files renamed in this order), so a process killed in
        // that window leaves the history holding every new version and the
        // brief refs old (their lock files name themselves), never a brief
        // whose version the history lacks.
        if !annotated.is_empty() {
            edits.insert(0, again_after_gc(|| notes_edit(repo, &annotated, reflog))?);
        }
        crate::support::failpoint::reach("before-ref-transaction");
        let started = std::time::Instant::now();
        match refs::commit(repo, edits) {
            Ok(_) => {
                // A brief written again as stored has its version in the
                // history already.
                let again = updates
                    .iter()
                    .zip(&blobs)
                    .any(|(u, b)| u.expected == Some(*b) && u.brief.state.head_sha.is_some());
                return Ok(Written {
                    ids: updates
                        .iter()
                        .map(|u| u.brief.key.clone())
                        .zip(blobs)
                        .collect(),
                    history: !annotated.is_empty() || again,
                    lines: annotated
                        .iter()
                        .flat_map(|(_, text)| text.lines().map(str::to_string))
                        .collect(),
                });
            }
            Err(err) if err.is_conflict() => {
                let lost = changed_keys(repo, updates.iter().map(|u| (&u.brief.key, u.expected)))?;
                if !lost.is_empty() {
                    return Err(StoreError::Conflict(lost));
                }
                if attempt >= NOTES_RETRIES {
                    return Err(crate::refusal!(
                        "{NOTES_REF} kept changing while writing; nothing was written, run again"
                    )
                    .into());
                }
                std::thread::sleep(std::time::Duration::from_millis(attempt as u64 * 3));
            }
            Err(err) => {
                // A ref moved, vanished or was locked by a concurrent
                // writer while this transaction locked it: a conflict when
                // a brief changed, else a moment's contention worth a retry.
                let lost = changed_keys(repo, updates.iter().map(|u| (&u.brief.key, u.expected)))?;
                if !lost.is_empty() {
                    return Err(StoreError::Conflict(lost));
                }
                let names = || {
                    updates
                        .iter()
                        .map(|u| ref_name(&u.brief.key))
                        .chain([NOTES_REF.to_string()])
                };
                if let Some(held) = waited_out_a_lock(repo, started, names()) {
                    return Err(held);
                }
                if attempt < RACE_RETRIES {
                    std::thread::sleep(std::time::Duration::from_millis(attempt as u64 * 5));
                    continue;
                }
                return Err(lock_error(repo, names())
                    .unwrap_or_else(|| anyhow!("cannot update refs/handoffs: {err}").into()));
            }
        }
    }
}

/// Refuse, before anything is written, a key that holds a secret and a
/// brief too large to store.
fn refuse_unwritable(repo: &gix::Repository, updates: &[Update]) -> Result<(), StoreError> {
    let options = crate::brief::redact::Options::from_repo(repo);
    for update in updates {
        refuse_secret_key(&update.brief.key, options)?;
        if let Some(issue) = update.brief.stored_size_issue() {
            return Err(crate::refusal!(
                "brief '{}': {}; nothing was written",
                update.brief.key,
                issue.message
            )
            .into());
        }
    }
    Ok(())
}

/// Each brief's blob, in the order of `updates`.
fn write_blobs(repo: &gix::Repository, updates: &[Update]) -> anyhow::Result<Vec<ObjectId>> {
    let mut blobs = Vec::with_capacity(updates.len());
    for update in updates {
        let data = update.brief.to_pretty_json();
        // `git gc` removes empty object directories: a loose object whose
        // directory vanished between its creation and the rename is
        // written again, as git does.
        let mut attempt = 0;
        let id = loop {
            attempt += 1;
            match repo.write_blob(data.as_bytes()) {
                Ok(id) => break id.detach(),
                Err(_) if attempt < 5 => continue,
                Err(err) => return Err(err).context("cannot write the brief blob"),
            }
        };
        blobs.push(id);
    }
    Ok(blobs)
}

/// The history lines to add: each brief with a full head id, as compact
/// JSON on the note of that commit, followed by its lineage line (the
/// versions the brief it replaced here stands for, as its parents). A
/// brief written again exactly as stored makes no version.
fn annotations(
    repo: &gix::Repository,
    updates: &[Update],
    blobs: &[ObjectId],
    merged_with: Option<ObjectId>,
) -> anyhow::Result<Vec<(ObjectId, String)>> {
    let by = written_now(repo);
    let mut graph: Option<lineage::Graph> = None;
    let mut out = Vec::new();
    for (u, blob) in updates.iter().zip(blobs) {
        if u.expected == Some(*blob) {
            continue;
        }
        let Some(sha) = u.brief.state.head_sha.as_deref() else {
            continue;
        };
        let Ok(id) = ObjectId::from_hex(sha.as_bytes()) else {
            continue;
        };
        if sha.len() != id.kind().len_in_hex() {
            continue;
        }
        let mut parents = Vec::new();
        for replaced in u.expected.into_iter().chain(merged_with) {
            if graph.is_none() {
                graph = Some(lineage::Graph::of_repo(repo, &[])?);
            }
            let graph = graph.as_mut().expect("just made");
            parents.extend(graph.versions_of(&u.brief.key, replaced)?);
        }
        let (record, _) = lineage::line(repo.object_hash(), &u.brief.key, *blob, &parents, &by);
        let mut lines = format!("{}\n{record}", u.brief.to_compact_json());
        if let Some(graph) = graph.as_mut()
            && let Some(echo) = graph.v03_echo(&u.brief.key, *blob, &parents, &by)?
        {
            lines.push_str(&format!("\n{echo}"));
        }
        out.push((id, lines));
    }
    Ok(out)
}

/// Who writes now: the clock (`GIT_HANDOFF_NOW` when set), the agent
/// session the command runs in and the author's name, when known.
fn written_now(repo: &gix::Repository) -> lineage::Written {
    lineage::Written {
        at: crate::support::clock::now()
            .ok()
            .map(crate::support::clock::format),
        session: crate::git::sticky::current_session(repo),
        by: refs::signature(repo)
            .ok()
            .map(|(_, author)| author.name.to_string())
            .filter(|name| !name.trim().is_empty()),
    }
}

/// Record in the history a new version of `key` holding the stored brief
/// `brief` (whose head is `head`) on top of `parents` (versions): what
/// `resolve` adds — a merge version with both sides as parents, so that
/// the other side fast-forwards to it — and what a brief sanitized in
/// place adds. Only the notes history moves (compare-and-swap, retried
/// when another writer moved it). Returns the version's id.
pub fn record_version(
    repo: &gix::Repository,
    key: &str,
    (brief, head): (ObjectId, ObjectId),
    parents: &[ObjectId],
    reflog: &str,
) -> anyhow::Result<ObjectId> {
    history::check_tip(repo, NOTES_REF)?;
    let by = written_now(repo);
    let (mut line, version) = lineage::line(repo.object_hash(), key, brief, parents, &by);
    let mut graph = lineage::Graph::of_repo(repo, &[])?;
    if let Some(echo) = graph.v03_echo(key, brief, parents, &by)? {
        line.push_str(&format!("\n{echo}"));
    }
    let annotated = [(head, line)];
    let mut races = 0;
    for attempt in 1..=NOTES_RETRIES {
        let edit = again_after_gc(|| notes_edit(repo, &annotated, reflog))?;
        let started = std::time::Instant::now();
        match refs::commit(repo, vec![edit]) {
            Ok(_) => return Ok(version),
            Err(err) if attempt < NOTES_RETRIES && err.is_conflict() => {
                std::thread::sleep(std::time::Duration::from_millis(attempt as u64 * 3));
            }
            Err(err) if err.is_conflict() => {
                return Err(anyhow!("cannot update {NOTES_REF}: {err}"));
            }
            // A lock race (`git gc`'s `pack-refs` holding `packed-refs`,
            // another writer holding the notes ref): retried as `write`
            // retries it.
            Err(err) => {
                let names = || [NOTES_REF.to_string()];
                if let Some(held) = waited_out_a_lock(repo, started, names()) {
                    return Err(held.into());
                }
                races += 1;
                if races >= RACE_RETRIES {
                    return Err(lock_error(repo, names()).map_or_else(
                        || anyhow!("cannot update {NOTES_REF}: {err}"),
                        anyhow::Error::from,
                    ));
                }
                std::thread::sleep(std::time::Duration::from_millis(races as u64 * 5));
            }
        }
    }
    Err(crate::refusal!(
        "{NOTES_REF} kept changing while writing; nothing was written, run again"
    ))
}

/// One compare-and-swap edit per brief ref: from the value it was read at
/// (or none) to its new blob.
fn brief_edits(updates: &[Update], blobs: &[ObjectId], reflog: &str) -> Vec<RefEdit> {
    updates
        .iter()
        .zip(blobs)
        .map(|(u, id)| refs::update(ref_name(&u.brief.key), *id, u.expected, reflog))
        .collect()
}

/// Where archived briefs live (`git handoff prune`); not under
/// `refs/handoffs/`, so no command but `list --archived` and `restore`
/// sees them.
pub const ARCHIVE_PREFIX: &str = "refs/handoff-archive/";

/// The archive ref name of a key.
pub fn archive_ref_name(key: &str) -> String {
    format!("{ARCHIVE_PREFIX}{key}")
}

/// Every archived brief, sorted by key.
pub fn list_archived(repo: &gix::Repository) -> anyhow::Result<Vec<Listed>> {
    list_under(repo, ARCHIVE_PREFIX)
}

/// The current id of `key`'s archive ref.
pub fn archived_id(repo: &gix::Repository, key: &str) -> anyhow::Result<Option<ObjectId>> {
    refdb::id(repo, &archive_ref_name(key))
}

/// One retention move; each is compare-and-swapped on every ref it touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Move {
    /// Move the live brief `id` to the archive, replacing the archived
    /// version `replaces` (or none).
    Archive {
        /// The key.
        key: String,
        /// The live brief's blob.
        id: ObjectId,
        /// The archived blob it replaces, if one exists.
        replaces: Option<ObjectId>,
    },
    /// Delete the archived brief `id`.
    DeleteArchived {
        /// The key.
        key: String,
        /// The archived blob.
        id: ObjectId,
    },
    /// Move the archived brief `id` back; refused if a live brief exists.
    Restore {
        /// The key.
        key: String,
        /// The archived blob.
        id: ObjectId,
    },
}

impl Move {
    fn key(&self) -> &str {
        match self {
            Move::Archive { key, .. }
            | Move::DeleteArchived { key, .. }
            | Move::Restore { key, .. } => key,
        }
    }
}

/// Apply every move in ONE ref transaction, all or none. A ref that
/// changed since it was read fails the whole transaction with
/// [`StoreError::Conflict`]. The history notes are never touched.
pub fn apply_moves(repo: &gix::Repository, moves: &[Move], reflog: &str) -> Result<(), StoreError> {
    let delete = refs::delete;
    let create = |n: String, id: ObjectId, old: Option<ObjectId>| refs::update(n, id, old, reflog);
    let mut edits = Vec::new();
    for m in moves {
        match m {
            Move::Archive { key, id, replaces } => {
                edits.push(create(archive_ref_name(key), *id, *replaces));
                edits.push(delete(ref_name(key), *id));
            }
            Move::DeleteArchived { key, id } => edits.push(delete(archive_ref_name(key), *id)),
            Move::Restore { key, id } => {
                edits.push(create(ref_name(key), *id, None));
                edits.push(delete(archive_ref_name(key), *id));
            }
        }
    }
    if edits.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = edits
        .iter()
        .map(|e| e.name.as_bstr().to_str_lossy().into_owned())
        .collect();
    let keys: Vec<String> = moves.iter().map(|m| m.key().to_string()).collect();
    edit_racing(repo, edits, &keys, names)
}

/// How often a ref transaction that failed for a reason other than a lost
/// compare-and-swap (a ref locked or removed by a concurrent writer while
/// this one locked it) is tried again.
const RACE_RETRIES: usize = 5;

/// The lock file of `names` still there after a failed transaction that
/// started at `started` and waited out the ref lock timeout
/// (`core.filesRefLockTimeout`, when above 0): held that long, it is stale
/// or its writer is stuck, and another attempt would only wait as long
/// again. `None` lets a failure from a moment's contention be retried.
fn waited_out_a_lock(
    repo: &gix::Repository,
    started: std::time::Instant,
    names: impl IntoIterator<Item = String>,
) -> Option<StoreError> {
    let timeout = repo
        .config_snapshot()
        .integer("core.filesRefLockTimeout")
        .unwrap_or(0);
    let waited = u64::try_from(timeout)
        .is_ok_and(|ms| ms > 0 && started.elapsed() >= std::time::Duration::from_millis(ms));
    waited.then(|| lock_error(repo, names)).flatten()
}

/// The keys of `expected` whose brief is no longer the value expected.
fn changed_keys<'a>(
    repo: &gix::Repository,
    expected: impl IntoIterator<Item = (&'a String, Option<ObjectId>)>,
) -> anyhow::Result<Vec<String>> {
    let mut lost = Vec::new();
    for (key, id) in expected {
        if current_id(repo, key)? != id {
            lost.push(key.clone());
        }
    }
    Ok(lost)
}

/// Apply `edits` (which touch the briefs or archives of `keys`) as one
/// transaction. Any failure caused by a concurrent writer (a lost
/// compare-and-swap, a ref that moved or vanished while being locked, a
/// lock held for a moment) becomes [`StoreError::Conflict`] — the
/// documented "changed while writing; run again" — after a few retries; a
/// lock file that stays is named with its fix.
fn edit_racing(
    repo: &gix::Repository,
    edits: Vec<RefEdit>,
    keys: &[String],
    names: Vec<String>,
) -> Result<(), StoreError> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        let started = std::time::Instant::now();
        match refs::commit(repo, edits.clone()) {
            Ok(()) => return Ok(()),
            Err(err) if err.is_conflict() => return Err(StoreError::Conflict(keys.to_vec())),
            Err(_) if let Some(held) = waited_out_a_lock(repo, started, names.clone()) => {
                return Err(held);
            }
            Err(_) if attempt < RACE_RETRIES => {
                std::thread::sleep(std::time::Duration::from_millis(attempt as u64 * 5));
            }
            // Retried and still failing: a lock file that stays is named; a
            // ref that no longer holds the value expected was changed by
            // another writer.
            Err(err) => {
                if let Some(locked) = lock_error(repo, names) {
                    return Err(locked);
                }
                if refs::lost(repo, &edits) {
                    return Err(StoreError::Conflict(keys.to_vec()));
                }
                return Err(anyhow!("cannot update the handoff refs: {err}").into());
            }
        }
    }
}

/// Refuse a key that a redaction rule matches: a key becomes a ref name
/// and part of every history line, so it is never redacted, only refused
/// (naming the rule, never the value).
pub fn refuse_secret_key(
    key: &str,
    options: crate::brief::redact::Options,
) -> Result<(), StoreError> {
    match crate::brief::redact::key_rule(key, options) {
        Some(rule) => Err(StoreError::SecretKey {
            rule: rule.to_string(),
        }),
        None => Ok(()),
    }
}

/// Delete `key`'s ref if it still points at `expected`. The history stays.
pub fn delete(repo: &gix::Repository, key: &str, expected: ObjectId) -> Result<(), StoreError> {
    let edit = refs::delete(ref_name(key), expected);
    edit_racing(repo, vec![edit], &[key.to_string()], vec![ref_name(key)])
}

/// Build the next notes commit (each annotated commit's note gains its
/// line) on top of the current notes ref, and the CAS edit that moves the
/// ref to it.
fn notes_edit(
    repo: &gix::Repository,
    annotated: &[(ObjectId, String)],
    reflog: &str,
) -> anyhow::Result<RefEdit> {
    let parent = refdb::peeled(repo, NOTES_REF)?;
    let root_tree = match parent {
        Some(commit) => repo
            .find_commit(commit)
            .with_context(|| format!("{NOTES_REF} does not point at a commit"))?
            .tree_id()
            .context("cannot read the notes tree")?
            .detach(),
        None => ObjectId::empty_tree(repo.object_hash()),
    };
    let mut state =
        gix::note::plumbing::State::new(root_tree, repo).context("cannot read the notes tree")?;
    for (commit, line) in annotated {
        let mut note = match state
            .get(commit, repo)
            .context("cannot read a history note")?
        {
            Some(blob) => {
                repo.find_blob(blob)
                    .context("cannot read a history note")?
                    .detach()
                    .data
            }
            None => Vec::new(),
        };
        if !note.is_empty() && !note.ends_with(b"\n") {
            note.push(b'\n');
        }
        note.extend_from_slice(line.as_bytes());
        note.push(b'\n');
        let blob = repo
            .write_blob(&note)
            .context("cannot write a history note")?
            .detach();
        state
            .edit(*commit, Some(blob), repo)
            .context("cannot edit the notes tree")?;
    }
    let tree = state.write(repo).context("cannot write the notes tree")?;
    let (committer, author) = refs::signature(repo)?;
    let commit = repo
        .new_commit_as(
            committer,
            author,
            "Notes added by 'git handoff'\n",
            tree,
            parent,
        )
        .context("cannot write the notes commit")?
        .id;
    Ok(refs::update(NOTES_REF, commit, parent, reflog))
}

/// Run a step that writes objects again when it failed: `git gc` removes
/// empty object directories, and a loose object whose directory vanished
/// between its creation and its rename is written again, as git does.
pub fn again_after_gc<T>(mut step: impl FnMut() -> anyhow::Result<T>) -> anyhow::Result<T> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        match step() {
            Ok(value) => return Ok(value),
            Err(_) if attempt < 5 => continue,
            Err(err) => return Err(err),
        }
    }
}

/// If a lock file of one of these refs (or of packed-refs) exists, explain
/// how to clear it, as git does.
pub fn lock_error(
    repo: &gix::Repository,
    names: impl IntoIterator<Item = String>,
) -> Option<StoreError> {
    let common = repo.common_dir();
    names
        .into_iter()
        .map(|n| common.join(format!("{n}.lock")))
        .chain([
            common.join("packed-refs.lock"),
            common.join("reftable").join("tables.list.lock"),
        ])
        .find(|p| p.exists())
        .map(|p| StoreError::Locked {
            what: "the handoff refs".into(),
            path: p.display().to_string(),
        })
}

/// Every line of the history note attached to `commit` (the head a version
/// was written at): one compact JSON brief per line, of any key, in the
/// note's order.
pub fn history_lines(repo: &gix::Repository, commit: ObjectId) -> anyhow::Result<Vec<String>> {
    let Some(tip) = refdb::peeled(repo, NOTES_REF)? else {
        return Ok(Vec::new());
    };
    let Some(blob) = note_of(repo, tip, commit)? else {
        return Ok(Vec::new());
    };
    Ok(blob
        .lines()
        .map(|l| l.to_str_lossy().into_owned())
        .collect())
}

/// The note attached to `commit` in the notes history whose tip is
/// `notes_tip`, if it has one.
pub fn note_of(
    repo: &gix::Repository,
    notes_tip: ObjectId,
    commit: ObjectId,
) -> anyhow::Result<Option<Vec<u8>>> {
    let tree = repo
        .find_commit(notes_tip)
        .context("the notes history does not point at a commit")?
        .tree_id()
        .context("cannot read the notes tree")?
        .detach();
    let mut state =
        gix::note::plumbing::State::new(tree, repo).context("cannot read the notes tree")?;
    let Some(blob) = state.get(&commit, repo).context("cannot read the notes")? else {
        return Ok(None);
    };
    Ok(Some(
        repo.find_blob(blob)
            .context("cannot read a history note")?
            .detach()
            .data,
    ))
}

/// The outcome of [`rewrite_notes`].
#[derive(Debug, Clone, Default)]
pub struct Rewritten {
    /// The notes tip before and after, if anything changed.
    pub tips: Option<(ObjectId, ObjectId)>,
    /// How many note blobs were rewritten.
    pub blobs: usize,
    /// How many notes commits were recreated.
    pub commits: usize,
}

/// Rewrite the whole history of `refs/notes/handoffs`: every note blob of
/// every notes commit is passed to `filter` (`Some(new)` replaces it), and
/// every commit is recreated on its rewritten parents with its author,
/// committer and message kept. The ref moves with compare-and-swap. This is
/// a history rewrite: clones that fetched the old chain keep it.
pub fn rewrite_notes(
    repo: &gix::Repository,
    filter: &mut dyn FnMut(&[u8]) -> Option<Vec<u8>>,
    dry_run: bool,
) -> anyhow::Result<Rewritten> {
    use std::collections::HashMap;
    let Some(tip) = refdb::id(repo, NOTES_REF)? else {
        return Ok(Rewritten::default());
    };
    let mut blobs: HashMap<ObjectId, ObjectId> = HashMap::new();
    let mut trees: HashMap<ObjectId, ObjectId> = HashMap::new();
    let mut commits: HashMap<ObjectId, ObjectId> = HashMap::new();
    let mut out = Rewritten::default();

    // Parents before children, without recursion (chains can be long).
    let mut stack = vec![(tip, false)];
    while let Some((id, parents_done)) = stack.pop() {
        if commits.contains_key(&id) {
            continue;
        }
        let commit = repo
            .find_commit(id)
            .with_context(|| format!("{NOTES_REF} history: cannot read commit {id}"))?;
        let decoded = commit.decode().context("cannot decode a notes commit")?;
        let mut owned: gix::objs::Commit =
            decoded.to_owned().context("cannot decode a notes commit")?;
        if !parents_done {
            stack.push((id, true));
            for p in owned.parents.iter() {
                if !commits.contains_key(p) {
                    stack.push((*p, false));
                }
            }
            continue;
        }
        let new_tree = rewrite_tree(
            repo,
            owned.tree,
            filter,
            &mut blobs,
            &mut trees,
            &mut out.blobs,
            dry_run,
        )?;
        let new_parents: Vec<ObjectId> = owned.parents.iter().map(|p| commits[p]).collect();
        if new_tree == owned.tree && new_parents.iter().eq(owned.parents.iter()) {
            commits.insert(id, id);
            continue;
        }
        owned.tree = new_tree;
        owned.parents = new_parents.into();
        let new_id = if dry_run {
            // A stand-in id: only "changed or not" matters in a dry run.
            ObjectId::null(repo.object_hash())
        } else {
            repo.write_object(&owned)
                .context("cannot write a notes commit")?
                .detach()
        };
        out.commits += 1;
        commits.insert(id, new_id);
    }
    let new_tip = commits[&tip];
    if new_tip != tip {
        out.tips = Some((tip, new_tip));
        if !dry_run {
            let edit = refs::update(
                NOTES_REF,
                new_tip,
                Some(tip),
                "handoff: redact --history (rewrite)",
            );
            match refs::commit(repo, vec![edit]) {
                // No index file may keep a copy of a line the rewrite removed.
                Ok(()) => history_index::forget(repo),
                Err(err) if err.is_conflict() => {
                    return Err(anyhow!(
                        "{NOTES_REF} changed while rewriting; nothing was changed, run again"
                    ));
                }
                Err(err) => return Err(anyhow!("cannot update {NOTES_REF}: {err}")),
            }
        }
    }
    Ok(out)
}

#[allow(clippy::too_many_arguments)]
fn rewrite_tree(
    repo: &gix::Repository,
    id: ObjectId,
    filter: &mut dyn FnMut(&[u8]) -> Option<Vec<u8>>,
    blobs: &mut std::collections::HashMap<ObjectId, ObjectId>,
    trees: &mut std::collections::HashMap<ObjectId, ObjectId>,
    count: &mut usize,
    dry_run: bool,
) -> anyhow::Result<ObjectId> {
    if let Some(done) = trees.get(&id) {
        return Ok(*done);
    }
    let tree = repo.find_tree(id).context("cannot read a notes tree")?;
    let mut owned = tree
        .decode()
        .context("cannot decode a notes tree")?
        .to_owned();
    let mut changed = false;
    for entry in owned.entries.iter_mut() {
        let new = if entry.mode.is_tree() {
            rewrite_tree(repo, entry.oid, filter, blobs, trees, count, dry_run)?
        } else if entry.mode.is_blob() {
            match blobs.get(&entry.oid) {
                Some(done) => *done,
                None => {
                    let data = repo
                        .find_blob(entry.oid)
                        .context("cannot read a note")?
                        .detach()
                        .data;
                    let new = match filter(&data) {
                        Some(replacement) if replacement != data => {
                            *count += 1;
                            if dry_run {
                                ObjectId::null(repo.object_hash())
                            } else {
                                repo.write_blob(&replacement)
                                    .context("cannot write a note")?
                                    .detach()
                            }
                        }
                        _ => entry.oid,
                    };
                    blobs.insert(entry.oid, new);
                    new
                }
            }
        } else {
            entry.oid
        };
        if new != entry.oid {
            entry.oid = new;
            changed = true;
        }
    }
    let new_id = if !changed {
        id
    } else if dry_run {
        ObjectId::null(repo.object_hash())
    } else {
        repo.write_object(&owned)
            .context("cannot write a notes tree")?
            .detach()
    };
    trees.insert(id, new_id);
    Ok(new_id)
}

/// Replace `key`'s brief with `brief` (compare-and-swap against
/// `expected`): a brief sanitized in place (`redact`). It is a new version
/// like any other — its history line and its version on top of the one it
/// replaces — so teammates fast-forward to it.
pub fn replace(
    repo: &gix::Repository,
    brief: &Brief,
    expected: ObjectId,
    reflog: &str,
) -> Result<ObjectId, StoreError> {
    let update = Update {
        expected: Some(expected),
        brief: brief.clone(),
    };
    let written = write(repo, std::slice::from_ref(&update), reflog)?;
    Ok(written.ids[0].1)
}

/// Replace `key`'s archived brief with `brief`, as [`replace`] does a
/// live one: for sanitizing an archived brief in place.
pub fn replace_archived(
    repo: &gix::Repository,
    brief: &Brief,
    expected: ObjectId,
    reflog: &str,
) -> Result<ObjectId, StoreError> {
    replace_at(repo, archive_ref_name(&brief.key), brief, expected, reflog)
}

fn replace_at(
    repo: &gix::Repository,
    name: String,
    brief: &Brief,
    expected: ObjectId,
    reflog: &str,
) -> Result<ObjectId, StoreError> {
    let id = repo
        .write_blob(brief.to_pretty_json().as_bytes())
        .context("cannot write the brief blob")?
        .detach();
    let edit = refs::update(name.clone(), id, Some(expected), reflog);
    edit_racing(
        repo,
        vec![edit],
        std::slice::from_ref(&brief.key),
        vec![name],
    )?;
    Ok(id)
}
