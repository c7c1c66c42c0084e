//! The narrative entries a write adds: one per `write` (from the brief,
//! with the commits since the key's previous version), one combined entry
//! per split. Staged under the narrative's lock before the refs move, so
//! that a stored brief always gets its entry.

use std::path::Path;

use anyhow::Result;
use serde_json::Value;

use crate::brief::Brief;
use crate::git::compose::GitFacts;
use crate::support::{clock, text::one_line};
use crate::write::checks::Checks;
use crate::write::{Composed, plan::Plan, plan::strings};
use crate::{narrative, store};

/// Lock the narrative of the worktree at `root` and stage `entry`, which
/// passes the redaction filter as a whole (it holds commit subjects too),
/// in place of the entry `amend` (see [`amendable`]) or else prepended.
/// The lock records the versions of `briefs` the write stores.
pub(crate) fn stage(
    repo: &gix::Repository,
    root: &Path,
    entry: &narrative::Entry,
    amend: Option<&str>,
    briefs: &[&Brief],
    checks: &mut Checks,
) -> Result<narrative::Pending> {
    let path = narrative::path(repo, root)?;
    let versions = briefs
        .iter()
        .map(|b| {
            let id = store::history::version_id(repo, &b.to_pretty_json())?;
            Ok((b.key.clone(), id.to_string()))
        })
        .collect::<Result<Vec<_>>>()?;
    let stored = |key: &str, id: &str| version_stored(repo, key, id);
    narrative::Pending::prepare(
        &path,
        &checks.redact_text(&entry.render()),
        amend,
        narrative::lock_wait(repo),
        &narrative::Staging {
            versions,
            stored: &stored,
        },
    )
}

/// The git facts of a write, the narrative left out of the diff summary
/// while it holds only entries writes added (a write's own entry is no
/// uncommitted work of the user's).
pub(crate) fn git_facts(repo: &gix::Repository) -> Result<GitFacts> {
    let narrative = narrative::tree_path(repo);
    GitFacts::read_skipping(repo, &|path, old, new| {
        narrative.as_deref() == Some(path)
            && match (std::str::from_utf8(old), std::str::from_utf8(new)) {
                (Ok(old), Ok(new)) => narrative::only_entries_added(old, new),
                _ => false,
            }
    })
}

/// Whether version `id` of `key` is stored: the brief holds it, or its
/// history does (another worktree wrote the key since).
fn version_stored(repo: &gix::Repository, key: &str, id: &str) -> bool {
    let Ok(id) = gix::ObjectId::from_hex(id.as_bytes()) else {
        return false;
    };
    store::current_id(repo, key).is_ok_and(|c| c == Some(id))
        || store::history::log(repo, key).is_ok_and(|log| log.index_of(&id).is_some())
}

/// The entry of a `write` of `brief`: the commits since the version it
/// replaces (`expected`, as read when the write began), then the sections
/// of `markdown` when given.
pub(crate) fn brief_entry(
    repo: &gix::Repository,
    brief: &Brief,
    expected: Option<gix::ObjectId>,
    markdown: Option<&str>,
) -> Result<narrative::Entry> {
    let previous_head = match expected {
        Some(id) => store::load(repo, &store::ref_name(&brief.key), &brief.key, id)
            .ok()
            .and_then(|stored| stored.brief().ok())
            .and_then(|b| b.state.head_sha),
        None => None,
    };
    let commits = narrative::Commits::since(repo, previous_head.as_deref());
    let mut entry = narrative::entry_from_brief(brief, None, &commits);
    if let Some(md) = markdown {
        narrative::apply_markdown(&mut entry, md)?;
    }
    Ok(entry)
}

/// The entry a `write --update` of `key` over version `previous` may
/// amend: the key's newest entry in the worktree's narrative, while it is
/// not committed (HEAD's narrative lacks it) and the version it replaces
/// was written by this same session. Committed entries are never
/// rewritten; `None` means a correcting entry is added instead.
pub(crate) fn amendable(
    repo: &gix::Repository,
    root: &Path,
    key: &str,
    previous: gix::ObjectId,
) -> Option<String> {
    let session = crate::git::sticky::current_session(repo)?;
    let written = store::lineage::records(repo, key, previous).ok()?;
    if written.last()?.session.as_deref() != Some(session.as_str()) {
        return None;
    }
    let text = std::fs::read_to_string(narrative::path(repo, root).ok()?).ok()?;
    let entry = narrative::newest_entry(&text, key)?;
    let rel = narrative::tree_path(repo)?;
    let committed = repo
        .head_commit()
        .ok()
        .and_then(|c| c.tree().ok())
        .and_then(|t| t.lookup_entry_by_path(&rel).ok().flatten())
        .and_then(|e| e.object().ok())
        .is_some_and(|blob| narrative::holds_entry(&String::from_utf8_lossy(&blob.data), &entry));
    (!committed).then_some(entry)
}

