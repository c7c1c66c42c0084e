//! Every version of a brief, read out of the history: the notes commit
//! chain of `refs/notes/handoffs` (and of each remote's
//! `refs/handoff-remotes/<remote>/notes`), plus the refs that hold a
//! version right now (the brief itself, each remote's last fetched value and
//! each base).
//!
//! The notes are walked commit by commit, through every parent, and every
//! note blob of every notes tree is read (each tree and blob once), so a
//! version stays readable after `drop` and `git gc --prune=now`: the pretty
//! blob may be gone, but its compact line lives in a note blob that a notes
//! commit keeps reachable.
//!
//! A version's id is the blob id of its stored form (the pretty JSON the
//! brief ref pointed at). It is *computed*, not stored: the compact line is
//! parsed into the typed [`Brief`] and pretty-printed again, which gives the
//! same bytes `write` stored (field order and formatting are fixed by the
//! type), and gix hashes them without writing anything.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use anyhow::{Context, Result, anyhow};
use gix::ObjectId;
use gix::bstr::ByteSlice;

use crate::brief::Brief;
use crate::store;

/// One version of a brief.
#[derive(Debug, Clone)]
pub struct Version {
    /// The version id: the blob id of its pretty JSON.
    pub id: ObjectId,
    /// The brief.
    pub brief: Brief,
    /// Its stored form (pretty JSON with a trailing newline).
    pub pretty: String,
    /// Position in the history, which orders the versions: the
    /// generation of the first notes commit that holds it, then its line
    /// number in the note. Versions found only in refs sort newest.
    seq: (u64, usize),
}

/// Where a key's versions were found: its history, plus the versions that
/// refs point at now.
#[derive(Debug, Clone, Default)]
pub struct Log {
    /// Every version, newest first: by the history's order (the notes
    /// commits' generations, then line numbers), the version the brief ref
    /// points at first. Timestamps are shown, never used to order: a clock
    /// that was behind does not move a version back.
    pub versions: Vec<Version>,
    /// The id `refs/handoffs/<key>` points at, if it exists.
    pub current: Option<ObjectId>,
    /// Remote name → the id of that remote's last fetched value.
    pub remote_tips: BTreeMap<String, ObjectId>,
}

impl Log {
    /// The index (`@{N}`) of the version with this id.
    pub fn index_of(&self, id: &ObjectId) -> Option<usize> {
        self.versions.iter().position(|v| v.id == *id)
    }

    /// The remotes whose last fetched value is `id`.
    pub fn remotes_at(&self, id: &ObjectId) -> Vec<String> {
        self.remote_tips
            .iter()
            .filter(|(_, tip)| *tip == id)
            .map(|(name, _)| name.clone())
            .collect()
    }
}

/// The version id of a brief: the blob id of its pretty JSON, computed
/// without writing the blob.
pub fn version_id(repo: &gix::Repository, pretty: &str) -> Result<ObjectId> {
    gix::objs::compute_hash(
        repo.object_hash(),
        gix::object::Kind::Blob,
        pretty.as_bytes(),
    )
    .context("cannot hash a brief")
}

/// The tips of every notes history this repository holds:
/// `refs/notes/handoffs` and each remote's (`refs/handoff-remotes/<remote>/notes`).
/// A tip that cannot be read is [`Damaged`], named with its repair.
pub fn notes_tips(repo: &gix::Repository) -> Result<Vec<ObjectId>> {
    crate::store::remotes::migrate(repo)?;
    let mut tips = Vec::new();
    if let Some(id) = checked_tip(repo, store::NOTES_REF)? {
        tips.push(id);
    }
    for name in remote_notes_refs(repo)? {
        if let Some(id) = checked_tip(repo, &name)?
            && !tips.contains(&id)
        {
            tips.push(id);
        }
    }
    Ok(tips)
}

/// The tip of the notes history `name`, checked ([`check_tip`]) and
/// peeled, the ref read once: a ref naming a commit is its own peeled
/// value (anything else is peeled as [`peel`] does).
fn checked_tip(repo: &gix::Repository, name: &str) -> Result<Option<ObjectId>> {
    let id = crate::git::refdb::id(repo, name)?;
    check_tip_at(repo, name, id)?;
    match id {
        Some(id)
            if repo
                .find_header(id)
                .is_ok_and(|h| h.kind() == gix::object::Kind::Commit) =>
        {
            Ok(Some(id))
        }
        _ => peel(repo, name),
    }
}

