//! Brief retention: which briefs `git handoff prune` archives (not written
//! for a while) and which archived ones it deletes. Computing only; the
//! moves are applied by [`crate::store::apply_moves`] in one transaction.

use serde::Serialize;

use crate::store::{Listed, Move};

/// What happens to one brief.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Moved to `refs/handoff-archive/<key>`.
    Archive,
    /// An archived brief, deleted.
    Delete,
    /// Left alone (see `reason`).
    Skip,
}

/// One line of the plan.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// What happens.
    pub action: Action,
    /// The key.
    pub key: String,
    /// The version (blob id).
    pub id: String,
    /// When it was written, if readable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    /// Its age in whole days, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub age_days: Option<i64>,
    /// Why it is skipped, or a note.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Row {
    /// The row of a brief that moves, dated by [`age`]: its version, when
    /// it was written and its age in seconds.
    fn moved(
        action: Action,
        key: String,
        (id, timestamp, secs): (String, String, i64),
        reason: Option<String>,
    ) -> Row {
        Row {
            action,
            key,
            id,
            timestamp: Some(timestamp),
            age_days: Some(secs.div_euclid(86_400)),
            reason,
        }
    }

    /// The row of a brief left alone, and why.
    fn skipped(key: String, id: String, reason: String) -> Row {
        Row {
            action: Action::Skip,
            key,
            id,
            timestamp: None,
            age_days: None,
            reason: Some(reason),
        }
    }
}

/// The plan: rows for people, moves for the store.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// What happens, per brief.
    pub rows: Vec<Row>,
    /// The ref moves.
    pub moves: Vec<Move>,
}

/// The age of a stored brief in seconds at `now`, or why it has none.
fn age(entry: &Listed, now: i64) -> Result<(String, String, i64), (String, String)> {
    let (_, stored) = entry;
    let stored = stored
        .as_ref()
        .map_err(|e| (String::new(), format!("unreadable: {e:#}")))?;
    let id = stored.id.to_string();
    let brief = stored
        .brief()
        .map_err(|_| (id.clone(), "unreadable brief; left alone".to_string()))?;
    let written = crate::support::clock::parse(&brief.timestamp).ok_or_else(|| {
        (
            id.clone(),
            format!("timestamp '{}' unreadable; left alone", brief.timestamp),
        )
    })?;
    Ok((id, brief.timestamp, now - written))
}

/// Plan a prune at `now`: live briefs written more than `archive_after`
/// days ago are archived (replacing an older archived version of the same
/// key), archived briefs (as they were before this run) written more than
/// `delete_after` days ago are deleted. Briefs that cannot be dated are
/// left alone.
pub fn plan(
    live: &[Listed],
    archived: &[Listed],
    now: i64,
    archive_after: i64,
    delete_after: i64,
) -> Plan {
    let mut plan = Plan::default();
    let archived_ids: std::collections::BTreeMap<&str, gix::ObjectId> = archived
        .iter()
        .filter_map(|(k, s)| s.as_ref().ok().map(|s| (k.as_str(), s.id)))
        .collect();
    let mut replaced = std::collections::BTreeSet::new();
    for entry in live {
        let key = entry.0.clone();
        match age(entry, now) {
            Ok(dated) if dated.2 > archive_after * 86_400 => {
                let replaces = archived_ids.get(key.as_str()).copied();
                if replaces.is_some() {
                    replaced.insert(key.clone());
                }
                plan.moves.push(Move::Archive {
                    key: key.clone(),
                    id: entry.1.as_ref().expect("dated").id,
                    replaces,
                });
                let reason = replaces
                    .map(|old| format!("replaces the archived version {}", old.to_hex_with_len(7)));
                plan.rows
                    .push(Row::moved(Action::Archive, key, dated, reason));
            }
            Ok(_) => {}
            Err((id, reason)) => plan.rows.push(Row::skipped(key, id, reason)),
        }
    }
    for entry in archived {
        let key = entry.0.clone();
        if replaced.contains(&key) {
            continue;
        }
        match age(entry, now) {
            Ok(dated) if dated.2 > delete_after * 86_400 => {
                plan.moves.push(Move::DeleteArchived {
                    key: key.clone(),
                    id: entry.1.as_ref().expect("dated").id,
                });
                plan.rows.push(Row::moved(Action::Delete, key, dated, None));
            }
            Ok(_) => {}
            Err((id, reason)) => {
                let reason = format!("archived: {reason}");
                plan.rows.push(Row::skipped(key, id, reason))
            }
        }
    }
    plan
}