/// A short entry that corrects an earlier one, for a `write --update` that
/// may not amend it: what the update changed (the next step, done-when,
/// the next check, what it added), and where the whole brief is.
pub(crate) fn correction_entry(old: Option<&Brief>, new: &Brief) -> narrative::Entry {
    let key = narrative::inline(&new.key);
    let mut changed = String::new();
    let mut now = |what: &str, was: Option<&str>, is: &str| {
        if was != Some(is) {
            changed.push_str(&format!("- {what} now: {}\n", narrative::inline(is)));
        }
    };
    now(
        "Next step",
        old.map(|o| o.resume.resume_by.as_str()),
        &new.resume.resume_by,
    );
    now(
        "Done when",
        old.map(|o| o.resume.done_when.as_str()),
        &new.resume.done_when,
    );
    now(
        "Next check",
        old.map(|o| o.state.next_acceptance_check.as_str()),
        &new.state.next_acceptance_check,
    );
    let added = |what: &str, was: Option<&Vec<String>>, is: &[String]| -> String {
        is.iter()
            .filter(|item| !was.is_some_and(|w| w.contains(item)))
            .map(|item| format!("- {what} added: {}\n", narrative::inline(item)))
            .collect()
    };
    changed.push_str(&added(
        "Decision",
        old.map(|o| &o.state.decisions),
        &new.state.decisions,
    ));
    changed.push_str(&added(
        "Rejected path",
        old.map(|o| &o.state.rejected_paths),
        &new.state.rejected_paths,
    ));
    changed.push_str(&added(
        "Open risk",
        old.map(|o| &o.state.open_risks),
        &new.state.open_risks,
    ));
    changed.push_str(&format!(
        "- Brief: `git handoff resume {key}`; `git handoff diff {key}` shows the whole change\n"
    ));
    narrative::Entry {
        date: clock::date_of(&new.timestamp).to_string(),
        label: new.key.clone(),
        title: format!("correction: {}", new.resume.resume_by),
        sections: vec![(
            "Corrected (the entry below stays as written)".into(),
            changed,
        )],
    }
}

/// The one combined entry of a split: what was split and where, the shared
/// decisions, and each thread's pointers.
pub(crate) fn split_entry(plan: &Plan, threads: &[Composed], git: &GitFacts) -> narrative::Entry {
    let keys: Vec<&str> = threads.iter().map(|t| t.brief.key.as_str()).collect();
    let decisions = narrative::decisions_section(
        &strings(&plan.shared, &["state", "decisions"]),
        &strings(&plan.shared, &["state", "rejected_paths"]),
    );
    narrative::Entry {
        date: clock::date_of(&clock::format(git.now)).to_string(),
        label: format!("split: {}", keys.join(", ")),
        title: plan.why.clone(),
        sections: vec![
            (narrative::SECTIONS[0].into(), split_done(&keys, git)),
            ("Shared decisions (cross-cutting)".into(), decisions),
            (narrative::SECTIONS[3].into(), split_pointers(plan, threads)),
        ],
    }
}

/// "What was done" of a split: where it was split, into which threads.
fn split_done(keys: &[&str], git: &GitFacts) -> String {
    let at = match git.head.sha() {
        Some(sha) => format!("at {} on `{}`", &sha[..7], git.head.branch_label()),
        None => format!("on `{}` (no commit yet)", git.head.branch_label()),
    };
    let mut done = format!(
        "- Split the work {at} into {} threads: {}",
        keys.len(),
        keys.iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let Some(diff) = &git.diff_summary {
        done.push_str(&format!("; uncommitted: {diff}"));
    }
    done.push_str("\n- Each thread is a self-contained brief; the shared part below is copied into every one\n");
    done
}

/// The pointers of a split: each thread's next step and checks, its own
/// files, the shared risks and the files every thread reads first.
fn split_pointers(plan: &Plan, threads: &[Composed]) -> String {
    let mut pointers = String::new();
    for t in threads {
        pointers.push_str(&format!(
            "- `{key}`: {next} — next check: {check}; done when: {done} (`git handoff resume {quoted}`)\n",
            key = t.brief.key,
            quoted = crate::support::escape::shell_quote(&t.brief.key),
            next = one_line(&t.brief.resume.resume_by, 100),
            check = one_line(&t.brief.state.next_acceptance_check, 100),
            done = one_line(&t.brief.resume.done_when, 100),
        ));
    }
    // Each thread's own files, as `<key>: <path>:<lines>`.
    for t in threads {
        for path in &t.owns {
            pointers.push_str(&format!(
                "- {}: `{}`\n",
                t.brief.key,
                narrative::inline(path)
            ));
        }
    }
    for risk in strings(&plan.shared, &["state", "open_risks"]) {
        pointers.push_str(&format!("- Risk: {}\n", narrative::inline(&risk)));
    }
    let shared = plan
        .shared
        .get("files_read_first")
        .and_then(Value::as_array);
    for f in shared.into_iter().flatten() {
        if let (Some(path), Some(why)) = (
            f.get("path").and_then(Value::as_str),
            f.get("why").and_then(Value::as_str),
        ) {
            pointers.push_str(&format!(
                "- Read first (every thread): `{}` — {}\n",
                narrative::inline(path),
                narrative::inline(why)
            ));
        }
    }
    pointers
}