/// A notes history whose tip cannot be read: the ref points at a commit
/// missing from the object database, or at one whose tree is (a `git gc
/// --prune=now` that raced a write leaves that). Its repair: the local
/// history goes back to the newest whole tip its reflog holds; a remote's
/// copy is removed, and the next fetch brings it back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the history {name} is damaged: it points at {tip}, {missing}; {repair}")]
pub struct Damaged {
    /// The notes ref.
    pub name: String,
    /// What it points at.
    pub tip: ObjectId,
    /// What is missing.
    pub missing: String,
    /// The command that repairs it, in a sentence.
    pub repair: String,
}

/// Refuse a notes history whose tip cannot be read ([`Damaged`]), before
/// anything reads or extends it. Costs two object lookups.
pub fn check_tip(repo: &gix::Repository, name: &str) -> Result<()> {
    check_tip_at(repo, name, crate::git::refdb::id(repo, name)?)
}

/// [`check_tip`] of `name`, which holds `tip` (read by the caller).
fn check_tip_at(repo: &gix::Repository, name: &str, tip: Option<ObjectId>) -> Result<()> {
    let Some(tip) = tip else {
        return Ok(());
    };
    let Some(missing) = missing_part(repo, tip) else {
        return Ok(());
    };
    let repair = match crate::store::remotes::notes_ref_remote(name) {
        Some(remote) => format!(
            "`git update-ref -d {name}` removes this copy of '{remote}''s history; the next `git handoff fetch {remote}` brings it back"
        ),
        None => match whole_reflog_tip(repo, name, tip) {
            Some(previous) => format!(
                "its reflog's previous tip is whole: `git update-ref {name} {previous} {tip}` puts it back (the briefs themselves are untouched)"
            ),
            None => format!(
                "its reflog holds no whole tip: `git update-ref -d {name}` starts it afresh (the briefs themselves are untouched)"
            ),
        },
    };
    Err(Damaged {
        name: name.to_string(),
        tip,
        missing,
        repair,
    }
    .into())
}

/// What of the notes commit `tip` cannot be read, if anything: the commit
/// itself, or its tree. Not a commit at all is another check's answer.
fn missing_part(repo: &gix::Repository, tip: ObjectId) -> Option<String> {
    let Ok(header) = repo.find_header(tip) else {
        return Some("a commit missing from the object database".to_string());
    };
    if header.kind() != gix::object::Kind::Commit {
        return None;
    }
    let tree = match repo.find_commit(tip).map(|c| c.tree_id()) {
        Ok(Ok(tree)) => tree.detach(),
        _ => return Some("a commit that cannot be read".to_string()),
    };
    repo.find_header(tree)
        .is_err()
        .then(|| format!("whose tree {tree} is missing from the object database"))
}

/// The newest tip in `name`'s reflog, other than `tip`, whose commit and
/// tree can be read (files backend; a reftable's reflog is not read).
fn whole_reflog_tip(repo: &gix::Repository, name: &str, tip: ObjectId) -> Option<ObjectId> {
    let reference = repo.try_find_reference(name).ok()??;
    let mut platform = reference.log_iter();
    let entries = platform.rev().ok()??;
    entries
        .filter_map(|line| line.ok())
        .map(|line| line.new_oid)
        .filter(|id| *id != tip && !id.is_null())
        .find(|id| missing_part(repo, *id).is_none())
}

