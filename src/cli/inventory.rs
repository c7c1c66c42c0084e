//! The stored briefs as rows: what `list` prints, what a keyless
//! selection that refuses to guess lists, and the briefs waiting here that
//! the overview and the session hook name. Shared by those commands, so
//! none of them reaches into another.

use anyhow::Result;

use crate::cli::render::ListRow;
use crate::{git::repo, store, store::listcache, support::clock};

/// One row per stored brief, sorted by key, ages relative to `now`. A
/// brief is read and validated once; its summary is then taken from the
/// cache ([`listcache::Cache`]).
pub fn rows(repo: &gix::Repository, now: i64) -> Result<Vec<ListRow>> {
    let ids = store::ids(repo)?;
    let current = current_key(repo, ids.iter().map(|(k, _)| k.as_str()));
    // Read and validate what the cache lacks, save it, then move the
    // summaries into the rows.
    let mut cache = listcache::Cache::load(repo);
    let mut errors = std::collections::HashMap::new();
    for (i, (key, id)) in ids.iter().enumerate() {
        match id {
            Ok(id) if cache.get(id).is_none() => {
                match store::load(repo, &store::ref_name(key), key, *id)
                    .and_then(|stored| stored.brief())
                {
                    Ok(brief) => cache.insert(*id, brief),
                    Err(e) => {
                        errors.insert(i, crate::cli::hints::message(&e));
                    }
                }
            }
            Ok(_) => {}
            Err(e) => {
                errors.insert(i, format!("{e:#}"));
            }
        }
    }
    let stored: gix::hashtable::HashSet = ids
        .iter()
        .filter_map(|(_, id)| id.as_ref().ok().copied())
        .collect();
    cache.save(|id| stored.contains(id));
    let mut summaries = cache.into_entries();
    // Where a version listed under several keys went first.
    let mut moved: gix::hashtable::HashMap<gix::ObjectId, usize> = Default::default();
    let mut rows: Vec<ListRow> = Vec::with_capacity(ids.len());
    let mut diverged = store::remotes::diverged_keys(repo)?;
    for (i, (key, id)) in ids.into_iter().enumerate() {
        let key_of_row = key.clone();
        let mut row = ListRow {
            current: current.as_deref() == Some(key.as_str()),
            key,
            id: id.as_ref().map(|id| id.to_string()).unwrap_or_default(),
            branch: None,
            head_sha: None,
            timestamp: None,
            age_seconds: None,
            done_when: None,
            error: errors.remove(&i),
            diverged: diverged.remove(&key_of_row).unwrap_or_default(),
        };
        if let (None, Ok(id)) = (&row.error, id) {
            let summary = match summaries.remove(&id) {
                Some(s) => s,
                None => {
                    let first: &ListRow = &rows[moved[&id]];
                    listcache::Summary {
                        branch: first.branch.clone().unwrap_or_default(),
                        head_sha: first.head_sha.clone(),
                        timestamp: first.timestamp.clone().unwrap_or_default(),
                        done_when: first.done_when.clone().unwrap_or_default(),
                    }
                }
            };
            moved.entry(id).or_insert(rows.len());
            row.age_seconds = clock::parse(&summary.timestamp).map(|t| now - t);
            row.branch = Some(summary.branch);
            row.head_sha = summary.head_sha;
            row.timestamp = Some(summary.timestamp);
            row.done_when = Some(summary.done_when);
        }
        rows.push(row);
    }
    Ok(rows)
}

/// The key a keyless `resume` reads among `stored`: the key keyless
/// commands use ([`crate::cli::commands::keyless_key`]) when it has a
/// brief, else the current branch's.
fn current_key<'a>(
    repo: &gix::Repository,
    stored: impl Iterator<Item = &'a str>,
) -> Option<String> {
    let head = repo::head_state(repo).ok()?;
    let keyless = crate::cli::commands::keyless_key(repo, &head).ok();
    let branch = repo::default_key(&head).ok();
    let stored: Vec<&str> = stored.collect();
    match keyless {
        Some(k) if stored.contains(&k.as_str()) => Some(k),
        _ => branch,
    }
}

/// One row per listed brief (the archived ones, which no cache holds);
/// `current` is the key to mark. Each summary is redacted with `options`
/// as it is read: a brief archived before a rule existed (or written with
/// `--no-redact`) shows no secret.
pub fn rows_of(
    listed: Vec<store::Listed>,
    current: Option<String>,
    now: i64,
    options: crate::brief::redact::Options,
) -> Vec<ListRow> {
    let mut rows = Vec::new();
    for (key, entry) in listed {
        let mut row = ListRow {
            current: current.as_deref() == Some(key.as_str()),
            key,
            id: String::new(),
            branch: None,
            head_sha: None,
            timestamp: None,
            age_seconds: None,
            done_when: None,
            error: None,
            diverged: Vec::new(),
        };
        match entry.and_then(|stored| {
            row.id = stored.id.to_string();
            stored.brief()
        }) {
            Ok(brief) => {
                let summary = listcache::Summary::of(brief, options);
                row.age_seconds = clock::parse(&summary.timestamp).map(|t| now - t);
                row.branch = Some(summary.branch);
                row.head_sha = summary.head_sha;
                row.timestamp = Some(summary.timestamp);
                row.done_when = Some(summary.done_when);
            }
            Err(e) => row.error = Some(crate::cli::hints::message(&e)),
        }
        rows.push(row);
    }
    rows
}

/// A stored brief, as a session that does not know about it needs it:
/// where its work is and how old it is.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Waiting {
    /// The key.
    pub key: String,
    /// The branch it was written on.
    pub branch: String,
    /// The worktree that has that branch checked out, if any.
    pub worktree: Option<String>,
    /// Whether that worktree is the current one (no `cd` needed).
    pub here: bool,
    /// Seconds since it was written, when known.
    pub age_seconds: Option<i64>,
    /// Whether it is the current branch's brief.
    pub current: bool,
    /// The remotes whose version it has diverged from.
    pub diverged: Vec<String>,
}

/// Every readable stored brief, newest first, with the worktree that has
/// its branch checked out.
pub fn waiting(repo: &gix::Repository, now: i64) -> Result<Vec<Waiting>> {
    let mut rows = rows(repo, now)?;
    rows.retain(|r| r.error.is_none());
    rows.sort_by_key(|r| r.age_seconds.unwrap_or(i64::MAX));
    let checkouts = repo::checkouts(repo);
    let here = repo::worktree_info(repo).ok().map(|w| w.root);
    Ok(rows
        .into_iter()
        .map(|r| {
            let branch = r.branch.unwrap_or_default();
            let checkout = checkouts.iter().find(|c| c.branch == branch);
            Waiting {
                here: checkout.is_some_and(|c| Some(&c.root) == here.as_ref()),
                worktree: checkout.map(|c| c.root.display().to_string()),
                key: r.key,
                branch,
                age_seconds: r.age_seconds,
                current: r.current,
                diverged: r.diverged,
            }
        })
        .collect())
}
