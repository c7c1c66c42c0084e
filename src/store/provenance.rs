//! Where a version of a brief came from, as the history tells it rather
//! than as the brief says: the notes commit that first recorded its
//! lineage line (its author and date), and whether this clone made that
//! commit (a write here) or took it in (a fetch, or the merge a push does).
//!
//! The brief's own fields (`timestamp`, `state.worktree`) are written by
//! whoever wrote the brief; a teammate's clone can set them to anything.
//! The notes history's commits and this clone's reflog of
//! `refs/notes/handoffs` are not in the brief.

use anyhow::Result;
use gix::ObjectId;

use crate::git::cmd;
use crate::store::NOTES_REF;

/// Where the version was recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// A write in this clone made the notes commit that recorded it.
    ThisClone,
    /// The notes commit came in from another clone (a fetch, or a push
    /// that merged the remote's history); the remote when the reflog
    /// names it.
    Fetched {
        /// The remote the reflog entry names, if it names one.
        remote: Option<String>,
    },
    /// This clone's reflog of the history does not say (reflogs off or
    /// expired).
    Unknown,
}

/// Who recorded a version, when and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The git identity of the notes commit: `Name <email>`.
    pub by: String,
    /// Its author date (ISO 8601).
    pub at: String,
    /// Whether this clone made it.
    pub place: Place,
}

/// The record of `version`: `None` when no notes history here holds its
/// lineage line (a version stored without `write`, or by a version of
/// git-handoff that recorded no lineage).
pub fn of(repo: &gix::Repository, version: ObjectId) -> Result<Option<Record>> {
    let tips = crate::store::history::notes_tips(repo)?;
    if tips.is_empty() {
        return Ok(None);
    }
    // The lineage line holds the version id in full: the oldest commit
    // whose change adds it recorded the version.
    let mut args = vec![
        "log".to_string(),
        "--format=%H%x1f%an <%ae>%x1f%aI".to_string(),
        format!("-S\"lineage\":\"{version}\""),
    ];
    args.extend(tips.iter().map(ObjectId::to_string));
    args.push("--".into());
    let run = cmd::run(repo, &args, None)?;
    if !run.ok {
        return Ok(None);
    }
    let text = run.text();
    let Some(line) = text.lines().rfind(|l| !l.is_empty()) else {
        return Ok(None);
    };
    let mut fields = line.split('\x1f');
    let (Some(commit), Some(by), Some(at)) = (fields.next(), fields.next(), fields.next()) else {
        return Ok(None);
    };
    Ok(Some(Record {
        by: by.to_string(),
        at: at.to_string(),
        place: place(repo, commit),
    }))
}

/// Whether this clone made `commit`: every write here moves the history
/// to a commit of its own, so a commit that is no reflog entry's new value
/// came in through a merge or a fetch.
fn place(repo: &gix::Repository, commit: &str) -> Place {
    let Ok(run) = cmd::run(
        repo,
        &["log", "-g", "--format=%H%x1f%gs", NOTES_REF, "--"],
        None,
    ) else {
        return Place::Unknown;
    };
    let text = run.text();
    if !run.ok || text.trim().is_empty() {
        return Place::Unknown;
    }
    let entry = text
        .lines()
        .filter_map(|l| l.split_once('\x1f'))
        .find(|(id, _)| *id == commit);
    match entry {
        Some((_, message)) => match fetched_from(message) {
            Some(remote) => Place::Fetched {
                remote: Some(remote),
            },
            None => Place::ThisClone,
        },
        None => Place::Fetched { remote: None },
    }
}

/// The remote a reflog message of a fetch, a notes merge or a push names.
fn fetched_from(message: &str) -> Option<String> {
    [
        "handoff: fetch ",
        "handoff: merge notes from ",
        "handoff: push ",
    ]
    .iter()
    .find_map(|p| message.strip_prefix(p))
    .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reflog_messages_of_a_fetch_name_the_remote() {
        assert_eq!(
            fetched_from("handoff: fetch origin").as_deref(),
            Some("origin")
        );
        assert_eq!(
            fetched_from("handoff: merge notes from up").as_deref(),
            Some("up")
        );
        assert_eq!(fetched_from("handoff: write feat"), None);
    }
}