/// The names of the remotes' notes refs, configured remotes or not, found
/// without reading the refs beside them (a remote's bases, one per key):
/// loose refs by their file names, packed refs from `packed-refs`.
fn remote_notes_refs(repo: &gix::Repository) -> Result<BTreeSet<String>> {
    use crate::store::remotes::{REMOTES_PREFIX, notes_ref_remote};
    if crate::git::refdb::Backend::of(repo) != crate::git::refdb::Backend::Files {
        return Ok(crate::git::refdb::list(repo, REMOTES_PREFIX)?
            .into_iter()
            .map(|(name, _)| name)
            .filter(|name| notes_ref_remote(name).is_some())
            .collect());
    }
    let mut names = BTreeSet::new();
    let mut dirs = vec![(
        repo.common_dir().join(REMOTES_PREFIX),
        REMOTES_PREFIX.to_string(),
    )];
    while let Some((dir, prefix)) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Some(name) = entry.file_name().to_str().map(|n| format!("{prefix}{n}")) else {
                continue;
            };
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                dirs.push((entry.path(), format!("{name}/")));
            } else if notes_ref_remote(&name).is_some() {
                names.insert(name);
            }
        }
    }
    let packed = repo
        .refs
        .cached_packed_buffer()
        .context("cannot read packed-refs")?;
    if let Some(packed) = packed {
        for reference in packed
            .iter_prefixed(REMOTES_PREFIX.into())
            .context("cannot read packed-refs")?
        {
            let reference = reference.context("cannot read packed-refs")?;
            let name = reference.name.as_bstr().to_str_lossy();
            if notes_ref_remote(&name).is_some() {
                names.insert(name.into_owned());
            }
        }
    }
    Ok(names)
}

/// The object a ref points at (peeled), if the ref exists.
pub fn peel(repo: &gix::Repository, name: &str) -> Result<Option<ObjectId>> {
    crate::git::refdb::peeled(repo, name)
}

/// Every version of `key` recorded in the notes histories reachable from
/// `tips`, newest first. Read through the history index
/// ([`crate::store::history_index`]): only the key's lines are read when
/// the index of these tips exists, and only the notes commits it does not
/// cover yet are walked otherwise. A line whose key or version id does not
/// match what the index says means the index file lies: it is discarded
/// and the index rebuilt from the notes history.
pub fn collect(repo: &gix::Repository, tips: &[ObjectId], key: &str) -> Result<Vec<Version>> {
    use crate::store::history_index;
    let entries = history_index::entries_of(repo, tips, key)?;
    if let Some(versions) = versions_of(repo, &entries, key)? {
        return Ok(versions);
    }
    let index = history_index::rebuild(repo, tips)?;
    let entries: Vec<_> = index
        .entries
        .into_values()
        .filter(|e| e.key == key)
        .collect();
    versions_of(repo, &entries, key)?
        .ok_or_else(|| anyhow!("the history index of '{key}' does not match its versions"))
}

/// The versions of `key` among `entries`, newest first: lines with the
/// same version id are one version, placed where the first of them is.
/// `None` when a line is not a brief of `key` with the id the entry names.
fn versions_of(
    repo: &gix::Repository,
    entries: &[crate::store::history_index::Entry],
    key: &str,
) -> Result<Option<Vec<Version>>> {
    let mut first: HashMap<ObjectId, Version> = HashMap::new();
    for entry in entries {
        let Ok(brief) = serde_json::from_slice::<Brief>(&entry.line) else {
            return Ok(None);
        };
        let pretty = brief.to_pretty_json();
        if entry.key != key || brief.key != key || version_id(repo, &pretty)? != entry.id {
            return Ok(None);
        }
        let seq = (entry.generation, entry.index);
        match first.get(&entry.id) {
            Some(v) if v.seq <= seq => {}
            _ => {
                first.insert(
                    entry.id,
                    Version {
                        id: entry.id,
                        brief,
                        pretty,
                        seq,
                    },
                );
            }
        }
    }
    let mut versions: Vec<Version> = first.into_values().collect();
    sort_newest_first(&mut versions);
    Ok(Some(versions))
}

/// The stored form (pretty JSON) of version `id` of `key`: its blob when
/// this repository has it, else rebuilt from its line in the history,
/// which every clone that fetched the history holds whether or not it
/// ever received the blob (a teammate's earlier version, a dropped one).
pub fn stored_form(repo: &gix::Repository, key: &str, id: ObjectId) -> Result<Option<String>> {
    if let Ok(blob) = repo.find_blob(id) {
        return Ok(String::from_utf8(blob.data.to_vec()).ok());
    }
    let tips = notes_tips(repo)?;
    if tips.is_empty() {
        return Ok(None);
    }
    Ok(collect(repo, &tips, key)?
        .into_iter()
        .find(|v| v.id == id)
        .map(|v| v.pretty))
}

