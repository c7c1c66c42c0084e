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
    /// The git identity of the notes commit: its name (an email address
    /// is personal data, which the filter would redact anyway).
    pub by: String,
    /// Its author date (ISO 8601).
    pub at: String,
    /// Whether this clone made it.
    pub place: Place,
}

/// How many reflog entries and history commits one question reads at most.
const WALK_LIMIT: usize = 2_000;

/// The record of `version`, whose brief's head is `head` (the commit its
/// history note is attached to): `None` when no notes history here holds
/// its lineage line (a version stored without `write`, or by a version of
/// git-handoff that recorded no lineage, or one with no head).
///
/// Read without a `git` process on the files backend: this clone's reflog
/// of the history, newest first, while its entries' notes still hold the
/// line — the oldest of them is where the version came in — then down the
/// commits that hold it to the one that first did. A reftable repository
/// asks `git log` instead.
pub fn of(repo: &gix::Repository, version: ObjectId, head: Option<&str>) -> Result<Option<Record>> {
    let Some(head) = head.and_then(|h| ObjectId::from_hex(h.as_bytes()).ok()) else {
        return Ok(None);
    };
    if crate::git::refdb::Backend::of(repo) == crate::git::refdb::Backend::Reftable {
        return by_git(repo, version);
    }
    // The version's lineage line names its blob as `"brief"` (a line of
    // 0.3 as `"lineage"`).
    let needles = [
        format!("\"brief\":\"{version}\""),
        format!("\"lineage\":\"{version}\""),
    ];
    // Neighbouring entries mostly share the head's note: read each note once.
    let seen = std::cell::RefCell::new(None::<(ObjectId, bool)>);
    let holds = |commit: ObjectId| {
        let Some(blob) = note_of(repo, commit, head) else {
            return false;
        };
        if let Some((id, answer)) = *seen.borrow()
            && id == blob
        {
            return answer;
        }
        let answer = needles.iter().any(|n| holds(repo, blob, n.as_bytes()));
        *seen.borrow_mut() = Some((blob, answer));
        answer
    };
    let Ok(reference) = repo.find_reference(NOTES_REF) else {
        return Ok(None);
    };
    let mut platform = reference.log_iter();
    let mut entered: Option<(ObjectId, String)> = None;
    if let Ok(Some(entries)) = platform.rev() {
        for line in entries.take(WALK_LIMIT) {
            let Ok(line) = line else { break };
            if holds(line.new_oid) {
                entered = Some((line.new_oid, line.message.to_string()));
            } else if entered.is_some() {
                break;
            }
        }
    }
    let (start, place) = match entered {
        Some((id, message)) => (
            id,
            match fetched_from(&message) {
                Some(remote) => Place::Fetched {
                    remote: Some(remote),
                },
                None => Place::ThisClone,
            },
        ),
        None => match crate::store::history::peel(repo, NOTES_REF)? {
            Some(tip) if holds(tip) => (tip, Place::Unknown),
            _ => return Ok(None),
        },
    };
    // Down the commits that hold the line, to the first that did.
    let mut at = start;
    for _ in 0..WALK_LIMIT {
        let Ok(commit) = repo.find_commit(at) else {
            break;
        };
        match commit.parent_ids().map(|p| p.detach()).find(|p| holds(*p)) {
            Some(parent) => at = parent,
            None => break,
        }
    }
    let commit = repo.find_commit(at)?;
    let author = commit.author()?;
    Ok(Some(Record {
        by: author.name.to_string(),
        at: crate::support::clock::format(commit.time()?.seconds),
        place,
    }))
}

/// The note of `head` in the notes commit `commit`, if it has one.
fn note_of(repo: &gix::Repository, commit: ObjectId, head: ObjectId) -> Option<ObjectId> {
    let tree = repo.find_commit(commit).ok()?.tree_id().ok()?.detach();
    let mut state = gix::note::plumbing::State::new(tree, repo).ok()?;
    state.get(&head, repo).ok()?
}

/// Whether the note `blob` holds `needle`.
fn holds(repo: &gix::Repository, blob: ObjectId, needle: &[u8]) -> bool {
    use gix::bstr::ByteSlice;
    repo.find_blob(blob)
        .is_ok_and(|b| b.data.find(needle).is_some())
}

/// [`of`] through `git log` (for a reftable repository, whose reflog gix
/// cannot read): the oldest history commit whose change adds the lineage
/// line, and this clone's reflog for where it came from.
fn by_git(repo: &gix::Repository, version: ObjectId) -> Result<Option<Record>> {
    let tips = crate::store::history::notes_tips(repo)?;
    if tips.is_empty() {
        return Ok(None);
    }
    let mut args = vec![
        "log".to_string(),
        "--format=%H%x1f%an%x1f%at".to_string(),
        "-E".to_string(),
        format!("-G\"(brief|lineage)\":\"{version}\""),
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
        at: at
            .parse()
            .map(crate::support::clock::format)
            .unwrap_or_else(|_| at.to_string()),
        place: place(repo, commit),
    }))
}

/// Whether this clone made `commit`, through `git log -g`: every write
/// here moves the history to a commit of its own, so a commit that is no
/// reflog entry's new value came in through a merge or a fetch.
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