fn sort_newest_first(versions: &mut [Version]) {
    versions.sort_by(|a, b| newer(b, a));
}

/// `Greater` when `a` is newer than `b`: later in the history (a notes
/// commit of a higher generation, then a later line). Timestamps are
/// written by clocks that may be wrong; they never decide the order.
fn newer(a: &Version, b: &Version) -> Ordering {
    a.seq.cmp(&b.seq).then(a.id.cmp(&b.id))
}

/// Put the version the brief ref points at first (`@{0}`), the rest in
/// history order: the ref says which version is current, whatever the
/// history's shape after a merge or a `resolve`.
fn current_first(versions: &mut [Version], current: Option<ObjectId>) {
    if let Some(at) = current.and_then(|c| versions.iter().position(|v| v.id == c)) {
        versions[..=at].rotate_right(1);
    }
}

/// Every version of `key`: its history from all notes refs, plus the
/// versions the brief ref, the remotes' last fetched values and the bases
/// point at. Newest first.
pub fn log(repo: &gix::Repository, key: &str) -> Result<Log> {
    let tips = notes_tips(repo)?;
    let mut versions = collect(repo, &tips, key)?;
    let current = store::current_id(repo, key)?;
    let remote_tips = crate::store::remotes::remote_values(repo, key)?;
    let bases = crate::store::remotes::base_values(repo, key)?;
    let extra = current
        .iter()
        .chain(remote_tips.values())
        .chain(bases.values())
        .copied()
        .collect::<Vec<_>>();
    let mut added = false;
    for id in extra {
        if versions.iter().any(|v| v.id == id) {
            continue;
        }
        let Ok(blob) = repo.find_blob(id) else {
            continue;
        };
        let Ok(brief) = Brief::from_slice(&blob.data) else {
            continue;
        };
        versions.push(Version {
            id,
            brief,
            pretty: String::from_utf8_lossy(&blob.data).into_owned(),
            seq: (u64::MAX, 0),
        });
        added = true;
    }
    if added {
        sort_newest_first(&mut versions);
    }
    current_first(&mut versions, current);
    Ok(Log {
        versions,
        current,
        remote_tips,
    })
}

/// Which version a command line names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    /// The brief as stored now.
    Current,
    /// `@{N}`: the N-th entry of `log`, 0 the newest.
    Index(usize),
    /// A version id or a unique prefix of at least 4 hex digits.
    Id(String),
    /// `@REMOTE`: that remote's value as last fetched.
    Remote(String),
}

/// Split `KEY@{N}` / `KEY@REMOTE` into the key and the selector. `@REMOTE`
/// is recognised only for a configured remote, and not when a brief with
/// the whole text as its key exists; otherwise the text is the key.
pub fn parse_key_spec(repo: &gix::Repository, spec: &str) -> Result<(String, Selector)> {
    if let Some(open) = spec.rfind("@{")
        && spec.ends_with('}')
    {
        let key = &spec[..open];
        let n = &spec[open + 2..spec.len() - 1];
        let n: usize = n.parse().map_err(|_| {
            crate::refusal!("'{spec}': in KEY@{{N}}, N is a number (0 is the newest version)")
        })?;
        return Ok((key.to_string(), Selector::Index(n)));
    }
    if let Some(at) = spec.rfind('@') {
        let (key, remote) = (&spec[..at], &spec[at + 1..]);
        if !key.is_empty()
            && crate::store::remotes::is_remote(repo, remote)
            && store::current_id(repo, spec).ok().flatten().is_none()
        {
            return Ok((key.to_string(), Selector::Remote(remote.to_string())));
        }
    }
    Ok((spec.to_string(), Selector::Current))
}

/// Why a version argument names no version. The messages state the fact;
/// the command layer adds what to run next (`cli::hints::version`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    /// `@{N}` whose N is not a number.
    #[error("'{arg}': in @{{N}}, N is a number (0 is the newest version)")]
    NotANumber {
        /// The argument as given.
        arg: String,
    },
    /// `@REMOTE` naming no remote.
    #[error("'{arg}': there is no remote '{remote}'; `git remote` lists them")]
    NoSuchRemote {
        /// The argument as given.
        arg: String,
        /// The remote it names.
        remote: String,
    },
    /// An argument of no known form.
    #[error("'{arg}' names no version")]
    Unreadable {
        /// The argument as given.
        arg: String,
        /// The brief's key.
        key: String,
    },
    /// `current` when the key has no brief now.
    #[error("no brief for key '{key}'")]
    NoCurrent {
        /// The brief's key.
        key: String,
    },
    /// `@{N}` when the history holds no version of the key.
    #[error("no version of '{key}' in the history")]
    NoHistory {
        /// The brief's key.
        key: String,
    },
    /// `@{N}` past the oldest version.
    #[error("'{key}' has {count} version{}", if *count == 1 { "" } else { "s" })]
    OutOfRange {
        /// The brief's key.
        key: String,
        /// How many versions it has.
        count: usize,
    },
    /// A version id (prefix) that matches no version.
    #[error("no version {prefix} of '{key}'")]
    NoSuchId {
        /// The brief's key.
        key: String,
        /// The id prefix as given.
        prefix: String,
    },
    /// A version id prefix that matches several versions.
    #[error("version id {prefix} is ambiguous for '{key}'; give more digits")]
    Ambiguous {
        /// The brief's key.
        key: String,
        /// The id prefix as given.
        prefix: String,
    },
    /// `@REMOTE` when the last fetch brought no brief of the key.
    #[error("no brief '{key}' from remote '{remote}'")]
    NotFetched {
        /// The brief's key.
        key: String,
        /// The remote.
        remote: String,
    },
}

/// Parse a version argument of `diff` or `--version`: `@{N}`, `KEY@{N}`,
/// `@REMOTE`, `KEY@REMOTE`, `current` or a version id (prefix).
pub fn parse_selector(
    repo: &gix::Repository,
    key: &str,
    arg: &str,
) -> Result<Selector, VersionError> {
    let rest = arg
        .strip_prefix(key)
        .filter(|r| r.starts_with('@'))
        .unwrap_or(arg);
    if rest == "current" || rest == "@" {
        return Ok(Selector::Current);
    }
    if let Some(inner) = rest.strip_prefix("@{").and_then(|r| r.strip_suffix('}')) {
        let n = inner.parse().map_err(|_| VersionError::NotANumber {
            arg: arg.to_string(),
        })?;
        return Ok(Selector::Index(n));
    }
    if let Some(remote) = rest.strip_prefix('@') {
        if crate::store::remotes::is_remote(repo, remote) {
            return Ok(Selector::Remote(remote.to_string()));
        }
        return Err(VersionError::NoSuchRemote {
            arg: arg.to_string(),
            remote: remote.to_string(),
        });
    }
    if rest.len() >= 4 && rest.len() <= 64 && rest.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(Selector::Id(rest.to_ascii_lowercase()));
    }
    Err(VersionError::Unreadable {
        arg: arg.to_string(),
        key: key.to_string(),
    })
}

/// The version `selector` names in `log`, with its index when it is in the
/// log.
pub fn select<'a>(
    log: &'a Log,
    key: &str,
    selector: &Selector,
) -> Result<(Option<usize>, &'a Version), VersionError> {
    let by_id = |id: &ObjectId| log.index_of(id).map(|i| (Some(i), &log.versions[i]));
    let key = key.to_string();
    match selector {
        Selector::Current => log
            .current
            .as_ref()
            .and_then(by_id)
            .ok_or(VersionError::NoCurrent { key }),
        Selector::Index(n) => match log.versions.get(*n) {
            Some(v) => Ok((Some(*n), v)),
            None if log.versions.is_empty() => Err(VersionError::NoHistory { key }),
            None => Err(VersionError::OutOfRange {
                key,
                count: log.versions.len(),
            }),
        },
        Selector::Id(prefix) => {
            let matches: Vec<usize> = log
                .versions
                .iter()
                .enumerate()
                .filter(|(_, v)| v.id.to_string().starts_with(prefix.as_str()))
                .map(|(i, _)| i)
                .collect();
            let prefix = prefix.clone();
            match matches.as_slice() {
                [i] => Ok((Some(*i), &log.versions[*i])),
                [] => Err(VersionError::NoSuchId { key, prefix }),
                _ => Err(VersionError::Ambiguous { key, prefix }),
            }
        }
        Selector::Remote(remote) => {
            log.remote_tips
                .get(remote)
                .and_then(by_id)
                .ok_or_else(|| VersionError::NotFetched {
                    key,
                    remote: remote.clone(),
                })
        }
    }
}

/// A short, human label for a selected version: `KEY@{N}`, or the key and
/// the remote.
pub fn label(key: &str, selector: &Selector, index: Option<usize>) -> String {
    match (selector, index) {
        (Selector::Remote(remote), _) => format!("{key}@{remote}"),
        (_, Some(i)) => format!("{key}@{{{i}}}"),
        (_, None) => key.to_string(),
    }
}

/// How two versions differ.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Comparison {
    /// The fields that changed, like `resume.done_when` or `state.decisions`
    /// (the members of `resume` and `state` count one by one, the rest as
    /// a whole), in schema order.
    pub fields: Vec<String>,
    /// Lines added in the pretty JSON.
    pub insertions: usize,
    /// Lines removed from the pretty JSON.
    pub deletions: usize,
    /// The unified diff of the pretty JSON (empty when equal).
    pub unified: String,
}

/// The fields a comparison names, in the schema's order.
const FIELD_ORDER: &[&str] = &[
    "schema_version",
    "key",
    "timestamp",
    "mode",
    "resume.done_when",
    "resume.resume_by",
    "resume.prompt",
    "resume.history_pointer",
    "state.branch",
    "state.next_acceptance_check",
    "state.worktree",
    "state.head_sha",
    "state.diff_summary",
    "state.tests",
    "state.commands",
    "state.decisions",
    "state.rejected_paths",
    "state.open_risks",
    "files_read_first",
    "files_skip",
];

fn fields(brief: &Brief) -> Vec<(String, serde_json::Value)> {
    let value = serde_json::to_value(brief).expect("a brief always serializes");
    let mut out = Vec::new();
    if let serde_json::Value::Object(map) = value {
        for (name, v) in map {
            match (name.as_str(), v) {
                ("resume" | "state", serde_json::Value::Object(inner)) => {
                    out.extend(inner.into_iter().map(|(k, v)| (format!("{name}.{k}"), v)))
                }
                (_, v) => out.push((name, v)),
            }
        }
    }
    out
}

/// Compare two versions: the changed fields, the line counts and the
/// unified diff (`similar`) of their pretty JSON, headed by the labels.
pub fn compare(old: &Version, new: &Version, old_label: &str, new_label: &str) -> Comparison {
    let before: BTreeMap<String, serde_json::Value> = fields(&old.brief).into_iter().collect();
    let after = fields(&new.brief);
    let mut changed: Vec<String> = Vec::new();
    for (name, value) in &after {
        if before.get(name) != Some(value) {
            changed.push(name.clone());
        }
    }
    let after_names: HashSet<&String> = after.iter().map(|(n, _)| n).collect();
    for name in before.keys() {
        if !after_names.contains(name) {
            changed.push(name.clone());
        }
    }
    changed.sort_by_key(|name| {
        FIELD_ORDER
            .iter()
            .position(|f| f == name)
            .unwrap_or(usize::MAX)
    });
    let diff = similar::TextDiff::from_lines(old.pretty.as_str(), new.pretty.as_str());
    let (mut insertions, mut deletions) = (0, 0);
    for change in diff.iter_all_changes() {
        match change.tag() {
            similar::ChangeTag::Insert => insertions += 1,
            similar::ChangeTag::Delete => deletions += 1,
            similar::ChangeTag::Equal => {}
        }
    }
    let unified = if insertions + deletions == 0 {
        String::new()
    } else {
        diff.unified_diff()
            .context_radius(3)
            .header(old_label, new_label)
            .to_string()
    };
    Comparison {
        fields: changed,
        insertions,
        deletions,
        unified,
    }
}
